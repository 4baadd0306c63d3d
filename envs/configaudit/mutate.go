package configaudit

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/svbench/svbench/verify"
)

// Fixture types.
const (
	FixtureK8s = "k8s"
	FixtureTF  = "tf"
)

// Mutation is one named misconfiguration the generator injects into a secure
// baseline. Findings are the tool finding ids the misconfiguration maps to:
// the label is decided by the mutation, not by running a tool, and a test
// checks that the verifiers agree.
type Mutation struct {
	Name        string
	Fixture     string
	Description string
	Findings    []Violation
	// Conflicts names mutations that must not be combined with this one
	// because together they change what the verifiers report (a role bound
	// to cluster-admin instead of itself is no longer "accessible").
	Conflicts []string
	// k8s mutations edit the first workload's pod spec (or, for RBAC, the
	// first role); they return false when the document has nothing to mutate.
	k8s func(docs []*yaml.Node) bool
	// tf mutations rewrite the Terraform text; false when the anchor is absent.
	tf func(src string) (string, bool)
}

func v(id string, sev verify.Severity) Violation { return Violation{ID: id, Severity: sev} }

const (
	low  = verify.SeverityLow
	med  = verify.SeverityMed
	high = verify.SeverityHigh
)

// firstWorkload returns the pod spec and first container of the first
// workload document.
func firstWorkload(docs []*yaml.Node) (spec, ctr *yaml.Node) {
	for _, d := range docs {
		if s := podSpec(d); s != nil {
			if cs := containers(s, false); len(cs) > 0 {
				return s, cs[0]
			}
		}
	}
	return nil, nil
}

func onContainer(fn func(spec, ctr *yaml.Node) bool) func([]*yaml.Node) bool {
	return func(docs []*yaml.Node) bool {
		spec, ctr := firstWorkload(docs)
		if ctr == nil {
			return false
		}
		return fn(spec, ctr)
	}
}

func setCtrSC(key string, val *yaml.Node) func([]*yaml.Node) bool {
	return onContainer(func(_, c *yaml.Node) bool {
		sc := ensureMap(c, "securityContext")
		if old := mget(sc, key); old != nil && old.Value == val.Value {
			return false
		}
		mset(sc, key, val)
		return true
	})
}

func addHostPath(volName, hostPath, mountPath string) func([]*yaml.Node) bool {
	return onContainer(func(spec, c *yaml.Node) bool {
		vols := mget(spec, "volumes")
		if vols == nil {
			vols = seqNode()
			mset(spec, "volumes", vols)
		}
		for _, v := range vols.Content {
			if scalarValue(mget(v, "name")) == volName {
				return false
			}
		}
		vols.Content = append(vols.Content, mapNode("name", volName, "hostPath", mapNode("path", hostPath)))
		mounts := mget(c, "volumeMounts")
		if mounts == nil {
			mounts = seqNode()
			mset(c, "volumeMounts", mounts)
		}
		mounts.Content = append(mounts.Content, mapNode("name", volName, "mountPath", mountPath))
		return true
	})
}

func setPodBool(key string) func([]*yaml.Node) bool {
	return onContainer(func(spec, _ *yaml.Node) bool {
		if scalarValue(mget(spec, key)) == "true" {
			return false
		}
		mset(spec, key, boolNode(true))
		return true
	})
}

// k8sMutations is the Kubernetes catalogue. Ids are kube-linter's default
// checks.
var k8sMutations = []Mutation{
	{Name: "privileged", Description: "container runs privileged",
		Findings: []Violation{v("kube-linter/privileged-container", high), v("kube-linter/privilege-escalation-container", high)},
		k8s:      setCtrSC("privileged", boolNode(true))},
	{Name: "host-network", Description: "pod shares the host network namespace",
		Findings: []Violation{v("kube-linter/host-network", high)}, k8s: setPodBool("hostNetwork")},
	{Name: "host-pid", Description: "pod shares the host PID namespace",
		Findings: []Violation{v("kube-linter/host-pid", high)}, k8s: setPodBool("hostPID")},
	{Name: "host-ipc", Description: "pod shares the host IPC namespace",
		Findings: []Violation{v("kube-linter/host-ipc", high)}, k8s: setPodBool("hostIPC")},
	{Name: "root-user", Description: "container runs as root (runAsUser 0, runAsNonRoot false)",
		Findings: []Violation{v("kube-linter/run-as-non-root", med)},
		k8s: onContainer(func(spec, c *yaml.Node) bool {
			psc := mget(spec, "securityContext")
			mdel(psc, "runAsNonRoot")
			mdel(psc, "runAsUser")
			mdel(psc, "runAsGroup")
			sc := ensureMap(c, "securityContext")
			mset(sc, "runAsNonRoot", boolNode(false))
			mset(sc, "runAsUser", intNode(0))
			return true
		})},
	{Name: "latest-tag", Description: "image uses the mutable latest tag",
		Findings: []Violation{v("kube-linter/latest-tag", med)},
		k8s: onContainer(func(_, c *yaml.Node) bool {
			img := mget(c, "image")
			if img == nil || strings.HasSuffix(img.Value, ":latest") {
				return false
			}
			img.Value = imageRepo(img.Value) + ":latest"
			return true
		})},
	{Name: "missing-resources", Description: "container sets no CPU or memory requests/limits",
		Findings: []Violation{v("kube-linter/unset-cpu-requirements", med), v("kube-linter/unset-memory-requirements", med)},
		k8s:      onContainer(func(_, c *yaml.Node) bool { return mdel(c, "resources") })},
	{Name: "writable-root-fs", Description: "container root filesystem is writable",
		Findings: []Violation{v("kube-linter/no-read-only-root-fs", med)},
		k8s:      setCtrSC("readOnlyRootFilesystem", boolNode(false))},
	{Name: "privilege-escalation", Description: "allowPrivilegeEscalation is true",
		Findings: []Violation{v("kube-linter/privilege-escalation-container", high)},
		k8s:      setCtrSC("allowPrivilegeEscalation", boolNode(true))},
	{Name: "docker-socket", Description: "host docker socket mounted into the container",
		Findings: []Violation{v("kube-linter/docker-sock", high)},
		k8s:      addHostPath("docker-sock", "/var/run/docker.sock", "/var/run/docker.sock")},
	{Name: "sensitive-host-mount", Description: "host /etc mounted into the container",
		Findings: []Violation{v("kube-linter/sensitive-host-mounts", high)},
		k8s:      addHostPath("host-etc", "/etc", "/host/etc")},
	{Name: "added-capabilities", Description: "container adds NET_RAW and SYS_ADMIN and drops nothing",
		Findings: []Violation{v("kube-linter/drop-net-raw-capability", med), v("kube-linter/privilege-escalation-container", high)},
		k8s: onContainer(func(_, c *yaml.Node) bool {
			sc := ensureMap(c, "securityContext")
			mset(sc, "capabilities", mapNode("add", seqNode(strNode("NET_RAW"), strNode("SYS_ADMIN"))))
			return true
		})},
	{Name: "secret-in-env", Description: "a credential is set as a literal environment variable",
		Findings: []Violation{v("kube-linter/env-var-secret", high)},
		k8s: onContainer(func(_, c *yaml.Node) bool {
			env := mget(c, "env")
			if env == nil {
				env = seqNode()
				mset(c, "env", env)
			}
			for _, e := range env.Content {
				if scalarValue(mget(e, "name")) == "API_SECRET" {
					return false
				}
			}
			env.Content = append(env.Content, mapNode("name", "API_SECRET", "value", "sk_live_4eC39HqLyjWDarjtT1zdp7dc"))
			return true
		})},
	{Name: "ssh-port", Description: "container exposes SSH (port 22)",
		Findings: []Violation{v("kube-linter/ssh-port", med)},
		k8s: onContainer(func(_, c *yaml.Node) bool {
			ports := mget(c, "ports")
			if ports == nil {
				ports = seqNode()
				mset(c, "ports", ports)
			}
			ports.Content = append(ports.Content, mapNode("name", "ssh", "containerPort", intNode(22)))
			return true
		})},
	{Name: "rbac-wildcard", Description: "role grants every verb on every resource",
		Findings: []Violation{v("kube-linter/wildcard-in-rules", high), v("kube-linter/access-to-secrets", high)},
		// "*" already covers secrets: adding them first changes nothing.
		Conflicts: []string{"rbac-secrets-access"},
		k8s: onRole(func(rule *yaml.Node) bool {
			mset(rule, "resources", flowSeq("*"))
			mset(rule, "verbs", flowSeq("*"))
			return true
		})},
	{Name: "rbac-secrets-access", Description: "role can read secrets",
		Findings: []Violation{v("kube-linter/access-to-secrets", high)},
		k8s: onRole(func(rule *yaml.Node) bool {
			res := mget(rule, "resources")
			if res == nil || res.Kind != yaml.SequenceNode {
				return false
			}
			for _, r := range res.Content {
				if r.Value == "secrets" || r.Value == "*" {
					return false
				}
			}
			res.Content = append(res.Content, strNode("secrets"))
			return true
		})},
	{Name: "rbac-cluster-admin", Description: "binding grants cluster-admin",
		Findings:  []Violation{v("kube-linter/cluster-admin-role-binding", high)},
		Conflicts: []string{"rbac-wildcard", "rbac-secrets-access"},
		k8s: func(docs []*yaml.Node) bool {
			for _, d := range docs {
				if scalarValue(mget(d, "kind")) == "ClusterRoleBinding" {
					ref := mget(d, "roleRef")
					if ref == nil || scalarValue(mget(ref, "name")) == "cluster-admin" {
						return false
					}
					mset(ref, "name", strNode("cluster-admin"))
					return true
				}
			}
			return false
		}},
}

// onRole edits the first rule of the first Role or ClusterRole.
func onRole(fn func(rule *yaml.Node) bool) func([]*yaml.Node) bool {
	return func(docs []*yaml.Node) bool {
		for _, d := range docs {
			switch scalarValue(mget(d, "kind")) {
			case "Role", "ClusterRole":
				rules := mget(d, "rules")
				if rules == nil || rules.Kind != yaml.SequenceNode || len(rules.Content) == 0 {
					return false
				}
				return fn(rules.Content[0])
			}
		}
		return false
	}
}

func flowSeq(items ...string) *yaml.Node {
	n := seqNode()
	n.Style = yaml.FlowStyle
	for _, it := range items {
		n.Content = append(n.Content, strNode(it))
	}
	return n
}

// imageRepo strips the tag or digest from an image reference.
func imageRepo(img string) string {
	if i := strings.Index(img, "@"); i >= 0 {
		img = img[:i]
	}
	if i := strings.LastIndex(img, ":"); i > strings.LastIndex(img, "/") {
		img = img[:i]
	}
	return img
}

// replaceOnce rewrites the single occurrence of old; false if it is absent or
// ambiguous, so a mutation never lands somewhere unintended.
func replaceOnce(old, new string) func(string) (string, bool) {
	return func(src string) (string, bool) {
		if strings.Count(src, old) != 1 {
			return src, false
		}
		return strings.Replace(src, old, new, 1), true
	}
}

// replaceAll applies several single replacements, all or nothing.
func replaceAll(pairs ...string) func(string) (string, bool) {
	return func(src string) (string, bool) {
		out := src
		for i := 0; i+1 < len(pairs); i += 2 {
			var ok bool
			if out, ok = replaceOnce(pairs[i], pairs[i+1])(out); !ok {
				return src, false
			}
		}
		return out, true
	}
}

// removeBlock deletes the top-level block that starts with header (up to its
// closing brace at column 0) and the blank line after it.
func removeBlock(header string) func(string) (string, bool) {
	return func(src string) (string, bool) {
		i := strings.Index(src, header)
		if i < 0 || (i > 0 && src[i-1] != '\n') {
			return src, false
		}
		j := strings.Index(src[i:], "\n}\n")
		if j < 0 {
			return src, false
		}
		end := i + j + 3
		if end < len(src) && src[end] == '\n' {
			end++
		}
		return src[:i] + src[end:], true
	}
}

var tfMutations = []Mutation{
	{Name: "s3-public-acl", Description: "bucket ACL grants public read",
		Findings: []Violation{v("trivy/AVD-AWS-0092", high), v("trivy/AVD-AWS-0086", high), v("trivy/AVD-AWS-0091", high)},
		tf: replaceAll(`acl    = "private"`, `acl    = "public-read"`,
			"block_public_acls       = true", "block_public_acls       = false",
			"ignore_public_acls      = true", "ignore_public_acls      = false")},
	{Name: "s3-public-access-block-off", Description: "S3 public access block disabled",
		Findings: []Violation{v("trivy/AVD-AWS-0086", high), v("trivy/AVD-AWS-0087", high), v("trivy/AVD-AWS-0091", high), v("trivy/AVD-AWS-0093", high)},
		tf: replaceAll(
			"block_public_acls       = true", "block_public_acls       = false",
			"block_public_policy     = true", "block_public_policy     = false",
			"ignore_public_acls      = true", "ignore_public_acls      = false",
			"restrict_public_buckets = true", "restrict_public_buckets = false")},
	{Name: "s3-unencrypted", Description: "bucket has no server-side encryption",
		Findings: []Violation{v("trivy/AVD-AWS-0132", high)},
		tf:       removeBlock(`resource "aws_s3_bucket_server_side_encryption_configuration"`)},
	{Name: "s3-logging-disabled", Description: "bucket access logging removed",
		Findings: []Violation{v("trivy/AVD-AWS-0089", low)},
		tf:       removeBlock(`resource "aws_s3_bucket_logging"`)},
	{Name: "s3-versioning-suspended", Description: "bucket versioning suspended",
		Findings: []Violation{v("trivy/AVD-AWS-0090", med)},
		tf:       replaceOnce(`status = "Enabled"`, `status = "Suspended"`)},
	{Name: "sg-ssh-open", Description: "SSH ingress from 0.0.0.0/0",
		Findings: []Violation{v("trivy/AVD-AWS-0107", high)},
		tf: replaceOnce("to_port     = 22\n    protocol    = \"tcp\"\n    cidr_blocks = [\"10.20.0.0/16\"]",
			"to_port     = 22\n    protocol    = \"tcp\"\n    cidr_blocks = [\"0.0.0.0/0\"]")},
	{Name: "sg-rdp-open", Description: "RDP ingress from 0.0.0.0/0",
		Findings: []Violation{v("trivy/AVD-AWS-0107", high)},
		tf: replaceOnce("to_port     = 3389\n    protocol    = \"tcp\"\n    cidr_blocks = [\"10.20.0.0/16\"]",
			"to_port     = 3389\n    protocol    = \"tcp\"\n    cidr_blocks = [\"0.0.0.0/0\"]")},
	{Name: "sg-egress-open", Description: "egress to 0.0.0.0/0",
		Findings: []Violation{v("trivy/AVD-AWS-0104", high)},
		tf:       replaceOnce(`cidr_blocks = ["10.0.0.0/8"]`, `cidr_blocks = ["0.0.0.0/0"]`)},
	{Name: "iam-wildcard", Description: "IAM policy allows every S3 action on every resource",
		Findings: []Violation{v("trivy/AVD-AWS-0345", high)},
		tf: replaceAll(`actions   = ["s3:GetObject", "s3:ListBucket"]`, `actions   = ["s3:*"]`,
			`resources = ["arn:aws:s3:::acme-reports", "arn:aws:s3:::acme-reports/*"]`, `resources = ["*"]`)},
	{Name: "rds-public", Description: "database publicly accessible",
		Findings: []Violation{v("trivy/AVD-AWS-0180", high)},
		tf:       replaceOnce("publicly_accessible                 = false", "publicly_accessible                 = true")},
	{Name: "rds-unencrypted", Description: "database storage not encrypted",
		Findings: []Violation{v("trivy/AVD-AWS-0080", high)},
		tf: replaceAll("storage_encrypted                   = true", "storage_encrypted                   = false",
			"  kms_key_id                          = aws_kms_key.db.arn\n", "")},
	{Name: "rds-no-backups", Description: "automated backups disabled",
		Findings: []Violation{v("trivy/AVD-AWS-0077", med)},
		tf:       replaceOnce("backup_retention_period             = 14", "backup_retention_period             = 0")},
	{Name: "ec2-imdsv1", Description: "instance metadata service allows IMDSv1",
		Findings: []Violation{v("trivy/AVD-AWS-0028", high)},
		tf:       replaceOnce(`http_tokens   = "required"`, `http_tokens   = "optional"`)},
	{Name: "ec2-unencrypted-root", Description: "instance root volume unencrypted",
		Findings: []Violation{v("trivy/AVD-AWS-0131", high)},
		tf:       replaceOnce("volume_size = 30\n    encrypted   = true", "volume_size = 30\n    encrypted   = false")},
	{Name: "ebs-unencrypted", Description: "EBS volume unencrypted",
		Findings: []Violation{v("trivy/AVD-AWS-0026", high)},
		tf:       replaceOnce("encrypted         = true", "encrypted         = false")},
	{Name: "eks-public-endpoint", Description: "EKS API endpoint public to 0.0.0.0/0",
		Findings: []Violation{v("trivy/AVD-AWS-0040", high), v("trivy/AVD-AWS-0041", high)},
		tf: replaceAll("endpoint_public_access  = false", "endpoint_public_access  = true",
			`public_access_cidrs     = ["10.20.0.0/16"]`, `public_access_cidrs     = ["0.0.0.0/0"]`)},
	{Name: "eks-logging-disabled", Description: "EKS control plane logging disabled",
		Findings: []Violation{v("trivy/AVD-AWS-0038", med)},
		tf:       replaceOnce("  enabled_cluster_log_types = [\"api\", \"audit\", \"authenticator\", \"controllerManager\", \"scheduler\"]\n\n", "")},
	{Name: "eks-no-secrets-encryption", Description: "EKS secrets not encrypted with KMS",
		Findings: []Violation{v("trivy/AVD-AWS-0039", high)},
		tf:       replaceOnce("\n  encryption_config {\n    resources = [\"secrets\"]\n    provider {\n      key_arn = aws_kms_key.eks.arn\n    }\n  }\n", "")},
	{Name: "gcs-public", Description: "bucket readable by allUsers",
		Findings: []Violation{v("trivy/AVD-GCP-0001", high)},
		tf:       replaceOnce(`member = "group:analysts@example.com"`, `member = "allUsers"`)},
	{Name: "gcs-no-uniform-access", Description: "uniform bucket-level access disabled",
		Findings: []Violation{v("trivy/AVD-GCP-0002", med)},
		tf:       replaceOnce("uniform_bucket_level_access = true", "uniform_bucket_level_access = false")},
	{Name: "gce-public-ip", Description: "instance gets a public IP",
		Findings: []Violation{v("trivy/AVD-GCP-0031", high)},
		tf: replaceOnce("    subnetwork = \"projects/acme/regions/europe-west1/subnetworks/private\"\n",
			"    subnetwork = \"projects/acme/regions/europe-west1/subnetworks/private\"\n    access_config {}\n")},
	{Name: "gce-firewall-open", Description: "firewall ingress from 0.0.0.0/0",
		Findings: []Violation{v("trivy/AVD-GCP-0027", high), v("trivy/AVD-GCP-0073", med)},
		tf:       replaceOnce(`source_ranges = ["10.10.0.0/16"]`, `source_ranges = ["0.0.0.0/0"]`)},
	{Name: "gce-serial-port", Description: "serial port access enabled",
		Findings: []Violation{v("trivy/AVD-GCP-0032", med)},
		tf:       replaceOnce(`serial-port-enable     = "false"`, `serial-port-enable     = "true"`)},
	{Name: "gce-project-ssh-keys", Description: "project-wide SSH keys allowed",
		Findings: []Violation{v("trivy/AVD-GCP-0030", med)},
		tf:       replaceOnce(`block-project-ssh-keys = "true"`, `block-project-ssh-keys = "false"`)},
	{Name: "azure-storage-http", Description: "storage account accepts plain HTTP",
		Findings: []Violation{v("trivy/AVD-AZU-0008", high), v("trivy/AVD-AZU-0059", high)},
		tf:       replaceOnce("https_traffic_only_enabled      = true", "https_traffic_only_enabled      = false")},
	{Name: "azure-storage-old-tls", Description: "storage account allows TLS 1.0",
		Findings: []Violation{v("trivy/AVD-AZU-0011", high), v("trivy/AVD-AZU-0059", high)},
		tf:       replaceOnce(`min_tls_version                 = "TLS1_2"`, `min_tls_version                 = "TLS1_0"`)},
	{Name: "azure-container-public", Description: "blob container publicly readable",
		Findings: []Violation{v("trivy/AVD-AZU-0007", high)},
		tf:       replaceOnce(`container_access_type = "private"`, `container_access_type = "blob"`)},
	{Name: "azure-storage-network-open", Description: "storage firewall default action Allow",
		Findings: []Violation{v("trivy/AVD-AZU-0012", high)},
		tf:       replaceOnce(`default_action = "Deny"`, `default_action = "Allow"`)},
	{Name: "azure-vm-password-auth", Description: "VM allows password authentication",
		Findings: []Violation{v("trivy/AVD-AZU-0039", high)},
		tf:       replaceOnce("disable_password_authentication = true", "disable_password_authentication = false")},
	{Name: "azure-nsg-ssh-open", Description: "NSG allows SSH from any source",
		Findings: []Violation{v("trivy/AVD-AZU-0047", high), v("trivy/AVD-AZU-0050", high)},
		tf:       replaceOnce(`source_address_prefix      = "10.20.0.0/16"`, `source_address_prefix      = "*"`)},
}

func init() {
	for i := range k8sMutations {
		k8sMutations[i].Fixture = FixtureK8s
	}
	for i := range tfMutations {
		tfMutations[i].Fixture = FixtureTF
	}
}

// Mutations lists the catalogue for a fixture type, sorted by name.
func Mutations(fixture string) []Mutation {
	var src []Mutation
	switch fixture {
	case FixtureK8s:
		src = k8sMutations
	case FixtureTF:
		src = tfMutations
	}
	out := append([]Mutation(nil), src...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// MutationByName finds a catalogue entry.
func MutationByName(name string) (Mutation, bool) {
	for _, m := range append(append([]Mutation(nil), k8sMutations...), tfMutations...) {
		if m.Name == name {
			return m, true
		}
	}
	return Mutation{}, false
}

// Apply injects the mutation into a fixture; ok is false when the fixture has
// nothing the mutation can change.
func (m Mutation) Apply(content []byte) (out []byte, ok bool, err error) {
	switch m.Fixture {
	case FixtureTF:
		s, ok := m.tf(string(content))
		return []byte(s), ok, nil
	case FixtureK8s:
		docs, err := parseYAMLDocs(content)
		if err != nil {
			return nil, false, fmt.Errorf("mutation %s: %w", m.Name, err)
		}
		if !m.k8s(docs) {
			return content, false, nil
		}
		out, err := renderYAML(docs)
		return out, err == nil, err
	}
	return nil, false, fmt.Errorf("mutation %s: unknown fixture type %q", m.Name, m.Fixture)
}
