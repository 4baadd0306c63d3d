package configaudit

import (
	"math"
	"strings"
	"testing"
)

func FuzzParseOutput(f *testing.F) {
	for _, s := range []string{
		`{"violations": [{"id": "kube-linter/latest-tag", "severity": "medium"}], "patch": "--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n", "confidence": 0.7}`,
		"```json\n{\"violations\": []}\n```",
		`{"violations": ["trivy/AVD-AWS-0086"], "confidence": "high"}`,
		`{"violations": [{"id": 5}], "patch": [{"op": "remove", "path": "/spec"}]}`,
		`<think>x</think>{"violations": [{"id": "a/b", "severity": "critical"}]`,
		"",
		`{"violations": [{"id": "kube-linter/latest-tag", "severity": "med"}], "confidence": NaN}`,
		"```json\n{\"violations\": [NaN, {\"id\": Infinity}], \"confidence\": -Infinity}\n```",
		`{"violations": [], "patch": [{"op": "add", "path": "/a", "value": NaN}], "confidence": Infinity}`,
		`{"violations": ["\u0000NaN"], "patch": NaN}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o := ParseOutput(s)
		if len(o.Violations) > MaxViolations || len(o.Patch) > MaxPatchBytes {
			t.Fatalf("bounds exceeded: %d violations, %d patch bytes", len(o.Violations), len(o.Patch))
		}
		if o.SchemaValid && !o.JSON {
			t.Fatal("schema-valid without a JSON object")
		}
		if math.IsNaN(o.Confidence) || o.Confidence < 0 || o.Confidence > 1 {
			t.Fatalf("confidence %v outside [0, 1]", o.Confidence)
		}
		for _, v := range o.Violations {
			if v.ID == "" || len(v.ID) > MaxIDLen {
				t.Fatalf("bad id %q", v.ID)
			}
		}
	})
}

func FuzzToolPath(f *testing.F) {
	for _, s := range []string{`{"path": "a.yaml"}`, `{"paths": ["a.yaml"]}`, `{"paths": []}`, `{"path": 3}`, "\x00", `[]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := toolPath(s)
		if err == nil && len(s) > maxToolArgBytes {
			t.Fatal("oversized arguments accepted")
		}
		if err != nil && p != "" {
			t.Fatal("path returned with an error")
		}
	})
}

func FuzzParseRow(f *testing.F) {
	f.Add(`{"id": "x", "fixture_type": "k8s", "path": "a.yaml", "content": "a: b", "labels": {"expected": [{"id": "t/r", "severity": "low"}]}}`)
	f.Add(`{"question": "x", "info": {"violations": [{"tool": "t", "rule_id": "r"}]}}`)
	f.Add(`{"answer": {"oracle": [], "fixture_type": "tf"}, "prompt": "File path: main.tf\n\nresource {}"}`)
	f.Fuzz(func(t *testing.T, s string) {
		r, err := parseRow([]byte(s))
		if err != nil {
			return
		}
		if checkPath(r.Path) != nil || (r.FixtureType != FixtureK8s && r.FixtureType != FixtureTF) || strings.IndexByte(r.Content, 0) >= 0 {
			t.Fatalf("accepted an invalid row: %+v", r)
		}
	})
}
