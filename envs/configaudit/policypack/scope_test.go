package policypack

import (
	"context"
	"strings"
	"testing"
)

func TestScopeChanges(t *testing.T) {
	p, _ := Lookup("rds-prod-tf")
	cases, err := p.Cases()
	if err != nil {
		t.Fatal(err)
	}
	orig := cases[0].Before
	retagged := strings.Replace(orig, `env   = "prod"`, `env   = "dev"`, 1)
	got, err := p.ScopeChanges(context.Background(), "main.tf", []byte(orig), []byte(retagged))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != (ScopeChange{Resource: "aws_db_instance.primary", Tag: "env", Before: "prod", After: "dev"}) {
		t.Fatalf("ScopeChanges = %+v", got)
	}
	// The retagged file passes the Rego although nothing was fixed: that is
	// what ScopeChanges lets the rubric see.
	broken := strings.Replace(retagged, "  deletion_protection                 = true\n  iam_database_authentication_enabled = true\n  performance_insights_enabled        = true\n  performance_insights_kms_key_id     = aws_kms_key.db.arn\n  skip_final_snapshot                 = false", "  deletion_protection                 = false\n  iam_database_authentication_enabled = true\n  performance_insights_enabled        = true\n  performance_insights_kms_key_id     = aws_kms_key.db.arn\n  skip_final_snapshot                 = false", 1)
	if vs, err := p.Evaluate(context.Background(), "main.tf", []byte(broken)); err != nil || len(vs) != 0 {
		t.Fatalf("retagged prod database: %v %v", vs, err)
	}
	if got, _ := p.ScopeChanges(context.Background(), "main.tf", []byte(orig), []byte(orig)); len(got) != 0 {
		t.Errorf("unchanged file: %+v", got)
	}
	if _, err := p.ScopeChanges(context.Background(), "main.tf", []byte(orig), []byte("resource {")); err == nil {
		t.Error("unparsable patched file accepted")
	}
	k, _ := Lookup("payments-k8s")
	if got, err := k.ScopeChanges(context.Background(), "a.yaml", []byte("a: 1"), []byte("a: 2")); got != nil || err != nil {
		t.Errorf("Kubernetes pack: %v %v", got, err)
	}
	for _, id := range []string{"s3-data-tf", "rds-prod-tf", "network-edge-tf", "kms-keys-tf"} {
		q, _ := Lookup(id)
		if len(q.ScopeTags()) == 0 {
			t.Errorf("%s declares no scope tags", id)
		}
	}
}
