package configaudit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/runner"
)

func rowJSON(t testing.TB, r Row) json.RawMessage {
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func exampleFor(t testing.TB, e *Env, ft, p, content string) env.Example {
	t.Helper()
	ex, err := e.ParseExample(rowJSON(t, Row{ID: "bad", FixtureType: ft, Path: p, Content: content, Labels: Labels{Mutations: []string{}}}))
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

func callTool(t testing.TB, e *Env, ex env.Example, name, args string) (string, env.ToolCallRecord) {
	t.Helper()
	ep, err := e.Start(context.Background(), ex)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ep.Step(context.Background(), env.Message{Role: env.RoleAssistant, ToolCalls: []env.ToolCall{{ID: "c1", Name: name, Arguments: args}}})
	if err != nil {
		t.Fatalf("a bad tool call must not fail the episode: %v", err)
	}
	if res.Done || len(res.Messages) != 1 || len(res.ToolCalls) != 1 {
		t.Fatalf("unexpected step result %+v", res)
	}
	return res.Messages[0].Content, res.ToolCalls[0]
}

func aliasBomb() string {
	var b strings.Builder
	b.WriteString("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\ndata:\n  a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n")
	for i := 1; i < 10; i++ {
		fmt.Fprintf(&b, "  a%d: &a%d [*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d,*a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	return b.String()
}

// TestBadConfigsGiveToolErrors: hostile or broken files reach the tools as
// clear error messages to the model; the episode and the scorer go on.
func TestBadConfigsGiveToolErrors(t *testing.T) {
	e, _ := testEnv(t)
	cases := []struct {
		name, ft, path, content, tool, want string
	}{
		{"alias bomb", FixtureK8s, "bomb.yaml", aliasBomb(), FnKubeLinter, "alias"},
		{"invalid yaml", FixtureK8s, "broken.yaml", "apiVersion: v1\nkind: Pod\nmetadata: [unclosed\n", FnKubeLinter, "invalid YAML"},
		{"non-kubernetes yaml", FixtureK8s, "compose.yaml", "services:\n  web:\n    image: nginx\n", FnKubeLinter, "no Kubernetes objects"},
		{"invalid hcl", FixtureTF, "main.tf", "resource \"aws_s3_bucket\" \"b\" {\n  bucket = \n", FnTrivy, "invalid HCL"},
		{"wrong tool for terraform", FixtureTF, "main.tf", "resource \"aws_s3_bucket\" \"b\" {}\n", FnKubeLinter, "does not scan Terraform"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ex := exampleFor(t, e, c.ft, c.path, c.content)
			msg, rec := callTool(t, e, ex, c.tool, `{"path": "`+c.path+`"}`)
			if !strings.Contains(msg, c.want) || rec.Error == "" {
				t.Errorf("tool message %q (record error %q), want an error mentioning %q", msg, rec.Error, c.want)
			}
			// Scoring a rollout on the same file still works.
			if _, err := e.Score(context.Background(), ex, answerRollout(nil, map[string]any{"violations": []any{}}), ""); err != nil {
				t.Errorf("score: %v", err)
			}
		})
	}
}

func TestMultiDocumentManifest(t *testing.T) {
	e, _ := testEnv(t)
	content := "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers:\n    - name: a\n      image: nginx:latest\n---\n# only a comment\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: b\nspec:\n  hostNetwork: true\n  containers:\n    - name: b\n      image: nginx:1.27\n"
	ex := exampleFor(t, e, FixtureK8s, "pods.yaml", content)
	msg, rec := callTool(t, e, ex, FnKubeLinter, `{"path": "pods.yaml"}`)
	var fs []ToolFinding
	if err := json.Unmarshal([]byte(msg), &fs); err != nil {
		t.Fatalf("tool result is not a findings list: %v: %s", err, msg)
	}
	got := map[string]bool{}
	for _, f := range fs {
		got[f.Tool+"/"+f.RuleID] = true
	}
	if !got["kube-linter/latest-tag"] || !got["kube-linter/host-network"] || rec.Findings == nil || *rec.Findings != len(fs) {
		t.Errorf("findings from both documents expected, got %v", got)
	}
}

func TestToolArgumentErrors(t *testing.T) {
	e, ds := testEnv(t)
	ex := ds.Examples[0]
	p := ex.Payload.(*fixture).Path
	tool := FnKubeLinter
	if ex.Payload.(*fixture).Type == FixtureTF {
		tool = FnTrivy
	}
	cases := map[string]string{
		"not json":     `{"path": `,
		"binary junk":  "\x00\xff\xfe",
		"other file":   `{"path": "/etc/passwd"}`,
		"traversal":    `{"path": "../` + p + `"}`,
		"missing path": `{}`,
		"huge":         `{"path": "` + strings.Repeat("a", 10000) + `"}`,
	}
	for name, args := range cases {
		msg, rec := callTool(t, e, ex, tool, args)
		if !strings.Contains(msg, `"error"`) || rec.Error == "" {
			t.Errorf("%s: got %q, want an error message", name, msg)
		}
		if strings.Contains(msg, "root:") {
			t.Errorf("%s: a file other than the fixture was read", name)
		}
	}
	msg, _ := callTool(t, e, ex, "run_shell", `{"path": "`+p+`"}`)
	if !strings.Contains(msg, "unknown tool") {
		t.Errorf("unknown tool: %q", msg)
	}
}

// loopPolicy calls a tool on every turn and never answers.
type loopPolicy struct{ path string }

func (l loopPolicy) Act(_ context.Context, _ []env.Message, _ []env.Tool) (env.Message, error) {
	args, _ := json.Marshal(map[string]string{"path": l.path})
	return env.Message{Role: env.RoleAssistant, ToolCalls: []env.ToolCall{{ID: "x", Name: FnOPA, Arguments: string(args)}}}, nil
}

func TestToolsForeverHitsBudgetAndMaxTurns(t *testing.T) {
	e, err := NewEnv(env.Options{Params: map[string]string{"tool_budget": "2", "max_turns": "5"}})
	if err != nil {
		t.Fatal(err)
	}
	shared, ds := testEnv(t)
	// Reuse the shared verifiers instead of compiling trivy's checks again.
	shareVerifiers(t, e, shared)
	ex := ds.Examples[0]
	ro, err := runner.RunEpisode(context.Background(), llm.Builtin{Policy: loopPolicy{ex.Payload.(*fixture).Path}}, e, ex, runner.EpisodeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	if ro.Turns != 5 || ro.StopReason != "max_turns" {
		t.Errorf("turns %d stop %q, want 5 max_turns", ro.Turns, ro.StopReason)
	}
	var budgetMsgs int
	for _, m := range ro.Completion {
		if m.Role == env.RoleTool && strings.Contains(m.Content, "tool budget exhausted") {
			budgetMsgs++
		}
	}
	if len(ro.ToolCalls) != 4 || budgetMsgs != 2 {
		t.Errorf("%d tool calls recorded, %d budget messages; want 4 and 2", len(ro.ToolCalls), budgetMsgs)
	}
	for _, tc := range ro.ToolCalls {
		if tc.Turn == 0 || tc.DurationMS < 0 {
			t.Errorf("bad record %+v", tc)
		}
	}
	s, err := e.Score(context.Background(), ex, ro, "")
	if err != nil || s.Total != s.Components["tool_observation"]*WeightToolObs {
		t.Errorf("an episode without an answer earns only tool observation: %+v %v", s, err)
	}
}

func TestBadPatches(t *testing.T) {
	e, ds := testEnv(t)
	var ex env.Example
	for _, x := range ds.Examples {
		if x.Payload.(*fixture).Type == FixtureK8s && len(x.Payload.(*fixture).Oracle) > 0 {
			ex = x
			break
		}
	}
	fx := ex.Payload.(*fixture)
	lines := strings.SplitN(string(fx.Content), "\n", 3)
	hunk := "@@ -1,2 +1,2 @@\n" + lines[0] + "\n-" + lines[1] + "\n+" + lines[1] + " # edited\n"
	cases := map[string]string{
		"dotdot":        "--- a/../" + fx.Path + "\n+++ b/../" + fx.Path + "\n" + hunk,
		"absolute":      "--- /etc/passwd\n+++ /etc/passwd\n" + hunk,
		"other file":    "--- a/other.yaml\n+++ b/other.yaml\n" + hunk,
		"does not fit":  "--- a/" + fx.Path + "\n+++ b/" + fx.Path + "\n@@ -1,2 +1,2 @@\n no such line\n-nor this\n+x\n",
		"binary junk":   "\x00\x01\x02@@\xff",
		"bad jsonpatch": `[{"op": "remove", "path": "/nope/0"}]`,
	}
	for name, p := range cases {
		s, err := e.Score(context.Background(), ex, answerRollout(nil, map[string]any{"violations": fx.Oracle, "patch": p}), "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if s.Parsed["patch_applied"] != false || s.Parsed["patch_error"] == nil || s.Parsed["fix_score"].(float64) != 0 {
			t.Errorf("%s: parsed %v, want a rejected patch with its reason", name, s.Parsed)
		}
	}
	// A JSON Patch that really fixes something is accepted.
	jp := `[{"op": "add", "path": "/metadata/labels/reviewed", "value": "yes"}]`
	if strings.Count(string(fx.Content), "\n---") == 0 {
		s, _ := e.Score(context.Background(), ex, answerRollout(nil, map[string]any{"violations": fx.Oracle, "patch": jp}), "")
		if s.Parsed["patch_applied"] != true {
			t.Errorf("valid JSON Patch rejected: %v", s.Parsed["patch_error"])
		}
		// Its size is the line it adds, not every line the YAML round trip
		// reformats (before sizeBase a one-operation patch counted 60-odd
		// lines and paid the whole size penalty).
		if got := s.Parsed["changed_lines"]; got != 1 {
			t.Errorf("one added label counted as %v changed lines, want 1", got)
		}
	}
}

func TestParseExampleFormats(t *testing.T) {
	e, _ := testEnv(t)
	content := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers:\n    - name: c\n      image: nginx\n"
	q, _ := json.Marshal(content)
	good := []string{
		string(rowJSON(t, Row{ID: "a", FixtureType: "k8s", Path: "p.yaml", Content: content, Labels: Labels{Expected: []Violation{{ID: "kube-linter/latest-tag", Severity: "med"}}}})),
		`{"question": ` + string(q) + `, "info": {"violations": [{"tool": "kube-linter", "rule_id": "latest-tag", "severity": "medium"}], "patch": null}, "meta": {"lang": "k8s", "source": "examples/p.yaml"}}`,
		`{"prompt": [{"role": "user", "content": ` + string(mustJSON("File path: p.yaml\n\n"+content)) + `}], "answer": {"oracle": [{"id": "kube-linter/latest-tag", "severity": "critical"}], "fixture_type": "k8s", "fixture_path": "p.yaml"}}`,
	}
	for i, g := range good {
		ex, err := e.ParseExample(json.RawMessage(g))
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		fx := ex.Payload.(*fixture)
		if string(fx.Content) != content || fx.Type != FixtureK8s || len(fx.Oracle) != 1 || fx.Oracle[0].ID != "kube-linter/latest-tag" {
			t.Errorf("row %d: decoded %+v", i, fx)
		}
	}
	bad := map[string]string{
		`{"id": "x", "fixture_type": "helm", "content": "a: b", "labels": {"expected": []}}`: "fixture_type",
		`{"id": "x", "content": "a: b"}`:                                                       "labels",
		`{"id": "x", "labels": {"expected": []}}`:                                              "content",
		`{"id": "x", "path": "/etc/passwd", "content": "a", "labels": {"expected": []}}`:       "path",
		`{"id": "x", "content": "a", "labels": {"expected": [{"id": "", "severity": "low"}]}}`: "labels",
		`{"answer": {"oracle": "nope"}, "question": "a"}`:                                      "answer",
		`{"question": "a", "info": {"violations": [{"rule_id": "x"}]}}`:                        "info.violations[0]",
	}
	for row, field := range bad {
		_, err := e.ParseExample(json.RawMessage(row))
		var re *dataset.RowError
		if !errors.As(err, &re) || !strings.HasPrefix(re.Field, field) {
			t.Errorf("%s: error %v, want a RowError on field %q", row, err, field)
		}
	}
	// A 20 MB manifest is refused with the field named.
	big := rowJSON(t, Row{ID: "big", FixtureType: "k8s", Path: "big.yaml", Content: strings.Repeat("# pad\n", 20<<20/6), Labels: Labels{}})
	_, err := e.ParseExample(big)
	var re *dataset.RowError
	if !errors.As(err, &re) || re.Field != "content" {
		t.Errorf("20 MB manifest: %v", err)
	}
}

func mustJSON(s string) []byte {
	b, _ := json.Marshal(s)
	return b
}
