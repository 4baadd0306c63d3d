package configaudit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/verify"

	"github.com/svbench/svbench/base/clip"
)

// Tool names offered to the model.
const (
	FnKubeLinter = "run_kubelinter"
	FnTrivy      = "run_trivy"
	FnOPA        = "run_opa"
)

// Bounds on tool traffic.
const (
	maxToolArgBytes      = 4096
	maxFindingsPerResult = 200
	maxMessageChars      = 500
)

var toolParams = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"the file path given in the task"},"paths":{"type":"array","items":{"type":"string"},"description":"alternative form: a list holding the file path"}}}`)

func toolDefs() []env.Tool {
	return []env.Tool{
		{Name: FnKubeLinter, Description: "Run kube-linter (default checks plus RBAC checks) on a Kubernetes YAML file. Returns a JSON list of findings.", Parameters: toolParams},
		{Name: FnTrivy, Description: "Run trivy's Terraform misconfiguration checks on a .tf file. Returns a JSON list of findings.", Parameters: toolParams},
		{Name: FnOPA, Description: "Evaluate svbench's OPA/Rego security policies (and any user policies) on a Kubernetes or Terraform file. Returns a JSON list of findings.", Parameters: toolParams},
	}
}

func fnTool(name string) (string, bool) {
	switch name {
	case FnKubeLinter:
		return ToolKubeLinter, true
	case FnTrivy:
		return ToolTrivy, true
	case FnOPA:
		return ToolOPA, true
	}
	return "", false
}

// ToolFinding is one finding as the tools return it to the model.
type ToolFinding struct {
	Tool      string `json:"tool"`
	RuleID    string `json:"rule_id"`
	Severity  string `json:"severity"`
	Message   string `json:"message"`
	File      string `json:"file"`
	StartLine int    `json:"start_line"`
	EndLine   int    `json:"end_line"`
}

type episode struct {
	e      *Env
	fx     *fixture
	prompt []env.Message
	budget int
	checks int // check_policy calls (their own budget)
}

func (ep *episode) Prompt() []env.Message { return ep.prompt }

// Close holds nothing: the verifiers run in-process and are shared.
func (ep *episode) Close() error { return nil }

// Tools offers the scanners unless the budget is 0 (audit by reading alone).
func (ep *episode) Tools() []env.Tool {
	if ep.budget == 0 {
		return nil
	}
	if ep.fx.Pack != nil {
		return ep.e.policyTools()
	}
	return toolDefs()
}

// policyTools are the scanners plus check_policy (unless its budget is 0).
func (e *Env) policyTools() []env.Tool {
	ts := toolDefs()
	if e.checkBudget > 0 {
		ts = append(ts, checkPolicyTool(e.checkDetail))
	}
	return ts
}

// Step runs the assistant's tool calls; a message without tool calls is the
// final answer.
func (ep *episode) Step(ctx context.Context, msg env.Message) (env.StepResult, error) {
	if len(msg.ToolCalls) == 0 {
		return env.StepResult{Done: true, Reason: "answered"}, nil
	}
	var res env.StepResult
	for _, tc := range msg.ToolCalls {
		content, rec := ep.call(ctx, tc)
		res.Messages = append(res.Messages, env.Message{Role: env.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: content})
		res.ToolCalls = append(res.ToolCalls, rec)
	}
	return res, nil
}

func toolError(format string, args ...any) string {
	b, _ := json.Marshal(map[string]string{"error": fmt.Sprintf(format, args...)})
	return string(b)
}

func (ep *episode) call(ctx context.Context, tc env.ToolCall) (string, env.ToolCallRecord) {
	start := time.Now()
	rec := env.ToolCallRecord{Name: tc.Name, Arguments: clip.Bytes(tc.Arguments, maxToolArgBytes, clip.Ellipsis)}
	fail := func(msg string) (string, env.ToolCallRecord) {
		rec.Error = msg
		rec.DurationMS = float64(time.Since(start).Microseconds()) / 1000
		return toolError("%s", msg), rec
	}
	if tc.Name == FnCheckPolicy && ep.fx.Pack != nil && ep.e.checkBudget > 0 {
		// check_policy has its own budget, apart from the scanners'.
		return ep.checkPolicy(ctx, tc, rec, start)
	}
	tool, ok := fnTool(tc.Name)
	if !ok {
		names := []string{FnKubeLinter, FnTrivy, FnOPA}
		if ep.fx.Pack != nil && ep.e.checkBudget > 0 {
			names = append(names, FnCheckPolicy)
		}
		return fail(fmt.Sprintf("unknown tool %q; available: %s", clip.Bytes(tc.Name, 64, clip.Ellipsis), strings.Join(names, ", ")))
	}
	// The framework counts calls against the budget (env.Limit); an
	// episode that offers no tools runs none.
	if ep.budget == 0 {
		return fail("this episode offers no tools (tool_budget=0): answer now with the JSON object")
	}
	p, err := toolPath(tc.Arguments)
	if err != nil {
		return fail(err.Error())
	}
	if p != ep.fx.Path {
		return fail(fmt.Sprintf("path %q is not the file under audit; the only path this tool accepts is %q", clip.Bytes(p, 200, clip.Ellipsis), ep.fx.Path))
	}
	if tool == ToolKubeLinter && ep.fx.Type == FixtureTF || tool == ToolTrivy && ep.fx.Type == FixtureK8s {
		want := FnTrivy
		if ep.fx.Type == FixtureK8s {
			want = FnKubeLinter
		}
		return fail(fmt.Sprintf("%s does not scan %s files; use %s or %s", tc.Name, fixtureName(ep.fx.Type), want, FnOPA))
	}
	r := ep.e.v.scan(ctx, tool, ep.fx.Type, verify.File{Path: ep.fx.Path, Content: ep.fx.Content}, ep.fx.Hash)
	if r.err != nil {
		return fail(fmt.Sprintf("%s could not scan %s: %v", tc.Name, ep.fx.Path, r.err))
	}
	out := make([]ToolFinding, 0, len(r.findings))
	for _, f := range r.findings {
		if len(out) == maxFindingsPerResult {
			break
		}
		out = append(out, toolFinding(f, ep.fx.Path))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(out)
	rec.Findings = new(len(r.findings))
	rec.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	content := strings.TrimSpace(buf.String())
	if r.note != "" {
		// Keep the list parseable: the note travels in the record only.
		rec.Error = r.note
	}
	return content, rec
}

func toolFinding(f verify.Finding, p string) ToolFinding {
	return ToolFinding{
		Tool: f.Tool, RuleID: f.RuleID, Severity: string(f.Severity),
		Message: clip.Bytes(f.Message, maxMessageChars, clip.Ellipsis), File: p, StartLine: f.Line, EndLine: f.Line,
	}
}

// toolPath reads {"path": p} or {"paths": [p]} from hostile arguments.
func toolPath(args string) (string, error) {
	if len(args) > maxToolArgBytes {
		return "", fmt.Errorf("arguments are %d bytes; the limit is %d", len(args), maxToolArgBytes)
	}
	var a struct {
		Path  *string  `json:"path"`
		Paths []string `json:"paths"`
	}
	if err := json.Unmarshal([]byte(args), &a); err != nil {
		return "", fmt.Errorf(`arguments are not a JSON object like {"path": "<file path>"}: %v`, err)
	}
	switch {
	case a.Path != nil:
		return *a.Path, nil
	case len(a.Paths) == 1:
		return a.Paths[0], nil
	case len(a.Paths) > 1:
		return "", fmt.Errorf("only one file is under audit; pass just its path")
	}
	return "", fmt.Errorf(`missing "path": pass {"path": "<file path>"}`)
}

// observedIDs collects the finding ids that appeared in tool results of a
// conversation (for the tool_observation component and the policies). Only
// results that answer a call the completion made count
// (env.AnsweredToolResults): a role "tool" message in a completion sent to
// /v1/score is the caller's text, not a scan.
func observedIDs(msgs []env.Message) []Violation {
	var out []Violation
	for _, m := range env.AnsweredToolResults(msgs) {
		var fs []ToolFinding
		if json.Unmarshal([]byte(m.Content), &fs) != nil {
			continue
		}
		for _, f := range fs {
			if f.Tool != "" && f.RuleID != "" {
				out = append(out, Violation{ID: f.Tool + "/" + f.RuleID, Severity: normSeverity(f.Severity)})
			}
		}
	}
	return dedupViolations(out)
}
