package tfscan

import (
	"context"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/owenrumney/squealer/pkg/squealer"
)

// TestSquealerMatchesTrivy holds the shared scanner to trivy-checks' own
// squealer.scan_string built-in, string by string.
func TestSquealerMatchesTrivy(t *testing.T) {
	s := scanner(t)
	if s.checks.secrets == nil {
		t.Fatal("no squealer.scan_string call was renamed; the checks' secret scanning now runs trivy-checks' built-in")
	}
	for path, m := range s.checks.compiler.Modules {
		ast.WalkTerms(m, func(x *ast.Term) bool {
			if r, ok := x.Value.(ast.Ref); ok && r.Equal(squealerCall) {
				t.Errorf("%s still calls squealer.scan_string", path)
			}
			return false
		})
	}
	ctx := context.Background()
	trivy, err := rego.New(rego.Query("x := squealer.scan_string(input)")).PrepareForEval(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ours, err := rego.New(rego.Query("x := "+fastSquealerName+"(input)"), fastSquealerBuiltin(squealer.NewStringScanner())).PrepareForEval(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, in := range []string{
		"",
		"#!/bin/bash\necho hello\n",
		"export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE\n",
		"export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY\n",
		"password = \"hunter2hunter2\"\n",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA\n-----END RSA PRIVATE KEY-----\n",
		"token: ghp_0123456789abcdefghijABCDEFGHIJ012345\n",
		"xoxb-123456789012-123456789012-abcdefghijklmnopqrstuvwx",
		"https://user:secretpass@example.com/path",
	} {
		want, err := trivy.Eval(ctx, rego.EvalInput(in))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ours.Eval(ctx, rego.EvalInput(in))
		if err != nil {
			t.Fatal(err)
		}
		w, g := want[0].Bindings["x"].(map[string]any), got[0].Bindings["x"].(map[string]any)
		if w["transgressionFound"] != g["transgressionFound"] || w["description"] != g["description"] {
			t.Errorf("%q: ours %v, trivy-checks' %v", in, g, w)
		}
		if w["transgressionFound"] == true {
			found++
		}
	}
	if found < 3 {
		t.Errorf("only %d inputs held a secret squealer recognises; the cases no longer test detection", found)
	}
}
