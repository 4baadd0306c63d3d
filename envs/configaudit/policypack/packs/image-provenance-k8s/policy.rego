# Container image provenance policy (pack image-provenance-k8s).
package svbench.policypack

import rego.v1

workload_kinds := {"Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob"}

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

v(clause, msg) := {"clause": clause, "msg": msg}

allowed_prefixes := ["registry.internal.example/", "mirror.internal.example/"]

digest_pinned(img) if regex.match(`@sha256:[a-f0-9]{64}$`, img)

# The tag is what follows the last ":" after the last "/" (a registry port is
# before the first "/").
tag(img) := t if {
	not contains(img, "@")
	parts := split(img, "/")
	last := parts[count(parts) - 1]
	contains(last, ":")
	t := split(last, ":")[1]
}

violations contains v("IMG-REGISTRY", sprintf("container %q pulls %v from an unapproved registry", [c.name, c.image])) if {
	some c in containers
	not approved(c.image)
}

approved(img) if {
	some p in allowed_prefixes
	startswith(img, p)
}

latest_or_untagged(img) if tag(img) == "latest"

latest_or_untagged(img) if {
	not digest_pinned(img)
	not tag(img)
}

violations contains v("IMG-NO-LATEST", sprintf("container %q uses %v without a version tag", [c.name, c.image])) if {
	namespace != "sandbox"
	some c in containers
	latest_or_untagged(c.image)
}

violations contains v("IMG-PROD-DIGEST", sprintf("container %q uses %v, not pinned by digest", [c.name, c.image])) if {
	namespace == "prod"
	some c in containers
	not digest_pinned(c.image)
}

violations contains v("IMG-PULL-ALWAYS", sprintf("container %q pulls a tag with imagePullPolicy %v", [c.name, object.get(c, "imagePullPolicy", "<unset>")])) if {
	some c in containers
	not digest_pinned(c.image)
	object.get(c, "imagePullPolicy", "") != "Always"
}

violations contains v("IMG-PULL-SECRET", sprintf("%s %s does not use the internal-registry pull secret", [input.kind, name])) if {
	input.kind in workload_kinds
	pod_spec
	not uses_pull_secret
}

uses_pull_secret if {
	some s in pod_spec.imagePullSecrets
	s.name == "internal-registry"
}

violations contains v("IMG-PROD-VERIFIED", sprintf("%s %s lacks the signature-verified annotation", [input.kind, name])) if {
	input.kind in workload_kinds
	namespace == "prod"
	object.get(input, ["metadata", "annotations", "images.example/signature-verified"], "") != "true"
}
