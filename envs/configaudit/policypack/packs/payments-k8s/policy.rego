# Payments platform workload policy (pack payments-k8s).
# Input: one Kubernetes object. Output: violations members
# {"clause", "msg"}; the loader fills "object" from the document.
package svbench.policypack

import rego.v1

workload_kinds := {"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"}

templated_kinds := {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job"}

pod_spec := input.spec if input.kind == "Pod"

pod_spec := input.spec.template.spec if input.kind in templated_kinds

pod_spec := input.spec.jobTemplate.spec.template.spec if input.kind == "CronJob"

containers contains c if {
	some field in ["containers", "initContainers"]
	some c in pod_spec[field]
}

namespace := object.get(input, ["metadata", "namespace"], "default")

name := object.get(input, ["metadata", "name"], "")

v(clause, msg) := {"clause": clause, "msg": msg}

# --- PAY-DIGEST -------------------------------------------------------------------

digest_pinned(img) if regex.match(`@sha256:[a-f0-9]{64}$`, img)

violations contains v("PAY-DIGEST", sprintf("container %q uses %v, which is not pinned by digest", [c.name, c.image])) if {
	namespace == "payments"
	some c in containers
	not digest_pinned(c.image)
}

# --- PAY-REGISTRY -----------------------------------------------------------------

violations contains v("PAY-REGISTRY", sprintf("container %q pulls %v from outside registry.internal.example/payments/", [c.name, c.image])) if {
	namespace == "payments"
	some c in containers
	not startswith(c.image, "registry.internal.example/payments/")
}

# --- PAY-LABELS -------------------------------------------------------------------

required_labels := ["team", "cost-center"]

violations contains v("PAY-LABELS", sprintf("%s %s has no %q label", [input.kind, name, l])) if {
	input.kind in workload_kinds
	some l in required_labels
	object.get(input, ["metadata", "labels", l], "") == ""
}

# --- PAY-NONROOT ------------------------------------------------------------------

non_root(c) if c.securityContext.runAsNonRoot == true

non_root(c) if {
	pod_spec.securityContext.runAsNonRoot == true
	object.get(c, ["securityContext", "runAsNonRoot"], null) != false
}

violations contains v("PAY-NONROOT", sprintf("container %q does not have runAsNonRoot: true in effect", [c.name])) if {
	some c in containers
	not non_root(c)
}

violations contains v("PAY-NONROOT", sprintf("container %q runs as user 0", [c.name])) if {
	some c in containers
	effective_user(c) == 0
}

effective_user(c) := object.get(c, ["securityContext", "runAsUser"], object.get(pod_spec, ["securityContext", "runAsUser"], null))

# --- PAY-SECRET-ENV ---------------------------------------------------------------

secret_name := `(?i)(passw(or)?d|secret|token|api[_-]?key|private[_-]?key|access[_-]?key|credential)`

violations contains v("PAY-SECRET-ENV", sprintf("container %q sets %s from a literal value", [c.name, e.name])) if {
	some c in containers
	some e in c.env
	regex.match(secret_name, e.name)
	is_string(e.value)
	e.value != ""
}

# --- PAY-READONLY-FS --------------------------------------------------------------

migration_job if {
	input.kind == "Job"
	endswith(name, "-migrate")
}

violations contains v("PAY-READONLY-FS", sprintf("container %q has a writable root filesystem", [c.name])) if {
	not migration_job
	some c in containers
	object.get(c, ["securityContext", "readOnlyRootFilesystem"], false) != true
}

# --- PAY-NO-ESCALATION ------------------------------------------------------------

violations contains v("PAY-NO-ESCALATION", sprintf("container %q does not set allowPrivilegeEscalation: false", [c.name])) if {
	some c in containers
	object.get(c, ["securityContext", "allowPrivilegeEscalation"], true) != false
}
