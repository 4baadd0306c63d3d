package configaudit

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
)

// TestParseOutputNonFinite: Python's json.loads accepts NaN, Infinity and
// -Infinity, so an answer using them is read, not discarded; the value is
// then an invalid value of its field.
func TestParseOutputNonFinite(t *testing.T) {
	const v = `"violations": [{"id": "kube-linter/latest-tag", "severity": "med"}]`
	cases := []struct {
		name        string
		in          string
		schemaValid bool
		ids         []string
		patch       string
		problem     string // substring of one problem; "" for none
	}{
		{"finite confidence", `{` + v + `, "confidence": 0.5}`, true, []string{"kube-linter/latest-tag"}, "", ""},
		{"NaN confidence", `{` + v + `, "confidence": NaN}`, false, []string{"kube-linter/latest-tag"}, "", "got NaN"},
		{"Infinity confidence", `{` + v + `, "confidence": Infinity}`, false, []string{"kube-linter/latest-tag"}, "", "got Infinity"},
		{"-Infinity confidence in a fence", "```json\n{" + v + `, "confidence": -Infinity}` + "\n```", false, []string{"kube-linter/latest-tag"}, "", "got -Infinity"},
		{"overflowing confidence", `{` + v + `, "confidence": 1e999}`, false, []string{"kube-linter/latest-tag"}, "", "finite number"},
		{"NaN as a violation id", `{"violations": [{"id": NaN, "severity": "low"}, {"id": "kube-linter/privileged-container", "severity": "high"}]}`, false, []string{"kube-linter/privileged-container"}, "", "violations[0]"},
		{"NaN as a bare violation", `{"violations": [NaN, "kube-linter/host-network"]}`, false, []string{"kube-linter/host-network"}, "", "violations[0]"},
		{"empty JSON Patch array: no patch", `{` + v + `, "patch": [], "confidence": 0.5}`, true, []string{"kube-linter/latest-tag"}, "", ""},
		{"NaN as the patch", `{` + v + `, "patch": NaN}`, false, []string{"kube-linter/latest-tag"}, "", `"patch" must be a string`},
		{"NaN inside a JSON Patch array", `{` + v + `, "patch": [{"op": "replace", "path": "/spec/replicas", "value": NaN}]}`, false, []string{"kube-linter/latest-tag"}, "", "NaN or Infinity"},
		{"NaN in a string is text", `{` + v + `, "patch": "NaN", "confidence": 1}`, true, []string{"kube-linter/latest-tag"}, "NaN", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := ParseOutput(tc.in)
			if !o.JSON {
				t.Fatalf("answer discarded: %v", o.Problems)
			}
			if o.SchemaValid != tc.schemaValid {
				t.Errorf("SchemaValid = %v, want %v (problems %v)", o.SchemaValid, tc.schemaValid, o.Problems)
			}
			if got := ids(o.Violations); strings.Join(got, ",") != strings.Join(tc.ids, ",") {
				t.Errorf("violations %v, want %v", got, tc.ids)
			}
			if o.Patch != tc.patch {
				t.Errorf("patch %q, want %q", o.Patch, tc.patch)
			}
			if math.IsNaN(o.Confidence) || o.Confidence < 0 || o.Confidence > 1 {
				t.Errorf("confidence %v escaped [0, 1]", o.Confidence)
			}
			found := tc.problem == ""
			for _, p := range o.Problems {
				found = found || strings.Contains(p, tc.problem)
			}
			if !found {
				t.Errorf("problems %v, want one mentioning %q", o.Problems, tc.problem)
			}
		})
	}
}

// TestScoreNonFiniteConfidence: with a NaN or infinite confidence both
// rubrics score the violations exactly as with a finite one; only format
// drops to 0, and no component is NaN.
func TestScoreNonFiniteConfidence(t *testing.T) {
	e, ds := testEnv(t)
	var ex env.Example
	for _, x := range ds.Examples {
		if fx := x.Payload.(*fixture); fx.Type == FixtureK8s && len(fx.Oracle) > 0 {
			ex = x
			break
		}
	}
	if ex.Payload == nil {
		t.Fatal("no Kubernetes row with findings in the mini set")
	}
	var b strings.Builder
	b.WriteString(`{"violations": [`)
	for i, o := range ex.Payload.(*fixture).Oracle {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`{"id": "` + o.ID + `", "severity": "` + string(o.Severity) + `"}`)
	}
	b.WriteString(`], "confidence": `)
	answer := func(conf string) *env.Rollout { return answerRollout(nil, b.String()+conf+"}") }
	ctx := context.Background()
	for _, rubric := range []string{RubricDefault, RubricReference} {
		want, err := e.Score(ctx, ex, answer("0.9"), rubric)
		if err != nil {
			t.Fatal(err)
		}
		if want.Components["config_auditing"] <= 0 || want.Components["format"] != 1 {
			t.Fatalf("%s: the finite answer should score: %v", rubric, want.Components)
		}
		for _, conf := range []string{"NaN", "Infinity", "-Infinity"} {
			got, err := e.Score(ctx, ex, answer(conf), rubric)
			if err != nil {
				t.Fatal(err)
			}
			for name, c := range got.Components {
				if math.IsNaN(c) || math.IsInf(c, 0) {
					t.Errorf("%s/%s: component %s = %v", rubric, conf, name, c)
				}
			}
			if got.Components["config_auditing"] != want.Components["config_auditing"] {
				t.Errorf("%s/%s: config_auditing %v, want %v as with a finite confidence", rubric, conf, got.Components["config_auditing"], want.Components["config_auditing"])
			}
			if got.Components["format"] != 0 {
				t.Errorf("%s/%s: format %v, want 0", rubric, conf, got.Components["format"])
			}
			if got.Parsed["valid_json"] != true {
				t.Errorf("%s/%s: valid_json %v", rubric, conf, got.Parsed["valid_json"])
			}
		}
	}
}
