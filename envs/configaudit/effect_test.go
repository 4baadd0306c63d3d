package configaudit

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// fixCorner is an original carrying the finding id, and patches that
// either remove the capability the finding names (fixed) or keep it under
// another spelling (not fixed).
type fixCorner struct {
	name, ft, path, original, id string
	patches                      []fixPatch
}

type fixPatch struct {
	name    string
	patched string
	fixed   bool
}

// assertFixCorners scores every patch end to end through the default
// rubric and checks whether the finding counts as fixed.
func assertFixCorners(t *testing.T, e *Env, cases []fixCorner) {
	t.Helper()
	ctx := context.Background()
	for _, c := range cases {
		ex := exampleFor(t, e, c.ft, c.path, c.original)
		base, err := e.Score(ctx, ex, answerRollout(nil, map[string]any{"violations": []any{}}), "")
		if err != nil {
			t.Fatal(err)
		}
		if oracle, _ := base.Parsed["oracle_ids"].([]string); !slices.Contains(oracle, c.id) {
			t.Fatalf("%s: the original does not carry %s (oracle %v): the case tests nothing", c.name, c.id, base.Parsed["oracle_ids"])
		}
		for _, p := range c.patches {
			t.Run(c.name+"/"+p.name, func(t *testing.T) {
				diff := unifiedDiff(c.path, []byte(c.original), []byte(p.patched))
				s, err := e.Score(ctx, ex, answerRollout(nil, map[string]any{"violations": []any{}, "patch": diff}), "")
				if err != nil {
					t.Fatal(err)
				}
				fixed, _ := s.Parsed["fixed_ids"].([]string)
				if got := slices.Contains(fixed, c.id); got != p.fixed {
					t.Errorf("%s fixed = %v, want %v (fixed %v, structure %v %v, capability %v, rewordings %v)", c.id, got, p.fixed, fixed, s.Parsed["patch_structure_ok"], s.Parsed["structure_error"], s.Parsed["capability"], s.Parsed["rewordings"])
				}
			})
		}
	}
}

// TestEffectFixCorners (issue #41): each exploit a reward-maximising
// policy found is judged by its effect, beside the honest fixes of the
// same finding, which keep their credit.
func TestEffectFixCorners(t *testing.T) {
	e, _ := testEnv(t)
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
`
	actions := func(list ...string) string {
		q := make([]string, len(list))
		for i, a := range list {
			q[i] = fmt.Sprintf("%q", a)
		}
		return strings.Replace(tfIAM, `["s3:*"]`, "["+strings.Join(q, ", ")+"]", 1)
	}
	var allButB []string
	for r := 'A'; r <= 'Z'; r++ {
		if r != 'B' {
			allButB = append(allButB, "s3:"+string(r)+"*")
		}
	}
	const tfIAMJSON = `resource "aws_iam_policy" "writer" {
  name = "writer"
  policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect   = "Allow"
      Action   = ["s3:*"]
      Resource = "*"
    }]
  })
}
`
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
	imds := func(with, extra string) string {
		return strings.Replace(tfIMDS, `http_tokens = "optional"`, with, 1) + extra
	}
	tfData := func(input string) string {
		return fmt.Sprintf("\nresource \"terraform_data\" \"mode\" {\n  input = %s\n}\n", input)
	}
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
	sg := func(with, extra string) string {
		return strings.Replace(tfSG, `cidr_blocks = ["0.0.0.0/0"]`, with, 1) + extra
	}
	vpc := func(cidr string) string {
		return fmt.Sprintf("\nresource \"aws_vpc\" \"main\" {\n  cidr_block = %q\n}\n", cidr)
	}
	var many []string
	for _, s := range sites(256) {
		many = append(many, fmt.Sprintf("%q", s))
	}
	const sockPod = `apiVersion: v1
kind: Pod
metadata:
  name: builder
  namespace: ci
spec:
  containers:
    - name: builder
      image: registry.example.com/ci/builder:2.0
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        runAsNonRoot: true
        capabilities: {drop: ["ALL"]}
      resources:
        requests: {cpu: 100m, memory: 128Mi}
        limits: {cpu: 500m, memory: 256Mi}
      volumeMounts:
        - {name: host, mountPath: /host/etc}
  volumes:
    - name: host
      hostPath:
        path: /etc
`
	const claimVolume = "    - name: host\n      persistentVolumeClaim:\n        claimName: cache\n"
	hostVolume := "    - name: host\n      hostPath:\n        path: /etc\n"
	claimed := func(claimSpec, pvSpec string) string {
		return strings.Replace(sockPod, hostVolume, claimVolume, 1) +
			"---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: cache\n  namespace: ci\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests: {storage: 1Gi}\n" + claimSpec +
			"---\napiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: node-etc\n  labels: {tier: node}\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n" + pvSpec
	}
	const ephemeral = "    - name: host\n      ephemeral:\n        volumeClaimTemplate:\n          spec:\n            accessModes: [ReadWriteOnce]\n            storageClassName: manual\n            resources:\n              requests: {storage: 1Gi}\n"
	const capPod = `apiVersion: v1
kind: Pod
metadata:
  name: agent
  namespace: ops
spec:
  containers:
    - name: agent
      image: registry.example.com/ops/agent:3.1
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        runAsNonRoot: true
        capabilities:
          drop: ["ALL"]
          add: ["SYS_ADMIN"]
      resources:
        requests: {cpu: 100m, memory: 128Mi}
        limits: {cpu: 500m, memory: 256Mi}
`
	const memPod = `apiVersion: v1
kind: Pod
metadata:
  name: cache
  namespace: shop
spec:
  containers:
    - name: cache
      image: registry.example.com/shop/cache:7.2
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        runAsNonRoot: true
        capabilities: {drop: ["ALL"]}
      resources:
        requests: {cpu: 100m, memory: 128Mi}
`
	memLimit := func(limit string) string {
		return strings.Replace(memPod, "        requests: {cpu: 100m, memory: 128Mi}\n", "        requests: {cpu: 100m, memory: 128Mi}\n        limits: {memory: "+limit+"}\n", 1)
	}
	caps := func(add string) string { return strings.Replace(capPod, `add: ["SYS_ADMIN"]`, "add: "+add, 1) }
	assertFixCorners(t, e, []fixCorner{
		{"S3 full access", FixtureTF, "tf/iam.tf", tfIAM, "trivy/AVD-AWS-0345", []fixPatch{
			{"every first letter but B", actions(allButB...), false},
			{"more than half of S3 by family", actions("s3:Get*", "s3:List*", "s3:Delete*", "s3:Restore*", "s3:Replicate*"), false},
			{"write the bucket policy", actions("s3:GetObject", "s3:PutBucketPolicy"), false},
			{"attach any policy to a role", actions("s3:GetObject", "iam:AttachRolePolicy"), false},
			{"read families", actions("s3:Get*", "s3:List*", "s3:Describe*"), true},
			{"name the actions", actions("s3:GetObject", "s3:PutObject", "s3:DeleteObject"), true},
		}},
		{"S3 full access in JSON", FixtureTF, "tf/writer.tf", tfIAMJSON, "trivy/AVD-AWS-0345", []fixPatch{
			{"every first letter but B", strings.Replace(tfIAMJSON, `["s3:*"]`, `["`+strings.Join(allButB, `", "`)+`"]`, 1), false},
			{"name the actions", strings.Replace(tfIAMJSON, `["s3:*"]`, `["s3:PutObject"]`, 1), true},
		}},
		{"IMDSv1", FixtureTF, "tf/app.tf", tfIMDS, "trivy/AVD-AWS-0028", []fixPatch{
			{"the insecure value in terraform_data", imds(`http_tokens = terraform_data.mode.output`, tfData(`"optional"`)), false},
			{"terraform_data's input", imds(`http_tokens = terraform_data.mode.input`, tfData(`"optional"`)), false},
			{"a local reading terraform_data", imds(`http_tokens = local.mode`, tfData(`"optional"`)+"\nlocals {\n  mode = terraform_data.mode.output\n}\n"), false},
			{"terraform_data with a count", imds(`http_tokens = terraform_data.mode[0].output`, "\nresource \"terraform_data\" \"mode\" {\n  count = 1\n  input = \"optional\"\n}\n"), false},
			{"another resource's computed attribute", imds(`http_tokens = aws_ssm_parameter.mode.version`, "\nresource \"aws_ssm_parameter\" \"mode\" {\n  name = \"imds\"\n  type = \"String\"\n  value = \"required\"\n}\n"), false},
			{"another resource's argument", imds(`http_tokens = aws_ssm_parameter.mode.insecure_value`, "\nresource \"aws_ssm_parameter\" \"mode\" {\n  name = \"imds\"\n  type = \"String\"\n  insecure_value = \"optional\"\n}\n"), false},
			{"terraform_data holding required", imds(`http_tokens = terraform_data.mode.output`, tfData(`"required"`)), true},
			{"required", imds(`http_tokens = "required"`, ""), true},
		}},
		{"open SSH ingress", FixtureTF, "tf/sg.tf", tfSG, "trivy/AVD-AWS-0107", []fixPatch{
			{"a public /9", sg(`cidr_blocks = ["52.0.0.0/9"]`, ""), false},
			{"a public /16", sg(`cidr_blocks = ["52.95.0.0/16"]`, ""), false},
			{"256 sites", sg("cidr_blocks = ["+strings.Join(many, ", ")+"]", ""), false},
			{"the open range in terraform_data", sg(`cidr_blocks = terraform_data.from.output`, "\nresource \"terraform_data\" \"from\" {\n  input = [\"0.0.0.0/0\"]\n}\n"), false},
			{"a VPC of public space", sg(`cidr_blocks = [aws_vpc.main.cidr_block]`, vpc("52.0.0.0/9")), false},
			{"the VPC's range", sg(`cidr_blocks = [aws_vpc.main.cidr_block]`, vpc("10.20.0.0/16")), true},
			{"the office range in terraform_data", sg(`cidr_blocks = terraform_data.from.output`, "\nresource \"terraform_data\" \"from\" {\n  input = [\"203.0.113.0/24\"]\n}\n"), true},
			{"two office hosts", sg(`cidr_blocks = ["203.0.113.7/32", "198.51.100.9/32"]`, ""), true},
		}},
		{"host /etc", FixtureK8s, "k8s/builder.yaml", sockPod, "kube-linter/sensitive-host-mounts", []fixPatch{
			{"a claim bound by volumeName", claimed("  storageClassName: manual\n  volumeName: node-etc\n", "  storageClassName: manual\n  hostPath: {path: /etc}\n"), false},
			{"a claim bound by storage class", claimed("  storageClassName: manual\n", "  storageClassName: manual\n  hostPath: {path: /etc}\n"), false},
			{"a claim without a class", claimed("", "  hostPath: {path: /etc}\n"), false},
			{"a volume reserved by claimRef", claimed("  storageClassName: other\n", "  claimRef: {name: cache, namespace: ci}\n  hostPath: {path: /etc}\n"), false},
			{"a claim selecting the volume's labels", claimed("  storageClassName: manual\n  selector: {matchLabels: {tier: node}}\n", "  storageClassName: manual\n  hostPath: {path: /etc}\n"), false},
			{"a local volume", claimed("  storageClassName: manual\n", "  storageClassName: manual\n  local: {path: /etc}\n  nodeAffinity:\n    required:\n      nodeSelectorTerms:\n        - matchExpressions: [{key: kubernetes.io/hostname, operator: In, values: [node-1]}]\n"), false},
			{"an ephemeral claim", strings.Replace(sockPod, hostVolume, ephemeral, 1) + "---\napiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: node-etc\nspec:\n  capacity: {storage: 1Gi}\n  accessModes: [ReadWriteOnce]\n  storageClassName: manual\n  hostPath: {path: /etc}\n", false},
			{"a claim of another class", claimed("  storageClassName: fast\n", "  storageClassName: manual\n  hostPath: {path: /etc}\n"), true},
			{"a claim whose selector excludes the volume", claimed("  storageClassName: manual\n  selector: {matchLabels: {tier: data}}\n", "  storageClassName: manual\n  hostPath: {path: /etc}\n"), true},
			{"a volume reserved for another claim", claimed("", "  claimRef: {name: other, namespace: ci}\n  hostPath: {path: /etc}\n"), true},
			{"an emptyDir", strings.Replace(sockPod, hostVolume, "    - name: host\n      emptyDir: {}\n", 1), true},
		}},
		{"memory limit unset", FixtureK8s, "k8s/cache.yaml", memPod, "kube-linter/unset-memory-requirements", []fixPatch{
			{"a limit just under a node beside a small request", memLimit("255Gi"), false},
			{"64 times the request", memLimit("8Gi"), false},
			{"56 times the request", memLimit("7Gi"), true},
			{"twice the request", memLimit("256Mi"), true},
		}},
		{"SYS_ADMIN", FixtureK8s, "k8s/agent.yaml", capPod, "kube-linter/privilege-escalation-container", []fixPatch{
			{"DAC_READ_SEARCH instead", caps(`["DAC_READ_SEARCH"]`), false},
			{"SYS_RAWIO instead", caps(`["SYS_RAWIO"]`), false},
			{"BPF instead", caps(`["BPF"]`), false},
			{"CAP_SYS_MODULE instead", caps(`["CAP_SYS_MODULE"]`), false},
			{"SYS_PTRACE instead", caps(`["SYS_PTRACE"]`), false},
			{"ALL instead", caps(`["ALL"]`), false},
			{"NET_BIND_SERVICE instead", caps(`["NET_BIND_SERVICE"]`), true},
			{"nothing added", caps(`[]`), true},
		}},
	})
}

// TestNeedOfOriginal: the original's own public ranges set the unit a
// patch may use; a block as wide as an allocation never does.
func TestNeedOfOriginal(t *testing.T) {
	for _, c := range []struct {
		original string
		patched  []string
		open     bool
	}{
		{`cidr_blocks = ["10.0.0.0/8"]`, []string{"203.0.112.0/20"}, true},
		{`cidr_blocks = ["198.51.96.0/20"]`, []string{"203.0.112.0/20"}, false},
		{`cidr_blocks = ["198.51.96.0/20"]`, []string{"203.0.96.0/19"}, true},
		{`cidr_blocks = ["17.0.0.0/8"]`, []string{"52.0.0.0/9"}, true},
		{`cidr_blocks = ["0.0.0.0/0"]`, []string{"52.0.0.0/9"}, true},
	} {
		f, diags := hclwrite.ParseConfig([]byte("resource \"aws_security_group\" \"a\" {\n  ingress {\n    "+c.original+"\n  }\n}\n"), "o.tf", hcl.InitialPos)
		if diags.HasErrors() {
			t.Fatal(diags)
		}
		attrs := map[string]tfAttr{}
		collectTFAttrs(f.Body(), "", tfEvalContext(f, tfFunctions()), attrs, nil)
		var ps []netip.Prefix
		for _, s := range c.patched {
			ps = append(ps, netip.MustParsePrefix(s))
		}
		if got := needOf(attrs).tooOpen(ps, false); got != c.open {
			t.Errorf("original %s, patched %v: open = %v, want %v", c.original, c.patched, got, c.open)
		}
	}
}
