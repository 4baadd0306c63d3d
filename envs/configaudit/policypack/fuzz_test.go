package policypack

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func FuzzParseDocument(f *testing.F) {
	for _, p := range Embedded() {
		f.Add(p.Document())
	}
	for _, s := range []string{
		"",
		"# T\n1. [A-B] x\n2. [A-C] y\n3. [A-D] z\n4. [A-E] w\n5. [A-F] v\n",
		"# T\n1. [A-B] x\n   continued\n\nprose\n2. [A-C] y\n3. [A-D] z\n4. [A-E] w\n5. [A-F] v\n",
		"# T\n1. [a-b] lower\n",
		"# T\n2. [A-B] starts at two\n",
		"# T\n1. [A-B]\n",
		"no title\n1. [A-B] x\n",
		"# T\n1. [A-B] x\n1. [A-C] again\n",
		"# T\n1. A-B without brackets\n",
		"\xff\xfe# T\n",
		"# T\r\n1. [A-B] x\r\n2. [A-C] y\r\n3. [A-D] z\r\n4. [A-E] w\r\n5. [A-F] v\r\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		doc, err := ParseDocument("policy.md", s)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "policy.md") {
				t.Fatalf("error does not name the file: %v", err)
			}
			return
		}
		if doc.Title == "" || len(doc.Clauses) < MinClauses || len(doc.Clauses) > MaxClauses {
			t.Fatalf("accepted title %q with %d clauses", doc.Title, len(doc.Clauses))
		}
		seen := map[string]bool{}
		for i, c := range doc.Clauses {
			if c.Number != i+1 || !ValidClauseID(c.ID) || seen[c.ID] || strings.TrimSpace(c.Text) == "" || len(c.Text) > MaxClauseTextLen || c.Line < 1 {
				t.Fatalf("bad clause %d: %+v", i, c)
			}
			seen[c.ID] = true
		}
	})
}

// FuzzEvaluate feeds arbitrary configuration text (what a model's patch can
// produce) to a Kubernetes and a Terraform pack: evaluation must fail with an
// InputError or report only clauses of the pack, never panic or fail otherwise.
func FuzzEvaluate(f *testing.F) {
	// Small seeds: with whole mini-set rows as seeds the fuzzer spends its
	// time on multi-kilobyte inputs through eight instrumented OPA
	// evaluations and barely progresses; the mini set is evaluated in full
	// by TestMiniSetComposition.
	f.Add("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: payments\nspec:\n  hostNetwork: true\n  containers:\n  - name: c\n    image: x:latest\n    securityContext: {privileged: true}\n")
	f.Add("resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"b\"\n  acl    = \"public-read\"\n  tags = { \"data-class\" = \"public\" }\n}\n")
	f.Add("resource \"aws_security_group\" \"x\" {\n  ingress {\n    from_port   = 22\n    to_port     = 22\n    protocol    = \"tcp\"\n    cidr_blocks = [\"0.0.0.0/0\"]\n  }\n}\n")
	f.Add("resource \"aws_kms_key\" \"k\" {\n  policy = jsonencode({ Statement = [{ Effect = \"Allow\", Principal = \"*\" }] })\n}\n")
	f.Add("kind: Pod\nspec:\n  containers: 7\n")
	f.Add("kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - securityContext: []\n        image: 5\n")
	f.Add("resource \"aws_s3_bucket\" \"x\" {\n  tags = 5\n}\n")
	f.Add("resource \"aws_security_group\" \"x\" {\n  ingress = \"x\"\n}\n")
	packs := []*Pack{}
	for _, id := range []string{"payments-k8s", "node-access-k8s", "capacity-k8s", "image-provenance-k8s", "s3-data-tf", "network-edge-tf", "rds-prod-tf", "kms-keys-tf"} {
		p, _ := Lookup(id)
		packs = append(packs, p)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range packs {
			path := "f.yaml"
			if p.FixtureType() == FixtureTerraform {
				path = "main.tf"
			}
			vs, err := p.Evaluate(context.Background(), path, []byte(s))
			var ie *InputError
			if err != nil && !errors.As(err, &ie) {
				t.Fatalf("%s: evaluation failed on input: %v", p.ID(), err)
			}
			for _, v := range vs {
				if _, ok := p.Clause(v.Clause); !ok {
					t.Fatalf("%s: unknown clause %q", p.ID(), v.Clause)
				}
			}
		}
	})
}
