package configaudit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/nesting"
)

// deepLevels is how deep a hostile answer nests within MaxPatchBytes: the
// 160 KB Terraform patch of issue 20 that overflowed HCL's parser's stack
// and killed `svbench serve`.
const deepLevels = 80_000

// boundText is what every refusal says: the file, the line and the bound.
var boundText = fmt.Sprintf("nested deeper than %d levels", nesting.DefaultMax)

// deepTF are Terraform additions nested far past the bound, each a shape
// HCL's parser recurses on, or builds into a tree that evaluation and
// walks recurse on (the flat sum and the index chain), as large as fits in
// MaxPatchBytes once written as a diff.
func deepTF() map[string]string {
	r := strings.Repeat
	n := deepLevels
	return map[string]string{
		"hcl lists":         "locals {\n  x = " + r("[", n) + r("]", n) + "\n}\n",
		"hcl objects":       "locals {\n  x = " + r("{", n) + r("}", n) + "\n}\n",
		"hcl parentheses":   "locals {\n  x = " + r("(", n) + "1" + r(")", n) + "\n}\n",
		"hcl calls":         "locals {\n  x = " + r("f(", n/2) + r(")", n/2) + "\n}\n",
		"hcl blocks":        r("a{\n", 30_000) + r("}\n", 30_000),
		"hcl unary":         "locals {\n  x = " + r("!", 3*n) + "true\n}\n",
		"hcl conditionals":  "locals {\n  x = " + r("a?", n) + "b\n}\n",
		"hcl splats":        "locals {\n  x = a" + r("[*]", n) + "\n}\n",
		"hcl interpolation": "locals {\n  x = \"" + r("${\"", n/2) + "\n}\n",
		// 120,000 terms: scoring it took ~5 s and 2 GB before the bound.
		"hcl flat sum":    "locals {\n  x = 1" + r("+1", 3*n/2) + "\n}\n",
		"hcl index chain": "locals {\n  x = a" + r("[b]", n) + "\n}\n",
	}
}

// deepK8s are Kubernetes manifest edits nested far past the bound.
func deepK8s(content string) map[string]string {
	r := strings.Repeat
	n := deepLevels
	add := func(value string) string {
		return strings.Replace(content, "metadata:\n", "metadata:\n  x: "+value+"\n", 1)
	}
	return map[string]string{
		"yaml flow sequences":   add(r("[", n) + r("]", n)),
		"yaml flow mappings":    add(r("{", n) + r("}", n)),
		"yaml block sequences":  add("\n    " + r("- ", n) + "y"),
		"yaml quoted brackets":  add(`"` + r("{", 2*n) + `"`),
		"yaml flow with quotes": add(r(`["]",`, n/3)),
	}
}

// deepExamples returns a Terraform and a Kubernetes example of the mini
// set that have findings to fix.
func deepExamples(t *testing.T) (tf, k8s env.Example) {
	t.Helper()
	_, ds := testEnv(t)
	for _, ex := range ds.Examples {
		fx := ex.Payload.(*fixture)
		if len(fx.Oracle) == 0 || bytes.Contains(fx.Content, []byte("\n---")) {
			continue
		}
		switch {
		case fx.Type == FixtureTF && tf.Payload == nil:
			tf = ex
		case fx.Type == FixtureK8s && k8s.Payload == nil && strings.Contains(string(fx.Content), "\nmetadata:\n"):
			k8s = ex
		}
	}
	if tf.Payload == nil || k8s.Payload == nil {
		t.Fatal("the mini set has no Terraform or no single-document Kubernetes example with findings")
	}
	return tf, k8s
}

// appendDiff is a unified diff that appends text to the fixture (written
// by hand: unifiedDiff gives up on more than maxDiffLines lines).
func appendDiff(fx *fixture, text string) string {
	lines := strings.Count(string(fx.Content), "\n")
	add := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	return fmt.Sprintf("--- a/%s\n+++ b/%s\n@@ -%d,0 +%d,%d @@\n+%s\n", fx.Path, fx.Path, lines, lines+1, len(add), strings.Join(add, "\n+"))
}

// TestDeepNestingScoredDestructive scores patches nested about 80,000
// levels deep (lists, objects, parentheses, blocks, unary and conditional
// chains, YAML flow and block nesting, a JSON Patch) through the real
// Score path under both rubrics. The process survives each one, the
// default rubric scores it exactly as a patch that breaks parsing —
// destructive, no fix credit, not solved — and the reference rubric pays
// no patch credit and does not call it solved; the reason names the bound.
func TestDeepNestingScoredDestructive(t *testing.T) {
	e, _ := testEnv(t)
	tf, k8s := deepExamples(t)
	ctx := context.Background()

	type payload struct {
		ex    env.Example
		patch string
	}
	cases := map[string]payload{}
	tfx := tf.Payload.(*fixture)
	for name, add := range deepTF() {
		cases[name] = payload{tf, appendDiff(tfx, add)}
	}
	kfx := k8s.Payload.(*fixture)
	for name, patched := range deepK8s(string(kfx.Content)) {
		cases[name] = payload{k8s, unifiedDiff(kfx.Path, kfx.Content, []byte(patched))}
	}
	value := strings.Repeat("[", deepLevels) + strings.Repeat("]", deepLevels)
	cases["json patch"] = payload{k8s, `[{"op": "add", "path": "/metadata/labels", "value": ` + value + `}]`}

	// What the default rubric gives a patch that breaks parsing.
	broken := func(ex env.Example) env.Score {
		fx := ex.Payload.(*fixture)
		bad := "locals {\n  x = [\n"
		if fx.Type == FixtureK8s {
			bad = "x: [\n"
		}
		p := appendDiff(fx, bad)
		s, err := e.Score(ctx, ex, answerRollout(nil, map[string]any{"violations": fx.Oracle, "patch": p}), "")
		if err != nil || s.Parsed["patch_structure_ok"] != false {
			t.Fatalf("a patch that breaks parsing: %v %v", err, s.Parsed)
		}
		return s
	}
	want := map[string]env.Score{FixtureTF: broken(tf), FixtureK8s: broken(k8s)}

	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			fx := c.ex.Payload.(*fixture)
			if len(c.patch) > MaxPatchBytes {
				t.Fatalf("payload is %d bytes, over MaxPatchBytes: the answer would be ignored, not scored", len(c.patch))
			}
			ro := answerRollout(nil, map[string]any{"violations": fx.Oracle, "patch": c.patch})

			s, err := e.Score(ctx, c.ex, ro, "")
			if err != nil {
				t.Fatal(err)
			}
			reason := fmt.Sprint(s.Parsed["structure_error"])
			if s.Solved || s.Parsed["patch_structure_ok"] != false || s.Parsed["fix_score"] != 0.0 ||
				s.Parsed["penalty"].(float64) < penaltyDestructive || !strings.Contains(reason, boundText) {
				t.Fatalf("default rubric: solved %v, parsed %v; want destructive, unsolved, the bound named", s.Solved, s.Parsed)
			}
			b := want[fx.Type]
			if s.Total != b.Total || fmt.Sprint(s.Components) != fmt.Sprint(b.Components) {
				t.Errorf("default rubric: %v (%v), want what a patch that breaks parsing gets: %v (%v)", s.Total, s.Components, b.Total, b.Components)
			}

			r, err := e.Score(ctx, c.ex, ro, RubricReference)
			if err != nil {
				t.Fatal(err)
			}
			why := fmt.Sprint(r.Parsed["structure_error"], r.Parsed["patch_error"])
			if r.Solved || r.Parsed["patch_delta"] != nil || !strings.Contains(why, boundText) {
				t.Fatalf("reference rubric: solved %v, parsed %v; want no patch credit, unsolved, the bound named", r.Solved, r.Parsed)
			}
			if f1 := r.Parsed["f1"].(float64); r.Components["config_auditing"] > f1+0.05+1e-9 {
				t.Errorf("reference rubric: config_auditing %v exceeds detection alone (F1 %v + 0.05)", r.Components["config_auditing"], f1)
			}
		})
	}
}

// TestDeepAnswerNamesTheBound: an answer that is itself nested 80,000
// levels deep is no JSON object (encoding/json stops at 10,000 levels);
// the problem recorded says why.
func TestDeepAnswerNamesTheBound(t *testing.T) {
	e, ds := testEnv(t)
	text := `{"violations": [], "x": ` + strings.Repeat("[", deepLevels) + strings.Repeat("]", deepLevels) + `}`
	s, err := e.Score(context.Background(), ds.Examples[0], answerRollout(nil, text), "")
	if err != nil {
		t.Fatal(err)
	}
	problems, _ := json.Marshal(s.Parsed["parse_problems"])
	if s.Parsed["valid_json"] != false || s.Total != 0 || !strings.Contains(string(problems), boundText) {
		t.Errorf("total %v, parsed %v; want an invalid answer whose problem names the bound", s.Total, s.Parsed)
	}
}

// TestMiniSetWithinTheBound: every fixture of the mini set passes the
// nesting check with room to spare, so the bound refuses only hostile
// files.
func TestMiniSetWithinTheBound(t *testing.T) {
	_, ds := testEnv(t)
	for _, ex := range ds.Examples {
		fx := ex.Payload.(*fixture)
		if err := checkNesting(fx.Type, fx.Path, fx.Content); err != nil {
			t.Errorf("%s: %v", ex.ID, err)
		}
		if fx.Type == FixtureTF {
			if err := verify.GuardHCL(fx.Path, fx.Content, 0, nesting.DefaultMax/8); err != nil {
				t.Errorf("%s: %v", ex.ID, err)
			}
		} else if err := nesting.YAML(fx.Path, fx.Content, nesting.DefaultMax/8); err != nil {
			t.Errorf("%s: %v", ex.ID, err)
		}
	}
}

// deepSeeds are fuzz seeds nested far past the bound.
func deepSeeds() []string {
	r := strings.Repeat
	return []string{
		"locals {\n  x = " + r("[", deepLevels) + r("]", deepLevels) + "\n}\n",
		"locals {\n  x = " + r("!", deepLevels) + "true\n}\n",
		r("a {\n", 2000) + r("}\n", 2000),
		"x = <<EOT\n" + r("${<<EOT\n", 500),
		"metadata:\n  x: " + r("[", deepLevels) + "\n",
		"metadata:\n  x:\n    " + r("- ", deepLevels) + "y\n",
	}
}

// FuzzStructureCheck feeds hostile patched files to the structure check
// (the inventory a patch must preserve) and its suppression remover: no
// input may crash them, and a file over the nesting bound never reaches a
// parser (its inventory fails with nesting.ErrTooDeep).
func FuzzStructureCheck(f *testing.F) {
	f.Add(false, "resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"x\"\n  count = 0\n}\n")
	f.Add(true, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: app\n    image: nginx:1.25\n")
	for _, s := range deepSeeds() {
		f.Add(false, s)
		f.Add(true, s)
	}
	f.Fuzz(func(t *testing.T, isK8s bool, patched string) {
		ft := FixtureTF
		if isK8s {
			ft = FixtureK8s
		}
		tooDeep := checkNesting(ft, "f", []byte(patched)) != nil
		_, _, _ = neutraliseSuppressions(ft, nil, []byte(patched))
		_, err := takeInventory(ft, []byte(patched))
		if tooDeep && !errors.Is(err, nesting.ErrTooDeep) {
			t.Fatalf("a file over the nesting bound was inventoried (err %v)", err)
		}
	})
}

// FuzzPatchPath drives the default rubric's patch path (apply, remove
// suppressions, structure check, re-verify) with hostile patches against a
// Terraform and a Kubernetes fixture; re-verification is a stub so the
// fuzzer measures the path, not the scanners. Whatever the patch, the
// evaluation is consistent, and a patch over the nesting bound is
// destructive with the bound named.
func FuzzPatchPath(f *testing.F) {
	tfx := &fixture{Type: FixtureTF, Path: "main.tf", Content: []byte("resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"x\"\n}\n")}
	kfx := &fixture{Type: FixtureK8s, Path: "pod.yaml", Content: []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: app\n    image: nginx:1.25\n")}
	f.Add(false, "@@ -1,3 +1,3 @@\n resource \"aws_s3_bucket\" \"b\" {\n-  bucket = \"x\"\n+  bucket = \"y\"\n }\n")
	f.Add(true, `[{"op": "replace", "path": "/spec/containers/0/image", "value": "nginx:1.27"}]`)
	f.Add(true, "```diff\n--- a/pod.yaml\n+++ b/pod.yaml\n@@ -3,2 +3,3 @@\n metadata:\n+  labels: {a: [b]}\n   name: web\n```")
	for _, s := range deepSeeds() {
		f.Add(false, appendDiff(tfx, s))
		f.Add(true, unifiedDiff(kfx.Path, kfx.Content, []byte(strings.Replace(string(kfx.Content), "metadata:\n", s, 1))))
	}
	f.Add(true, `[{"op": "add", "path": "/metadata/x", "value": `+strings.Repeat("[", deepLevels)+strings.Repeat("]", deepLevels)+`}]`)
	f.Fuzz(func(t *testing.T, isK8s bool, p string) {
		fx := tfx
		if isK8s {
			fx = kfx
		}
		ev := evaluation{out: Output{JSON: true, Patch: p}, checkable: []Violation{{ID: "trivy/x", Severity: "high"}}}
		reverified := false
		ev.patchAndReverify(fx, func(patched verify.File) ([]Violation, error) {
			reverified = true
			if err := checkNesting(fx.Type, patched.Path, patched.Content); err != nil {
				t.Fatalf("a file over the nesting bound reached re-verification: %v", err)
			}
			return nil, nil
		}, nil)
		if reverified != ev.structOK {
			t.Fatalf("re-verified %v, structure ok %v", reverified, ev.structOK)
		}
		if !ev.structOK && ev.fixScore != 0 {
			t.Fatalf("fix credit %v for a patch that failed the structure check", ev.fixScore)
		}
		if strings.Contains(ev.structError, "nesting bound") && (ev.penalty < penaltyDestructive || !strings.Contains(ev.structError, boundText)) {
			t.Fatalf("a patch over the nesting bound: penalty %v, reason %q", ev.penalty, ev.structError)
		}
	})
}
