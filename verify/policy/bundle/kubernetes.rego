# svbench default Kubernetes policies.
#
# Input: one Kubernetes object (a YAML document decoded to JSON).
# Each finding: {"id", "severity" (low|medium|high), "msg"}.
# These rules cover what kube-linter's default checks leave out or only
# partly cover; ids are stable and are what rubrics compare.
package svbench.kubernetes

import rego.v1

workload_kinds := {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "ReplicationController"}

pod_spec := input.spec if input.kind == "Pod"

pod_spec := input.spec.template.spec if workload_kinds[input.kind]

pod_spec := input.spec.jobTemplate.spec.template.spec if input.kind == "CronJob"

containers contains c if {
	some field in ["containers", "initContainers", "ephemeralContainers"]
	some c in pod_spec[field]
}

obj_name := sprintf("%s %s", [input.kind, object.get(input, ["metadata", "name"], "<unnamed>")])

# --- host access --------------------------------------------------------------

runtime_sockets := {
	"/var/run/docker.sock", "/run/docker.sock",
	"/var/run/containerd/containerd.sock", "/run/containerd/containerd.sock",
	"/var/run/crio/crio.sock", "/run/crio/crio.sock",
}

sensitive_host_paths := {"/", "/etc", "/root", "/proc", "/sys", "/dev", "/boot", "/var/run", "/run", "/var/lib/kubelet", "/var/lib/docker", "/var/log"}

host_path(v) := trim_right(v.hostPath.path, "/") if v.hostPath.path != "/"

host_path(v) := "/" if v.hostPath.path == "/"

deny contains f if {
	some v in pod_spec.volumes
	runtime_sockets[host_path(v)]
	f := {"id": "K8S_DOCKER_SOCK", "severity": "high", "msg": sprintf("%s mounts the container runtime socket %s from the host (volume %q): it grants root on the node", [obj_name, v.hostPath.path, v.name])}
}

deny contains f if {
	some v in pod_spec.volumes
	p := host_path(v)
	not runtime_sockets[p]
	sensitive_path(p)
	f := {"id": "K8S_SENSITIVE_HOSTPATH", "severity": "high", "msg": sprintf("%s mounts the sensitive host path %s (volume %q)", [obj_name, v.hostPath.path, v.name])}
}

sensitive_path(p) if sensitive_host_paths[p]

sensitive_path(p) if {
	some prefix in ["/etc/", "/proc/", "/sys/", "/root/", "/boot/", "/var/lib/kubelet/"]
	startswith(p, prefix)
}

deny contains f if {
	some c in containers
	some port in c.ports
	object.get(port, "hostPort", 0) > 0
	f := {"id": "K8S_HOST_PORT", "severity": "medium", "msg": sprintf("%s: container %q binds hostPort %v, exposing it on every node interface", [obj_name, c.name, port.hostPort])}
}

# --- credentials ----------------------------------------------------------------

secret_name_pattern := `(?i)(passw(or)?d|secret|token|api[_-]?key|private[_-]?key|access[_-]?key|credential|auth)`

deny contains f if {
	some c in containers
	some e in c.env
	regex.match(secret_name_pattern, e.name)
	is_string(e.value)
	e.value != ""
	f := {"id": "K8S_SECRET_IN_ENV", "severity": "high", "msg": sprintf("%s: container %q sets %s from a literal value; reference a Secret with valueFrom.secretKeyRef", [obj_name, c.name, e.name])}
}

deny contains f if {
	pod_spec
	not pod_spec.automountServiceAccountToken == false
	f := {"id": "K8S_SA_TOKEN_AUTOMOUNT", "severity": "low", "msg": sprintf("%s does not set automountServiceAccountToken: false; the pod gets an API token it rarely needs", [obj_name])}
}

# --- privileges -----------------------------------------------------------------

deny contains f if {
	some c in containers
	c.securityContext.privileged == true
	not c.securityContext.allowPrivilegeEscalation == false
	f := {"id": "K8S_PRIVILEGED_ESCALATION", "severity": "high", "msg": sprintf("%s: container %q is privileged and does not set allowPrivilegeEscalation: false", [obj_name, c.name])}
}

deny contains f if {
	some c in containers
	some cap in c.securityContext.capabilities.add
	upper(cap) in {"SYS_ADMIN", "CAP_SYS_ADMIN", "ALL", "NET_ADMIN", "CAP_NET_ADMIN", "SYS_PTRACE", "CAP_SYS_PTRACE", "SYS_MODULE", "CAP_SYS_MODULE"}
	f := {"id": "K8S_DANGEROUS_CAPABILITY", "severity": "high", "msg": sprintf("%s: container %q adds the capability %s", [obj_name, c.name, cap])}
}

# --- images ---------------------------------------------------------------------

trusted_registries := {"docker.io", "registry.k8s.io", "gcr.io", "ghcr.io", "quay.io", "public.ecr.aws", "mcr.microsoft.com", "registry.access.redhat.com"}

# The registry is the first path element when it looks like a host (has a dot
# or a port, or is localhost); otherwise the image comes from Docker Hub.
image_registry(img) := r if {
	parts := split(img, "/")
	count(parts) > 1
	looks_like_host(parts[0])
	r := lower(parts[0])
}

image_registry(img) := "docker.io" if {
	parts := split(img, "/")
	not looks_like_host_first(parts)
}

looks_like_host_first(parts) if {
	count(parts) > 1
	looks_like_host(parts[0])
}

looks_like_host(h) if contains(h, ".")

looks_like_host(h) if contains(h, ":")

looks_like_host(h) if h == "localhost"

trusted(reg) if trusted_registries[reg]

trusted(reg) if {
	some t in trusted_registries
	endswith(reg, concat("", [".", t]))
}

deny contains f if {
	some c in containers
	is_string(c.image)
	reg := image_registry(c.image)
	not trusted(reg)
	f := {"id": "K8S_UNTRUSTED_REGISTRY", "severity": "medium", "msg": sprintf("%s: container %q pulls %s from %s, which is not a trusted registry", [obj_name, c.name, c.image, reg])}
}

# --- RBAC -----------------------------------------------------------------------

deny contains f if {
	input.kind in {"Role", "ClusterRole"}
	some rule in input.rules
	some field in ["verbs", "resources"]
	"*" in rule[field]
	f := {"id": "K8S_RBAC_WILDCARD", "severity": "high", "msg": sprintf("%s grants %s: [\"*\"]; list the %s it needs", [obj_name, field, field])}
}

# --- network --------------------------------------------------------------------

deny contains f if {
	input.kind == "NetworkPolicy"
	not "Egress" in object.get(input.spec, "policyTypes", [])
	not input.spec.egress
	f := {"id": "K8S_NETPOL_NO_EGRESS", "severity": "low", "msg": sprintf("%s restricts no egress traffic; add Egress to policyTypes", [obj_name])}
}

deny contains f if {
	input.kind == "Service"
	input.spec.type == "LoadBalancer"
	count(object.get(input.spec, "loadBalancerSourceRanges", [])) == 0
	f := {"id": "K8S_LB_NO_SOURCE_RANGES", "severity": "medium", "msg": sprintf("%s is a LoadBalancer open to any source; set spec.loadBalancerSourceRanges", [obj_name])}
}
