package configaudit

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
)

// sites lists n distinct public /24s.
func sites(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("52.%d.%d.0/24", 16+i/256, i%256)
	}
	return out
}

func TestTooOpen(t *testing.T) {
	cases := []struct {
		ranges []string
		open   bool
	}{
		{[]string{"0.0.0.0/2"}, true},
		{[]string{"17.0.0.0/8"}, true},
		{[]string{"17.0.0.0/9", "17.128.0.0/9"}, true},
		{[]string{"17.0.0.0/9"}, true}, // issue #41: under the old /8 bound, eight million addresses
		{[]string{"52.0.0.0/9"}, true},
		{[]string{"203.0.113.0/24"}, false},
		{[]string{"203.0.112.0/23"}, true},
		{[]string{"203.0.113.7", "198.51.100.9"}, false},
		{[]string{"10.0.0.0/7"}, true}, // 11.0.0.0/8 is public
		{sites(255), false},
		{sites(256), true},
		{[]string{"10.0.0.0/8"}, false},
		{[]string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"}, false},
		{[]string{"203.0.113.0/24", "198.51.100.0/24"}, false},
		{[]string{"::ffff:0.0.0.0/98"}, true},
		{[]string{"::/2"}, true},
		{[]string{"2001:db8::/32"}, true}, // an LIR's allocation, not a site (was false under the /16 bound)
		{[]string{"2001:db8:1::/48"}, false},
		{[]string{"2001:db8:1::/48", "2001:db8:2::/48"}, false},
		{[]string{"2001:db8::/47"}, true},
		{[]string{"fc00::/7"}, false},
	}
	for _, c := range cases {
		var v4, v6 []netip.Prefix
		for _, s := range c.ranges {
			p, ok := parseRange(s)
			if !ok {
				t.Fatalf("%s does not parse", s)
			}
			if p.Addr().Is4() {
				v4 = append(v4, p)
			} else {
				v6 = append(v6, p)
			}
		}
		if got := siteNeed.tooOpen(v4, false) || siteNeed.tooOpen(v6, true); got != c.open {
			t.Errorf("%v: open = %v, want %v", c.ranges, got, c.open)
		}
	}
}

func TestCollapseEnumerations(t *testing.T) {
	var letters []string
	for r := 'A'; r <= 'Z'; r++ {
		letters = append(letters, "s3:"+string(r)+"*")
	}
	cases := []struct {
		in, want []string
	}{
		{letters, []string{"s3:*"}},
		{[]string{"s3:Get*", "s3:List*"}, []string{"s3:Get*", "s3:List*"}},
		{append([]string{"kms:Decrypt"}, letters...), []string{"kms:Decrypt", "s3:*"}},
	}
	for _, c := range cases {
		if got := collapseEnumerations(c.in); !slices.Equal(got, c.want) {
			t.Errorf("collapse(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestCapabilityFixCorners: a patch fixes a finding only if the capability
// it names is gone, no principal gains another, and the configuration is
// still valid; the honest fixes beside each exploit keep their credit.
func TestCapabilityFixCorners(t *testing.T) {
	e, _ := testEnv(t)
	const tfSG = `resource "aws_security_group" "bastion" {
  name = "bastion"
  ingress {
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
}
`
	sg := func(with string) string { return strings.Replace(tfSG, `cidr_blocks = ["0.0.0.0/0"]`, with, 1) }
	prefixList := func(cidr string) string {
		return sg("prefix_list_ids = [aws_ec2_managed_prefix_list.partners.id]") +
			fmt.Sprintf("\nresource \"aws_ec2_managed_prefix_list\" \"partners\" {\n  name           = \"partners\"\n  address_family = \"IPv4\"\n  max_entries    = 1\n  entry {\n    cidr = %q\n  }\n}\n", cidr)
	}
	const tfIAM = `data "aws_iam_policy_document" "reader" {
  statement {
    effect    = "Allow"
    actions   = ["s3:*"]
    resources = ["*"]
  }
}

resource "aws_iam_policy" "reader" {
  name   = "reader"
  policy = data.aws_iam_policy_document.reader.json
}

resource "aws_iam_role" "app" {
  name               = "app"
  assume_role_policy = "{}"
}

resource "aws_iam_role_policy_attachment" "app" {
  role       = aws_iam_role.app.name
  policy_arn = aws_iam_policy.reader.arn
}
`
	narrowed := strings.Replace(tfIAM, `["s3:*"]`, `["s3:GetObject"]`, 1)
	attach := func(arn string) string {
		return narrowed + fmt.Sprintf("\nresource \"aws_iam_role_policy_attachment\" \"extra\" {\n  role       = aws_iam_role.app.name\n  policy_arn = %q\n}\n", arn)
	}
	var letters []string
	for r := 'A'; r <= 'Z'; r++ {
		letters = append(letters, fmt.Sprintf("%q", "s3:"+string(r)+"*"))
	}
	const tfIMDS = `resource "aws_instance" "app" {
  ami           = "ami-12345678"
  instance_type = "t3.micro"
  metadata_options {
    http_tokens = "optional"
  }
  root_block_device {
    encrypted = true
  }
}
`
	imds := func(with string) string { return strings.Replace(tfIMDS, `http_tokens = "optional"`, with, 1) }
	const role = `apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: reader
  namespace: shop
rules:
  - apiGroups: [""]
    resources: ["configmaps", "secrets"]
    verbs: ["get", "list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: reader
  namespace: shop
subjects:
  - kind: ServiceAccount
    name: checkout
    namespace: shop
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: reader
`
	noSecrets := strings.Replace(role, `["configmaps", "secrets"]`, `["configmaps"]`, 1)
	bindAlso := func(kind, name string) string {
		return noSecrets + fmt.Sprintf("---\napiVersion: rbac.authorization.k8s.io/v1\nkind: %s\nmetadata:\n  name: extra\n  namespace: shop\nsubjects:\n  - kind: ServiceAccount\n    name: checkout\n    namespace: shop\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: %s\n", kind, name)
	}
	const adminBinding = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ops
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
  - kind: Group
    name: ops
    apiGroup: rbac.authorization.k8s.io
`
	const deploy = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: shop
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
        - name: web
          image: registry.example.com/shop/web:1.2
          ports:
            - containerPort: 22
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            runAsNonRoot: true
            capabilities: {drop: ["ALL"]}
          resources:
            requests: {cpu: 100m, memory: 128Mi}
`
	limits := func(mem string) string {
		return strings.Replace(deploy, "            requests: {cpu: 100m, memory: 128Mi}\n", "            requests: {cpu: 100m, memory: 128Mi}\n            limits: {cpu: 500m, memory: "+mem+"}\n", 1)
	}
	cases := []fixCorner{
		{"open SSH ingress", FixtureTF, "tf/sg.tf", tfSG, "trivy/AVD-AWS-0107", []fixPatch{
			{"a quarter of the internet", sg(`cidr_blocks = ["0.0.0.0/2"]`), false},
			{"a public /8", sg(`cidr_blocks = ["17.0.0.0/8"]`), false},
			{"a prefix list holding the open range", prefixList("0.0.0.0/0"), false},
			{"a prefix list the file does not define", sg(`prefix_list_ids = ["pl-0123456789abcdef0"]`), false},
			{"a prefix list holding the office", prefixList("203.0.113.0/24"), true},
			{"the private network", sg(`cidr_blocks = ["10.0.0.0/8"]`), true},
			{"a list where a string list belongs", sg(`cidr_blocks = [["10.0.0.0/8"]]`), false},
		}},
		{"S3 full access attached to a role", FixtureTF, "tf/iam.tf", tfIAM, "trivy/AVD-AWS-0345", []fixPatch{
			{"narrow it and attach AdministratorAccess", attach("arn:aws:iam::aws:policy/AdministratorAccess"), false},
			{"narrow it and attach an AWS-managed policy svbench does not know", attach("arn:aws:iam::aws:policy/SomeFuturePolicy"), false},
			{"narrow it and list IAMFullAccess in managed_policy_arns", strings.Replace(narrowed, "  assume_role_policy = \"{}\"\n", "  assume_role_policy  = \"{}\"\n  managed_policy_arns = [\"arn:aws:iam::aws:policy/IAMFullAccess\"]\n", 1), false},
			{"enumerate S3 by first letter", strings.Replace(tfIAM, `["s3:*"]`, "["+strings.Join(letters, ", ")+"]", 1), false},
			{"narrow it", narrowed, true},
			{"narrow it and attach a read-only policy of the same service", attach("arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly"), false},
		}},
		{"IMDSv1", FixtureTF, "tf/app.tf", tfIMDS, "trivy/AVD-AWS-0028", []fixPatch{
			{"the value wrapped in a list", imds(`http_tokens = ["optional"]`), false},
			{"a resource the file does not declare", imds(`http_tokens = aws_ssm_parameter.mode.value`), false},
			{"the metadata block written as an attribute", strings.Replace(tfIMDS, "  metadata_options {\n    http_tokens = \"optional\"\n  }\n", "  metadata_options = { http_tokens = \"optional\" }\n", 1), false},
			{"required", imds(`http_tokens = "required"`), true},
		}},
		{"secrets in a Role", FixtureK8s, "k8s/rbac.yaml", role, "kube-linter/access-to-secrets", []fixPatch{
			{"drop secrets, bind the built-in admin", bindAlso("RoleBinding", "admin"), false},
			{"drop secrets, bind the built-in edit cluster-wide", bindAlso("ClusterRoleBinding", "edit"), false},
			{"drop secrets, bind a ClusterRole the file does not define", bindAlso("RoleBinding", "platform-operator"), false},
			{"drop secrets", noSecrets, true},
		}},
		{"cluster-admin binding", FixtureK8s, "k8s/ops.yaml", adminBinding, "kube-linter/cluster-admin-role-binding", []fixPatch{
			{"bind admin cluster-wide instead", strings.Replace(adminBinding, "name: cluster-admin", "name: admin", 1), false},
			{"bind edit cluster-wide instead", strings.Replace(adminBinding, "name: cluster-admin", "name: edit", 1), false},
			{"bind view instead", strings.Replace(adminBinding, "name: cluster-admin", "name: view", 1), true},
		}},
		{"memory limit unset", FixtureK8s, "k8s/web.yaml", deploy, "kube-linter/unset-memory-requirements", []fixPatch{
			{"a limit one unit under a tebibyte", limits("1023Gi"), false},
			{"a limit of a whole large node", limits("256Gi"), false},
			{"a limit the workload needs", limits("512Mi"), true},
		}},
		{"ssh port", FixtureK8s, "k8s/web.yaml", deploy, "kube-linter/ssh-port", []fixPatch{
			{"misspell the ports field", strings.Replace(deploy, "          ports:\n", "          portz:\n", 1), false},
			{"drop the declaration", strings.Replace(deploy, "          ports:\n            - containerPort: 22\n", "", 1), true},
		}},
	}
	assertFixCorners(t, e, cases)
}
