# Capacity and ownership policy (pack capacity-k8s).
package svbench.policypack

import rego.v1

workload_kinds := {"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"}

templated_kinds := {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}

pod_template := input.spec.template if input.kind in templated_kinds

pod_template := input.spec.jobTemplate.spec.template if input.kind == "CronJob"

pod_spec := input.spec if input.kind == "Pod"

pod_spec := pod_template.spec if input.kind != "Pod"

containers contains c if {
	some field in ["containers", "initContainers"]
	some c in pod_spec[field]
}

namespace := object.get(input, ["metadata", "namespace"], "default")

name := object.get(input, ["metadata", "name"], "")

v(clause, msg) := {"clause": clause, "msg": msg}

# --- CAP-RESOURCES ----------------------------------------------------------------

batch_job if {
	input.kind in {"Job", "CronJob"}
	namespace == "batch"
}

resource_fields := [["requests", "cpu"], ["requests", "memory"], ["limits", "cpu"], ["limits", "memory"]]

violations contains v("CAP-RESOURCES", sprintf("container %q sets no %s.%s", [c.name, f[0], f[1]])) if {
	not batch_job
	some c in containers
	some f in resource_fields
	object.get(c, array.concat(["resources"], f), "") == ""
}

# --- CAP-MEMORY-RATIO -------------------------------------------------------------

violations contains v("CAP-MEMORY-RATIO", sprintf("container %q: memory limit %v is more than 4x the request %v", [c.name, lim, req])) if {
	some c in containers
	req := c.resources.requests.memory
	lim := c.resources.limits.memory
	units.parse_bytes(sprintf("%v", [lim])) > 4 * units.parse_bytes(sprintf("%v", [req]))
}

# --- CAP-OWNER-LABELS -------------------------------------------------------------

violations contains v("CAP-OWNER-LABELS", sprintf("%s %s has no %q label on its metadata", [input.kind, name, l])) if {
	input.kind in workload_kinds
	some l in ["team", "cost-center"]
	object.get(input, ["metadata", "labels", l], "") == ""
}

violations contains v("CAP-OWNER-LABELS", sprintf("%s %s has no %q label on its pod template", [input.kind, name, l])) if {
	input.kind in (workload_kinds - {"Pod"})
	some l in ["team", "cost-center"]
	object.get(pod_template, ["metadata", "labels", l], "") == ""
}

# --- CAP-PROD-REPLICAS ------------------------------------------------------------

violations contains v("CAP-PROD-REPLICAS", sprintf("%s %s runs %v replica(s) in prod", [input.kind, name, n])) if {
	input.kind in {"Deployment", "StatefulSet"}
	namespace == "prod"
	n := object.get(input, ["spec", "replicas"], 1)
	n < 2
}

# --- CAP-PROD-READINESS -----------------------------------------------------------

violations contains v("CAP-PROD-READINESS", sprintf("container %q has no readinessProbe", [c.name])) if {
	input.kind == "Deployment"
	namespace == "prod"
	some c in pod_spec.containers
	not c.readinessProbe
}

# --- CAP-ANTI-AFFINITY ------------------------------------------------------------

hostname_anti_affinity if {
	some t in pod_spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution
	t.podAffinityTerm.topologyKey == "kubernetes.io/hostname"
}

hostname_anti_affinity if {
	some t in pod_spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution
	t.topologyKey == "kubernetes.io/hostname"
}

violations contains v("CAP-ANTI-AFFINITY", sprintf("Deployment %s runs %v replicas without hostname anti-affinity", [name, input.spec.replicas])) if {
	input.kind == "Deployment"
	input.spec.replicas > 1
	not hostname_anti_affinity
}
