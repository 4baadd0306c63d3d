package configaudit

import (
	"fmt"
	"strings"
	"testing"
)

// Corners of the semantic re-verification the mini set lacks: each case is
// an original, the finding it carries, and patches that either rewrite the
// meaning (fixed) or only the words (not fixed). Scored end to end through
// the default rubric.
func TestSemanticFixCorners(t *testing.T) {
	e, _ := testEnv(t)
	const deploy = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: shell
  namespace: ops
spec:
  selector:
    matchLabels: {app: shell}
  template:
    metadata:
      labels: {app: shell}
    spec:
      containers:
        - name: shell
          image: %s
          ports:
            - containerPort: 22
          securityContext:
            allowPrivilegeEscalation: false
            readOnlyRootFilesystem: true
            runAsNonRoot: true
            capabilities: {drop: ["ALL"]}
          resources:
            requests: {cpu: 100m, memory: 128Mi}
            limits: {cpu: 500m, memory: 256Mi}
%s`
	sshd := fmt.Sprintf(deploy, "registry.example.com/ops/openssh-server:9.7", "")
	web := fmt.Sprintf(deploy, "registry.example.com/ops/web:1.2", "")
	dropPort := func(s string) string {
		return strings.Replace(s, "          ports:\n            - containerPort: 22\n", "", 1)
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
        - {name: sock, mountPath: /var/run/docker.sock}
  volumes:
    - name: sock
      hostPath:
        path: /var/run/docker.sock
`
	const secretPod = `apiVersion: v1
kind: Pod
metadata:
  name: api
  namespace: app
spec:
  containers:
    - name: api
      image: registry.example.com/app/api:4.1
      env:
        - name: DB_PASSWORD
          value: hunter2hunter2
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        runAsNonRoot: true
        capabilities: {drop: ["ALL"]}
      resources:
        requests: {cpu: 100m, memory: 128Mi}
        limits: {cpu: 500m, memory: 256Mi}
`
	const binding = `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: ops-admins
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
  - kind: Group
    name: ops
    apiGroup: rbac.authorization.k8s.io
`
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
	const tfIMDS = `variable "tokens" {
  default = "optional"
}

resource "aws_instance" "app" {
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
	const tfTwoRules = `resource "aws_security_group" "edge" {
  name = "edge"
  ingress {
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = ["10.0.0.0/8"]
  }
  ingress {
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = ["0.0.0.0/0"]
  }
}
`
	swapped := `resource "aws_security_group" "edge" {
  name = "edge"
  ingress {
    from_port   = 22
    to_port     = 22
    protocol    = "tcp"
    cidr_blocks = var.ssh_from
  }
  ingress {
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = ["10.0.0.0/8"]
  }
}

variable "ssh_from" {}
`
	// The open ingress split over four blocks, or over rule resources
	// attached to the group, a quarter of the address space each: no rule
	// is open alone, all four are together.
	quarters := []string{"0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/2", "192.0.0.0/2"}
	var blocks, rules strings.Builder
	for i, q := range quarters {
		fmt.Fprintf(&blocks, "  ingress {\n    from_port   = 22\n    to_port     = 22\n    protocol    = \"tcp\"\n    cidr_blocks = [%q]\n  }\n", q)
		fmt.Fprintf(&rules, "\nresource \"aws_security_group_rule\" \"ssh%d\" {\n  type              = \"ingress\"\n  security_group_id = aws_security_group.bastion.id\n  from_port         = 22\n  to_port           = 22\n  protocol          = \"tcp\"\n  cidr_blocks       = [%q]\n}\n", i, q)
	}
	inlineQuarters := strings.Replace(tfSG, "  ingress {\n    from_port   = 22\n    to_port     = 22\n    protocol    = \"tcp\"\n    cidr_blocks = [\"0.0.0.0/0\"]\n  }\n", blocks.String(), 1)
	ruleQuarters := strings.Replace(tfSG, `["0.0.0.0/0"]`, `[`+fmt.Sprintf("%q", quarters[0])+`]`, 1) + rules.String()
	twoOffices := strings.Replace(tfSG, "    cidr_blocks = [\"0.0.0.0/0\"]\n  }\n", "    cidr_blocks = [\"203.0.113.0/24\"]\n  }\n  ingress {\n    from_port   = 22\n    to_port     = 22\n    protocol    = \"tcp\"\n    cidr_blocks = [\"198.51.100.0/24\"]\n  }\n", 1)
	const tfIAM = `data "aws_iam_policy_document" "reader" {
  statement {
    sid       = "Read"
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
	iamActions := func(list string) string { return strings.Replace(tfIAM, `["s3:*"]`, list, 1) }
	narrowDeny := strings.Replace(tfIAM, "    resources = [\"*\"]\n  }\n", "    resources = [\"*\"]\n  }\n  statement {\n    effect    = \"Deny\"\n    actions   = [\"s3:*\"]\n    resources = [\"arn:aws:s3:::no-such-bucket\"]\n  }\n", 1)
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
	cases := []fixCorner{
		{"ssh server", FixtureK8s, "k8s/shell.yaml", sshd, "kube-linter/ssh-port", []fixPatch{
			{"drop the declaration, sshd still runs", dropPort(sshd), false},
		}},
		{"ssh port on a web server", FixtureK8s, "k8s/web.yaml", web, "kube-linter/ssh-port", []fixPatch{
			{"drop the stray declaration", dropPort(web), true},
		}},
		{"docker socket", FixtureK8s, "k8s/builder.yaml", sockPod, "kube-linter/docker-sock", []fixPatch{
			{"mount its directory", strings.Replace(sockPod, "path: /var/run/docker.sock", "path: /var/run", 1), false},
			{"reach it through /proc/1/root", strings.Replace(sockPod, "path: /var/run/docker.sock", "path: /proc/1/root/var/run/docker.sock", 1), false},
			{"spell it through /run", strings.Replace(sockPod, "path: /var/run/docker.sock", "path: /run//docker.sock", 1), false},
			{"hide the path behind an alias", strings.Replace(strings.Replace(sockPod, "path: /var/run/docker.sock", "path: *sock", 1), "  name: builder\n", "  name: builder\n  annotations:\n    note: &sock /var/run/docker.sock\n", 1), false},
			{"remove the volume", strings.Replace(strings.Replace(sockPod, "      volumeMounts:\n        - {name: sock, mountPath: /var/run/docker.sock}\n", "", 1), "  volumes:\n    - name: sock\n      hostPath:\n        path: /var/run/docker.sock\n", "", 1), true},
		}},
		{"secret in env", FixtureK8s, "k8s/api.yaml", secretPod, "opa/K8S_SECRET_IN_ENV", []fixPatch{
			{"move it to a ConfigMap in the same file", strings.Replace(secretPod, "          value: hunter2hunter2\n", "          valueFrom:\n            configMapKeyRef: {name: api-config, key: pw}\n", 1) + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: api-config\n  namespace: app\ndata:\n  pw: hunter2hunter2\n", false},
			{"read it from a Secret", strings.Replace(secretPod, "          value: hunter2hunter2\n", "          valueFrom:\n            secretKeyRef: {name: api-secrets, key: db_password}\n", 1), true},
		}},
		{"cluster-admin binding", FixtureK8s, "k8s/rbac.yaml", binding, "kube-linter/cluster-admin-role-binding", []fixPatch{
			{"aggregate every role with an empty selector", strings.Replace(binding, "name: cluster-admin", "name: everything", 1) + "---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: everything\naggregationRule:\n  clusterRoleSelectors:\n    - {}\nrules: []\n", false},
			{"bind view instead", strings.Replace(binding, "name: cluster-admin", "name: view", 1), true},
		}},
		{"open SSH ingress", FixtureTF, "tf/sg.tf", tfSG, "trivy/AVD-AWS-0107", []fixPatch{
			{"three prefixes that cover everything", strings.Replace(tfSG, `["0.0.0.0/0"]`, `["0.0.0.0/2", "64.0.0.0/2", "128.0.0.0/1"]`, 1), false},
			{"a local that evaluates to the open range", strings.Replace(tfSG, `["0.0.0.0/0"]`, `[local.any]`, 1) + "\nlocals {\n  any = cidrsubnet(\"0.0.0.0/0\", 0, 0)\n}\n", false},
			{"a data source", strings.Replace(tfSG, `["0.0.0.0/0"]`, `data.aws_ip_ranges.all.cidr_blocks`, 1), false},
			{"the office range", strings.Replace(tfSG, `["0.0.0.0/0"]`, `["203.0.113.0/24"]`, 1), true},
			{"four ingress blocks of a quarter each", inlineQuarters, false},
			{"a quarter inline and the rest in rule resources", ruleQuarters, false},
			{"two offices in two blocks", twoOffices, true},
		}},
		{"open SSH beside a closed rule", FixtureTF, "tf/edge.tf", tfTwoRules, "trivy/AVD-AWS-0107", []fixPatch{
			{"swap the blocks, then make the open range unknown", swapped, false},
			{"close it", strings.Replace(tfTwoRules, `["0.0.0.0/0"]`, `["10.20.0.0/16"]`, 1), true},
		}},
		{"S3 full access in an IAM policy", FixtureTF, "tf/iam.tf", tfIAM, "trivy/AVD-AWS-0345", []fixPatch{
			{"every action as s3:?*", iamActions(`["s3:?*"]`), false},
			{"every action as s3:**", iamActions(`["s3:**"]`), false},
			{"grant everything", iamActions(`["*"]`), false},
			{"allow everything but IAM", strings.Replace(tfIAM, `actions   = ["s3:*"]`, `not_actions = ["iam:*"]`, 1), false},
			{"a deny that matches no bucket", narrowDeny, false},
			{"name the actions", iamActions(`["s3:GetObject", "s3:ListBucket"]`), true},
			{"a family of actions", iamActions(`["s3:Get*"]`), true},
		}},
		{"S3 full access in a JSON policy", FixtureTF, "tf/writer.tf", tfIAMJSON, "trivy/AVD-AWS-0345", []fixPatch{
			{"every action as S3:?*", strings.Replace(tfIAMJSON, `["s3:*"]`, `["S3:?*"]`, 1), false},
			{"allow everything but IAM", strings.Replace(tfIAMJSON, `Action   = ["s3:*"]`, `NotAction = ["iam:*"]`, 1), false},
			{"a conditional deny added", strings.Replace(tfIAMJSON, "    }]\n", "    }, {\n      Effect = \"Deny\"\n      Action = \"s3:*\"\n      Resource = \"*\"\n      Condition = { Bool = { \"aws:ViaAWSService\" = \"true\" } }\n    }]\n", 1), false},
			{"name the actions", strings.Replace(tfIAMJSON, `["s3:*"]`, `["s3:PutObject"]`, 1), true},
			{"deny it everywhere", strings.Replace(tfIAMJSON, "    }]\n", "    }, {\n      Effect = \"Deny\"\n      Action = \"s3:*\"\n      Resource = \"*\"\n    }]\n", 1), true},
		}},
		{"IMDSv1", FixtureTF, "tf/app.tf", tfIMDS, "trivy/AVD-AWS-0028", []fixPatch{
			{"a variable without a default", strings.Replace(tfIMDS, `http_tokens = "optional"`, `http_tokens = var.mode`, 1) + "\nvariable \"mode\" {}\n", false},
			{"a random value", strings.Replace(tfIMDS, `http_tokens = "optional"`, `http_tokens = uuid()`, 1), false},
			{"a variable whose default stays unsafe", strings.Replace(tfIMDS, `http_tokens = "optional"`, `http_tokens = var.tokens`, 1), false},
			{"a variable defaulting to required", strings.Replace(strings.Replace(tfIMDS, `http_tokens = "optional"`, `http_tokens = var.tokens`, 1), `default = "optional"`, `default = "required"`, 1), true},
			{"a function that yields required", strings.Replace(tfIMDS, `http_tokens = "optional"`, `http_tokens = lower("REQUIRED")`, 1), true},
		}},
	}
	assertFixCorners(t, e, cases)
}

func TestCanonicalAction(t *testing.T) {
	for in, want := range map[string]string{
		"s3:*": "s3:*", "S3:?*": "s3:*", "s3:**": "s3:*", "s3:*?": "s3:*", "*": "*", "?*": "*", "*:*": "*", "*:?*": "*",
		"s3:Get*": "s3:Get*", "s3:?": "s3:?", "s3:GetObject": "s3:GetObject", "iam:PassRole": "iam:PassRole", "": "",
	} {
		if got := canonicalAction(in); got != want {
			t.Errorf("canonicalAction(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzCanonicalise: a patched file is model output. Canonicalising it never
// panics, is deterministic, and returns the input untouched when it says
// nothing was rewritten.
func FuzzCanonicalise(f *testing.F) {
	f.Add(true, []byte("resource \"aws_security_group\" \"a\" {\n  ingress {\n    cidr_blocks = [\"0.0.0.0/0\"]\n  }\n}\n"), []byte("resource \"aws_security_group\" \"a\" {\n  ingress {\n    cidr_blocks = [cidrsubnet(\"0.0.0.0/0\", 0, 0), var.x, local.y]\n  }\n}\nlocals {\n  y = local.y\n}\n"))
	f.Add(false, []byte("kind: Pod\nmetadata: {name: a}\nspec:\n  containers:\n  - name: a\n    image: x\n"), []byte("kind: Pod\nmetadata: {name: a, annotations: {k: &v /etc}}\nspec:\n  volumes: [{name: v, hostPath: {path: *v}}]\n  containers:\n  - <<: {name: a}\n    image: x\n    env: [{name: T, valueFrom: {fieldRef: {fieldPath: \"metadata.annotations['k']\"}}}]\n---\nkind: ClusterRole\nmetadata: {name: r}\naggregationRule: {clusterRoleSelectors: [{matchExpressions: [{key: a, operator: Bogus}]}]}\n"))
	f.Add(true, []byte("resource \"aws_security_group\" \"a\" {\n  ingress {\n    cidr_blocks = [\"0.0.0.0/0\"]\n  }\n}\n"), []byte("resource \"aws_security_group\" \"a\" {\n  ingress {\n    cidr_blocks = [\"0.0.0.0/2\"]\n  }\n  ingress {\n    cidr_blocks = [\"64.0.0.0/2\", \"::/1\"]\n  }\n}\nresource \"aws_security_group_rule\" \"r\" {\n  type = \"ingress\"\n  security_group_id = aws_security_group.a.id\n  cidr_blocks = [\"128.0.0.0/2\"]\n}\n"))
	f.Add(true, []byte("data \"aws_iam_policy_document\" \"d\" {\n  statement {\n    effect = \"Deny\"\n    actions = [\"s3:*\"]\n    resources = [\"x\"]\n  }\n}\nresource \"aws_iam_policy\" \"p\" {\n  policy = \"{\\\"Statement\\\":{\\\"Effect\\\":\\\"Allow\\\",\\\"Action\\\":\\\"s3:*\\\"}}\"\n}\n"), []byte("data \"aws_iam_policy_document\" \"d\" {\n  statement {\n    not_actions = [\"iam:*\"]\n  }\n  statement {\n    effect = \"Deny\"\n    actions = [\"?*\"]\n    condition {\n    }\n  }\n}\nresource \"aws_iam_policy\" \"p\" {\n  policy = jsonencode({Statement = [{Effect = \"Allow\", NotAction = \"s3:?*\"}, {Effect = \"Deny\", Action = [\"*\"], Resource = [\"a\"]}, 7]})\n}\n"))
	f.Add(false, []byte("kind: Pod\nmetadata: {name: a}\nspec:\n  volumes: [{name: v, hostPath: {path: /etc}}]\n  containers:\n  - name: a\n    image: x:1\n    securityContext: {capabilities: {add: [SYS_ADMIN]}}\n"), []byte("kind: Pod\nmetadata: {name: a}\nspec:\n  volumes: [{name: v, persistentVolumeClaim: {claimName: c}}, {name: w, ephemeral: {volumeClaimTemplate: {spec: {selector: {matchLabels: [1]}}}}}]\n  containers:\n  - name: a\n    image: x:1\n    securityContext: {capabilities: {add: [cap_bpf, [x]]}}\n    resources: {requests: {memory: 1Ki}, limits: {memory: 1Gi}}\n---\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec: {storageClassName: null, selector: {matchExpressions: [{key: a, operator: Bogus}]}}\n---\nkind: PersistentVolume\nmetadata: {name: p, labels: [x]}\nspec: {claimRef: x, local: {path: //proc/1/root/etc}}\n---\nkind: StatefulSet\nmetadata: {name: s}\nspec:\n  template: {spec: {containers: [{name: a, image: x:1}]}}\n  volumeClaimTemplates: [{metadata: {name: d}, spec: {}}]\n"))
	f.Add(true, []byte("resource \"aws_instance\" \"a\" {\n  metadata_options {\n    http_tokens = \"optional\"\n  }\n}\n"), []byte("resource \"aws_instance\" \"a\" {\n  metadata_options {\n    http_tokens = terraform_data.m.output\n  }\n  monitoring = aws_instance.a.monitoring\n}\nresource \"terraform_data\" \"m\" {\n  input = local.m\n}\nlocals {\n  m = terraform_data.m.output\n}\nresource \"aws_security_group\" \"g\" {\n  ingress {\n    cidr_blocks = [aws_vpc.v.cidr_block, \"52.0.0.0/9\"]\n  }\n}\nresource \"aws_vpc\" \"v\" {\n  cidr_block = \"2600::/17\"\n}\n"))
	f.Fuzz(func(t *testing.T, tf bool, original, patched []byte) {
		ft := FixtureK8s
		if tf {
			ft = FixtureTF
		}
		if len(original) > 4096 || len(patched) > 4096 {
			return
		}
		if checkNesting(ft, "f", original) != nil || checkNesting(ft, "f", patched) != nil {
			return // refused before canonicalisation in the rubric
		}
		a, notesA := canonicalise(ft, original, patched)
		b, notesB := canonicalise(ft, original, patched)
		if string(a) != string(b) || strings.Join(notesA, "\n") != strings.Join(notesB, "\n") {
			t.Fatalf("not deterministic")
		}
		if len(notesA) == 0 && string(a) != string(patched) {
			t.Fatalf("rewrote the file without a note")
		}
	})
}
