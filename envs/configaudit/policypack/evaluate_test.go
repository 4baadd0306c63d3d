package policypack

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestPackMutations is the table every pack ships in generator.json: each
// mutation alone on each base must violate exactly the clauses it declares
// (exception mutations: none), and together they violate every clause and
// exercise every exception. Each case is a subtest so a failure names the
// pack, base and mutation.
func TestPackMutations(t *testing.T) {
	ctx := context.Background()
	for _, p := range Embedded() {
		g := p.gen
		violated, satisfied, exercised := map[string]bool{}, map[string]bool{}, map[string]bool{}
		for _, b := range g.Bases {
			for ai := range min(g.assignments(), 3) {
				a := g.assignment(ai * 7919 % g.assignments())
				path, text := a.render(b.Path), a.render(b.content)
				ok, err := p.CheckClauses(ctx, path, []byte(text))
				if err != nil {
					t.Fatal(err)
				}
				for id, pass := range ok {
					if !pass {
						t.Errorf("%s/%s %v: base violates %s", p.ID(), b.Name, a, id)
					}
					satisfied[id] = true
				}
				for _, m := range g.Mutations {
					if !slices.Contains(m.Bases, b.Name) {
						continue
					}
					t.Run(p.ID()+"/"+b.Name+"/"+m.Name, func(t *testing.T) {
						mt, err := applyEdits(text, m, a)
						if err != nil {
							t.Fatal(err)
						}
						vs, err := p.Evaluate(ctx, path, []byte(mt))
						if err != nil {
							t.Fatal(err)
						}
						if got, want := ViolatedClauses(vs), sortedSet(m.Breaks); !slices.Equal(got, want) {
							t.Errorf("violates %v, want %v: %s", got, want, describe(vs))
						}
						for _, v := range vs {
							violated[v.Clause] = true
							if v.Object == "" || v.Message == "" || v.Line == 0 {
								t.Errorf("violation without object, message or line: %+v", v)
							}
						}
						for _, c := range m.Exercises {
							exercised[c] = true
						}
					})
				}
			}
		}
		for _, c := range p.Clauses() {
			if !violated[c.ID] || !satisfied[c.ID] {
				t.Errorf("%s: clause %s violated %v, satisfied %v", p.ID(), c.ID, violated[c.ID], satisfied[c.ID])
			}
			if c.Type == Exception && !exercised[c.ID] {
				t.Errorf("%s: exception %s never exercised", p.ID(), c.ID)
			}
		}
	}
}

// TestPackEdgeCases covers inputs the generator does not produce: hostile
// or unusual values must be judged, not crash the evaluation.
func TestPackEdgeCases(t *testing.T) {
	tests := []struct {
		pack, path, content string
		want                []string
	}{
		{"payments-k8s", "a.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: payments\n  labels: {team: t, cost-center: c}\nspec:\n  securityContext: {runAsNonRoot: true, runAsUser: false}\n  containers:\n  - name: c\n    image: registry.internal.example/payments/x@sha256:0000000000000000000000000000000000000000000000000000000000000000\n    securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsUser: 0}\n", []string{"PAY-NONROOT"}},
		{"payments-k8s", "a.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: payments\ndata:\n  PASSWORD: hunter2\n", nil},
		{"payments-k8s", "a.yaml", "# only a comment\n", nil},
		{"payments-k8s", "a.yaml", "apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: nightly-migrate\n  namespace: shop\n  labels: {team: t, cost-center: c}\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n          securityContext: {runAsNonRoot: true}\n          containers:\n          - name: c\n            image: x:1\n            securityContext: {allowPrivilegeEscalation: false}\n", []string{"PAY-READONLY-FS"}},
		{"node-access-k8s", "a.yaml", "apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: ingress-nginx-controller\n  namespace: default\nspec:\n  template:\n    spec:\n      hostNetwork: true\n      containers: []\n", []string{"NODE-HOSTNET"}},
		{"capacity-k8s", "a.yaml", "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n  namespace: batch\n  labels: {team: t, cost-center: c}\nspec:\n  template:\n    metadata:\n      labels: {team: t, cost-center: c}\n    spec:\n      containers:\n      - name: c\n        image: x:1\n        resources: {requests: {memory: 1Gi}, limits: {memory: lots}}\n", nil},
		{"image-provenance-k8s", "a.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: dev\nspec:\n  imagePullSecrets: [{name: internal-registry}]\n  containers:\n  - name: c\n    image: registry.internal.example:5000/team/app\n    imagePullPolicy: Always\n", []string{"IMG-NO-LATEST", "IMG-REGISTRY"}},
		{"network-edge-tf", "main.tf", "resource \"aws_security_group\" \"x\" {\n  description = \"x\"\n  ingress {\n    description = \"from a variable\"\n    from_port   = 443\n    to_port     = 443\n    protocol    = \"tcp\"\n    cidr_blocks = var.allowed\n  }\n  tags = { owner = \"o\", tier = \"app\" }\n}\n", []string{"NET-PUBLIC-INGRESS"}},
		{"network-edge-tf", "main.tf", "resource \"aws_security_group\" \"x\" {\n  description = \"x\"\n  tags = { owner = \"o\", tier = \"app\" }\n}\nresource \"aws_security_group_rule\" \"ssh\" {\n  type              = \"ingress\"\n  description       = \"ssh\"\n  from_port         = 0\n  to_port           = 65535\n  protocol          = \"tcp\"\n  cidr_blocks       = [\"10.20.0.0/16\", \"192.168.1.0/24\"]\n  security_group_id = aws_security_group.x.id\n}\n", []string{"NET-ADMIN-PORTS"}},
		{"rds-prod-tf", "main.tf", "resource \"aws_db_instance\" \"d\" {\n  storage_encrypted       = true\n  backup_retention_period = var.days\n  tags = { env = \"dev\" }\n}\n", []string{"DB-BACKUP-RETENTION"}},
		{"s3-data-tf", "main.tf", "resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"b\"\n  acl    = \"public-read\"\n  tags = { \"data-class\" = \"public\", owner = \"a@b.example\" }\n}\nresource \"aws_s3_bucket_acl\" \"b\" {\n  bucket = \"b\"\n  acl    = \"authenticated-read\"\n}\n", []string{"S3-PUBLIC-ACL"}},
		{"kms-keys-tf", "main.tf", "resource \"aws_kms_key\" \"k\" {\n  customer_master_key_spec = \"RSA_4096\"\n  key_usage                = \"SIGN_VERIFY\"\n  deletion_window_in_days  = 30\n  policy = <<EOF\n{\"Statement\": [{\"Effect\": \"Allow\", \"Principal\": {\"AWS\": [\"arn:aws:iam::1:root\", \"*\"]}, \"Action\": \"kms:Sign\"}]}\nEOF\n  tags = { owner = \"o\", \"data-class\" = \"x\" }\n}\nresource \"aws_kms_alias\" \"k\" {\n  name          = \"alias/o/k\"\n  target_key_id = aws_kms_key.k.key_id\n}\n", []string{"KMS-POLICY-PRINCIPAL"}},
	}
	for i, tc := range tests {
		p, ok := Lookup(tc.pack)
		if !ok {
			t.Fatalf("no pack %s", tc.pack)
		}
		vs, err := p.Evaluate(context.Background(), tc.path, []byte(tc.content))
		if err != nil {
			t.Errorf("case %d (%s): %v", i, tc.pack, err)
			continue
		}
		if got := ViolatedClauses(vs); !slices.Equal(got, tc.want) {
			t.Errorf("case %d (%s): %v, want %v (%s)", i, tc.pack, got, tc.want, describe(vs))
		}
	}
}

func TestEvaluateRejectsBadInput(t *testing.T) {
	k8s, _ := Lookup("payments-k8s")
	tf, _ := Lookup("s3-data-tf")
	tests := []struct {
		p       *Pack
		content string
	}{
		{k8s, "a: [\n"},
		{k8s, strings.Repeat("a: &a [*a, *a]\n", 3)},
		{tf, "resource \"x\" {\n"},
		{tf, strings.Repeat("[", 1000)},
		{k8s, strings.Repeat("x", MaxInputBytes+1)},
	}
	for i, tc := range tests {
		_, err := tc.p.Evaluate(context.Background(), "f", []byte(tc.content))
		var ie *InputError
		if !errors.As(err, &ie) {
			t.Errorf("case %d: error %v, want an *InputError", i, err)
		}
		if _, err := tc.p.CheckClauses(context.Background(), "f", []byte(tc.content)); err == nil {
			t.Errorf("case %d: CheckClauses accepted bad input", i)
		}
	}
}

func TestCheckClausesReportsEveryClause(t *testing.T) {
	rows, err := MiniSet()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows[:24] {
		p, _ := Lookup(r.PolicyPack)
		got, err := p.CheckClauses(context.Background(), r.Path, []byte(r.Content))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(p.Clauses()) {
			t.Fatalf("%s: %d clauses reported, pack has %d", r.ID, len(got), len(p.Clauses()))
		}
		for _, c := range p.ClauseIDs() {
			failing := slices.ContainsFunc(r.Labels.Expected, func(e ExpectedClause) bool { return e.ID == c })
			if got[c] == failing {
				t.Errorf("%s: clause %s pass=%v, labels say failing=%v", r.ID, c, got[c], failing)
			}
		}
	}
}

// TestEvaluateConcurrent evaluates the mini set from many goroutines at once
// (run under -race) and compares with sequential results.
func TestEvaluateConcurrent(t *testing.T) {
	rows, err := MiniSet()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	want := make([][]Violation, len(rows))
	for i, r := range rows {
		p, _ := Lookup(r.PolicyPack)
		if want[i], err = p.Evaluate(ctx, r.Path, []byte(r.Content)); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8*len(rows))
	for w := range 8 {
		wg.Go(func() {
			for k := range rows {
				i := (k + w*13) % len(rows)
				r := rows[i]
				p, _ := Lookup(r.PolicyPack)
				got, err := p.Evaluate(ctx, r.Path, []byte(r.Content))
				if err != nil {
					errs <- err
					continue
				}
				if !reflect.DeepEqual(got, want[i]) {
					errs <- errors.New(r.ID + ": concurrent result differs")
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestPackAccessorsCopy(t *testing.T) {
	p, _ := Lookup("node-access-k8s")
	cs := p.Clauses()
	cs[0].ScannerIDs[0] = "mutated"
	cs[0].ID = "mutated"
	if c, _ := p.Clause(p.ClauseIDs()[0]); c.ScannerIDs[0] == "mutated" || c.ID == "mutated" {
		t.Error("Clauses() exposes the pack's internal state")
	}
	if !strings.HasPrefix(p.Document(), "# "+p.Title()) || p.Source() != "embedded:node-access-k8s" || p.FixtureType() != FixtureK8s {
		t.Errorf("accessors: %q %q %q", p.Title(), p.Source(), p.FixtureType())
	}
}

func TestClausesForScannerID(t *testing.T) {
	p, _ := Lookup("s3-data-tf")
	if got := p.ClausesForScannerID("trivy/AVD-AWS-0092"); !slices.Equal(got, []string{"S3-PUBLIC-ACL"}) {
		t.Errorf("AVD-AWS-0092 → %v", got)
	}
	if got := p.ClausesForScannerID("kube-linter/latest-tag"); got != nil {
		t.Errorf("a Kubernetes check maps to %v in a Terraform pack", got)
	}
	q, _ := Lookup("node-access-k8s")
	if got := q.ClausesForScannerID("kube-linter/privilege-escalation-container"); !slices.Equal(got, []string{"NODE-PRIVILEGED"}) {
		t.Errorf("privilege-escalation-container → %v", got)
	}
}
