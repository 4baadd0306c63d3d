package codevuln

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/codevuln/taskset"

	textclip "github.com/svbench/svbench/base/clip"
)

// Tool names.
const (
	FnRunTests  = "run_tests"
	FnStatic    = "run_static_analysis"
	FnReadFile  = "read_file"
	maxToolArgs = MaxAnswerBytes
	maxOutChars = 6000
)

var (
	patchParam = json.RawMessage(`{"type":"object","properties":{"patch":{"type":"string","description":"optional candidate: a unified diff against the original files, or the whole patched file (then also give \"file\" when the task has several editable files); omitted = the original code"},"file":{"type":"string"}}}`)
	readParam  = json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"a source file (e.g. app.py) or a visible test (tests/visible/test_behaviour.py)"}},"required":["path"]}`)
)

func toolDefs() []env.Tool {
	return []env.Tool{
		{Name: FnRunTests, Description: "Run the visible behavioural tests on the original code or on a candidate patch. Returns passed/total and the test output.", Parameters: patchParam},
		{Name: FnStatic, Description: "Run the static analysers on the original code or on a candidate patch. Returns findings (tool, rule, CWE, severity, file, line).", Parameters: patchParam},
		{Name: FnReadFile, Description: "Read one of the task's files: an editable source file or a visible test (original contents).", Parameters: readParam},
	}
}

type episode struct {
	e      *Env
	t      *taskset.Task
	prompt []env.Message
	budget int

	mu     sync.Mutex
	turns  int
	closed bool
}

// Start opens a tool episode over the example's task.
func (e *Env) Start(_ context.Context, ex env.Example) (env.Episode, error) {
	t, err := e.taskOf(ex)
	if err != nil {
		return nil, err
	}
	if e.vErr != nil {
		return nil, e.vErr
	}
	return &episode{e: e, t: t, prompt: ex.Prompt, budget: e.budget}, nil
}

func (ep *episode) Prompt() []env.Message { return ep.prompt }

func (ep *episode) Tools() []env.Tool {
	if ep.budget == 0 {
		return nil
	}
	return toolDefs()
}

// Close ends the episode. Every execution runs in its own scratch
// directory that is removed when the run ends (also on cancellation), so
// an episode holds no process or directory between steps; Close marks the
// episode closed so a late Step cannot start new executions.
func (ep *episode) Close() error {
	ep.mu.Lock()
	ep.closed = true
	ep.mu.Unlock()
	return nil
}

func (ep *episode) Step(ctx context.Context, msg env.Message) (env.StepResult, error) {
	ep.mu.Lock()
	ep.turns++
	turn, closed := ep.turns, ep.closed
	ep.mu.Unlock()
	if closed {
		return env.StepResult{Done: true, Reason: "closed"}, nil
	}
	if len(msg.ToolCalls) == 0 {
		return env.StepResult{Done: true, Reason: "answered"}, nil
	}
	var res env.StepResult
	for _, tc := range msg.ToolCalls {
		content, rec := ep.call(ctx, tc)
		rec.Turn = turn
		res.Messages = append(res.Messages, env.Message{Role: env.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: content})
		res.ToolCalls = append(res.ToolCalls, rec)
	}
	return res, nil
}

func toolJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (ep *episode) call(ctx context.Context, tc env.ToolCall) (string, env.ToolCallRecord) {
	start := time.Now()
	rec := env.ToolCallRecord{Name: textclip.Bytes(tc.Name, 64, textclip.Ellipsis), Arguments: textclip.Bytes(tc.Arguments, 4096, textclip.Ellipsis)}
	fail := func(msg string) (string, env.ToolCallRecord) {
		rec.Error = msg
		rec.DurationMS = float64(time.Since(start).Microseconds()) / 1000
		return toolJSON(map[string]string{"error": msg}), rec
	}
	switch tc.Name {
	case FnRunTests, FnStatic, FnReadFile:
	default:
		return fail(fmt.Sprintf("unknown tool %q; available: %s, %s, %s", textclip.Bytes(tc.Name, 64, textclip.Ellipsis), FnRunTests, FnStatic, FnReadFile))
	}
	// The framework counts calls against the budget (env.Limit); an
	// episode that offers no tools runs none.
	if ep.budget == 0 {
		return fail("this episode offers no tools (tool_budget=0): answer now with your patch")
	}
	if len(tc.Arguments) > maxToolArgs {
		return fail(fmt.Sprintf("arguments are %d bytes; the limit is %d", len(tc.Arguments), maxToolArgs))
	}
	var args struct {
		Patch *string `json:"patch"`
		File  string  `json:"file"`
		Path  string  `json:"path"`
	}
	if s := strings.TrimSpace(tc.Arguments); s != "" && s != "null" {
		if err := json.Unmarshal([]byte(s), &args); err != nil {
			return fail(fmt.Sprintf("arguments are not a JSON object: %v", err))
		}
	}
	if tc.Name == FnReadFile {
		b, ok := readable(ep.t, args.Path)
		if !ok {
			return fail(fmt.Sprintf("%q is not a readable task file; readable: %s and the visible tests", textclip.Bytes(args.Path, 100, textclip.Ellipsis), strings.Join(ep.t.Files, ", ")))
		}
		rec.DurationMS = float64(time.Since(start).Microseconds()) / 1000
		return toolJSON(map[string]string{"path": args.Path, "content": string(b)}), rec
	}
	files := Files(ep.t.Src)
	if args.Patch != nil && strings.TrimSpace(*args.Patch) != "" {
		a := ParseAnswer(*args.Patch)
		if a.Form == FormNone && strings.TrimSpace(*args.Patch) != "" {
			// A bare file without a fence is a whole patched file.
			a = Answer{Form: FormCode, Code: *args.Patch}
		}
		if args.File != "" {
			a.File = args.File
		}
		c := ApplyAnswer(ep.t, a)
		if c.Reject != "" {
			return fail("patch not applied: " + c.Reject)
		}
		files = c.Files
	}
	var out any
	switch tc.Name {
	case FnRunTests:
		r := ep.e.v.RunSuite(ctx, ep.t, SuiteVisible, files)
		m := map[string]any{"passed": r.Passed, "total": r.Total, "ok": r.OK, "output": textclip.Middle(r.Output, maxOutChars, "\n…\n")}
		if r.Killed != "" {
			m["killed"] = r.Killed
		}
		if r.Stage != "" {
			m["stage"] = r.Stage
		}
		out = m
	case FnStatic:
		r := ep.e.v.Analyse(ctx, ep.t.Language, files)
		if r.Err != "" {
			return fail("static analysis incomplete: " + r.Err)
		}
		rec.Findings = new(len(r.Findings))
		fs := r.Findings
		if len(fs) > 100 {
			fs = fs[:100]
		}
		out = map[string]any{"findings": fs}
	}
	if err := ctx.Err(); err != nil {
		return fail("interrupted: " + err.Error())
	}
	rec.DurationMS = float64(time.Since(start).Microseconds()) / 1000
	return toolJSON(out), rec
}
