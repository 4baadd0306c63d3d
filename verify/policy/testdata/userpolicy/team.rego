package svbench.kubernetes

import rego.v1

deny contains f if {
	input.kind == "Deployment"
	not input.metadata.labels.team
	f := {"id": "TEAM_LABEL", "severity": "low", "msg": sprintf("%s has no team label", [input.metadata.name])}
}
