# Cluster node-access policy (pack node-access-k8s).
package svbench.policypack

import rego.v1

templated_kinds := {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}

pod_spec := input.spec if input.kind == "Pod"

pod_spec := input.spec.template.spec if input.kind in templated_kinds

pod_spec := input.spec.jobTemplate.spec.template.spec if input.kind == "CronJob"

containers contains c if {
	some field in ["containers", "initContainers", "ephemeralContainers"]
	some c in pod_spec[field]
}

namespace := object.get(input, ["metadata", "namespace"], "default")

name := object.get(input, ["metadata", "name"], "")

is_daemonset(ns, n) if {
	input.kind == "DaemonSet"
	namespace == ns
	name == n
}

v(clause, msg) := {"clause": clause, "msg": msg}

violations contains v("NODE-HOSTNET", sprintf("%s %s/%s uses the host network", [input.kind, namespace, name])) if {
	pod_spec.hostNetwork == true
	not is_daemonset("ingress-nginx", "ingress-nginx-controller")
}

violations contains v("NODE-PRIVILEGED", sprintf("container %q is privileged", [c.name])) if {
	some c in containers
	c.securityContext.privileged == true
	not is_daemonset("kube-system", "calico-node")
}

violations contains v("NODE-HOST-NAMESPACES", sprintf("%s %s/%s shares the host %s namespace", [input.kind, namespace, name, ns])) if {
	some field, ns in {"hostPID": "PID", "hostIPC": "IPC"}
	pod_spec[field] == true
}

violations contains v("NODE-HOSTPATH", sprintf("volume %q mounts host path %v", [vol.name, vol.hostPath.path])) if {
	not kube_system_daemonset
	some vol in pod_spec.volumes
	vol.hostPath
}

kube_system_daemonset if {
	input.kind == "DaemonSet"
	namespace == "kube-system"
}

violations contains v("NODE-PRIORITY", sprintf("DaemonSet %s does not set priorityClassName: system-node-critical", [name])) if {
	kube_system_daemonset
	object.get(pod_spec, "priorityClassName", "") != "system-node-critical"
}

violations contains v("NODE-TOLERATE-ALL", sprintf("%s %s/%s tolerates every taint", [input.kind, namespace, name])) if {
	input.kind != "DaemonSet"
	some t in pod_spec.tolerations
	t.operator == "Exists"
	object.get(t, "key", "") == ""
}
