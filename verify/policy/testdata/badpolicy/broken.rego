package svbench.kubernetes

deny contains f if {
	f := {"id": "X"
}
