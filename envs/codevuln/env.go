// Package codevuln is E3, code-vulnerability repair: the model receives a
// small vulnerable Python or Go module, may run its visible behavioural
// tests and the static analysers and read the task's files, and answers with
// a patch (unified diff or whole file; the reference's JSON schema
// {diff, tests_passed, explanation, patched_code?} is accepted). The patch is
// verified by executing the visible tests and hidden security tests in
// verify/sandbox, by static analysis (bandit and svbench's own rules), by an
// API check and by the size of the change. See README.md.
package codevuln

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	textclip "github.com/svbench/svbench/base/clip"
	"github.com/svbench/svbench/report"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/codevuln/tasks"
	"github.com/svbench/svbench/envs/codevuln/taskset"
	"github.com/svbench/svbench/verify/sandbox"
)

// ID is the canonical environment id.
const ID = "code-vuln-repair"

// Version changes whenever prompts, parsing or scoring change numbers.
const Version = "0.1.0"

var aliases = []string{"e3", "code-vulnerability"}

// Rubric names.
const (
	RubricDefault   = "default"
	RubricReference = "reference"
)

// ParamTestTimeout names the per-file test timeout (tests shorten it).
const ParamTestTimeout = "test_timeout"

// Config is E3's configuration.
type Config struct {
	ToolBudget  int    `param:"tool_budget" min:"0" max:"64" doc:"tool calls per episode (0 = answer without tools)"`
	MaxTurns    int    `param:"max_turns" min:"1" max:"64" doc:"assistant turns per episode"`
	Sandbox     string `param:"sandbox" enum:"auto,bwrap" doc:"isolation mechanism for executing code; bubblewrap is the only one (there is no weaker fallback, so verdicts do not depend on the host)"`
	TestTimeout int    `param:"test_timeout" min:"2" max:"600" doc:"seconds of CPU and wall time one test file may use in the sandbox (a run over it is killed and fails)"`
	GoCache     string `param:"go_cache" doc:"directory to keep the Go build cache in: svbench creates and uses only its subdirectory svbench-go-build and changes nothing else there (default: the user cache dir, /var/tmp under root)"`
}

// DefaultConfig is E3 as `svbench eval --env e3` runs it.
func DefaultConfig() Config {
	return Config{ToolBudget: 8, MaxTurns: 10, Sandbox: "auto", TestTimeout: 30}
}

func init() {
	// The registry strips "sv-env-", so the reference's name resolves
	// through "code-vulnerability".
	report.Register(report.Spec{Env: env.Spec{ID: ID, Aliases: aliases, Config: DefaultConfig(), Breakdown: []string{"difficulty", "cwe", "language"}, Data: dataCommands,
		New: func(opts env.Options) (env.Environment, error) { return New(context.Background(), opts) }},
		Build: BuildReport})
}

// Env is E3. It is safe for concurrent use.
type Env struct {
	v          *Verifier
	vErr       error // why nothing can be executed here (then v is nil)
	sb         *sandbox.Sandbox
	budget     int
	maxTurns   int
	mu         sync.RWMutex
	tasks      map[string]*taskset.Task
	embeddedID []string
	splits     splitSets
}

// New builds E3: it loads the embedded tasks, starts the sandbox and
// detects the toolchains. Without a working sandbox the environment still
// describes itself and loads data, but refuses to start episodes or score:
// nothing model-written is ever executed unisolated.
func New(ctx context.Context, opts env.Options) (*Env, error) {
	cfg, err := env.ConfigOf(ID, opts, DefaultConfig())
	if err != nil {
		return nil, err
	}
	e := &Env{tasks: map[string]*taskset.Task{}, budget: cfg.ToolBudget, maxTurns: cfg.MaxTurns}
	all, err := taskset.Load(tasks.FS())
	if err != nil {
		return nil, fmt.Errorf("e3: embedded tasks: %w", err)
	}
	for i := range all {
		t := all[i]
		e.tasks[t.ID] = &t
		e.embeddedID = append(e.embeddedID, t.ID)
	}
	mode := sandbox.Mode(cfg.Sandbox)
	if mode == "auto" {
		mode = ""
	}
	sb, err := sandbox.New(ctx, sandbox.Options{Mode: mode})
	if err != nil {
		e.vErr = fmt.Errorf("e3 executes model-written code and needs a sandbox: %w", err)
		return e, nil
	}
	e.sb = sb
	e.v, err = NewVerifier(ctx, sb, cfg.GoCache, time.Duration(cfg.TestTimeout)*time.Second)
	if err != nil {
		e.v, e.vErr = nil, err
		return e, nil
	}
	var goSources [][]byte
	for _, t := range e.tasks {
		if t.Language == taskset.Go {
			for _, tree := range []map[string][]byte{t.Src, t.Visible, t.Hidden} {
				for _, b := range tree {
					goSources = append(goSources, b)
				}
			}
		}
	}
	e.v.WarmGo(goSources)
	return e, nil
}

// Ready reports why the environment cannot execute code (nil when it can).
func (e *Env) Ready() error { return e.vErr }

// Close releases the sandbox's scratch root.
func (e *Env) Close() error {
	if e.sb == nil {
		return nil
	}
	return e.sb.Close()
}

// Verifier exposes the verifier (benchmarks, tools).
func (e *Env) Verifier() *Verifier { return e.v }

// SystemPrompt explains the episode and the answer formats.
const SystemPrompt = `You are a security engineer repairing vulnerable code. You get a small module, a description of what it does and of the reported vulnerability, and tools:
- run_tests: run the visible behavioural tests, on the original code or on a candidate patch you pass as "patch" (unified diff or the whole patched file).
- run_static_analysis: run the static analysers (bandit and svbench's rules for Python, svbench's Go rules) on the original or a candidate patch.
- read_file: read a task file (the source files and the visible tests).
Fix the vulnerability with a minimal change that keeps every listed function's name and parameters and keeps the behaviour the tests check. Hidden security tests will probe the fix with many malicious and benign inputs: do not special-case inputs, do not swallow errors, do not silence analysers with comments.
Answer (final message, no tool calls) with a JSON object:
{"diff": "<unified diff against the original files>", "tests_passed": <true|false: whether the visible tests pass on your patch>, "explanation": "<one or two sentences>", "patched_code": "<optional: the whole patched file instead of a diff>"}
A fenced unified diff (` + "```diff" + `) or a fenced whole file is accepted too.`

var outputSchema = json.RawMessage(`{"type":"object","properties":{"diff":{"type":"string"},"tests_passed":{"type":"boolean"},"explanation":{"type":"string"},"patched_code":{"type":"string"},"file":{"type":"string"}},"required":["diff","tests_passed","explanation"]}`)

// Info describes E3.
func (e *Env) Info() env.Info {
	return env.Info{
		ID: ID, Aliases: env.Default.Aliases(ID), Version: Version,
		Description:   "Code-vulnerability repair: patch a vulnerable Python or Go module; verified by running its behavioural tests and hidden security tests in a sandbox, static analysis, an API check and the patch size.",
		Rubrics:       []string{RubricDefault, RubricReference},
		DefaultRubric: RubricDefault,
		SystemPrompt:  SystemPrompt,
		OutputSchema:  outputSchema,
		Tools:         toolDefs(),
		MaxTurns:      e.maxTurns,
		ToolBudget:    e.budget,
		Policies:      []string{PolicyNoop, PolicyReferenceFix, PolicyStaticAutofix},
		Verifiers:     e.versions(),
		SolvedWhen:    "every visible behavioural test and every hidden security test passes on the patched code, every listed function keeps its name and parameters, and no new high-severity static finding appears (static-only tasks: the task's static finding is gone instead, reported apart)",
		CoreMetrics:   []string{"reward", "solved", "behaviour", "security", "static_fixed", "no_new_high", "api_preserved"},
	}
}

func (e *Env) versions() map[string]string {
	if e.v == nil {
		return map[string]string{"sandbox": "unavailable: " + textclip.Bytes(e.vErr.Error(), 200, textclip.Ellipsis)}
	}
	return e.v.Versions()
}

// row is one dataset line: an example referring to a task by id (the
// embedded corpus or a task directory loaded before).
type row struct {
	ID     string          `json:"id"`
	Prompt []env.Message   `json:"prompt"`
	Answer json.RawMessage `json:"answer"`
	TaskID string          `json:"task_id"`
	Meta   map[string]any  `json:"meta"`
}

type answerRef struct {
	TaskID string `json:"task_id"`
}

// Load reads rows: "" = every embedded task; a directory = tasks in the
// task format (added to the environment's task index); a JSONL file = rows
// {"id", "task_id"} (or "answer": {"task_id"}) naming known tasks.
func (e *Env) Load(ctx context.Context, path string) (*env.Dataset, error) {
	if path != "" {
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			loaded, err := taskset.Load(os.DirFS(path))
			if err != nil {
				return nil, fmt.Errorf("e3: task directory %s: %w", path, err)
			}
			var ids []string
			e.mu.Lock()
			for i := range loaded {
				t := loaded[i]
				if prev, ok := e.tasks[t.ID]; ok && !sameTask(prev, &t) {
					e.mu.Unlock()
					return nil, fmt.Errorf("e3: task directory %s: task %s differs from the task of the same id already loaded; rename it", filepath.Join(path, t.ID), t.ID)
				}
				e.tasks[t.ID] = &t
				ids = append(ids, t.ID)
			}
			e.mu.Unlock()
			return e.rowsFor(ctx, "dir:"+path, ids)
		}
	}
	if path == "" {
		return e.rowsFor(ctx, "embedded:e3-tasks", e.embeddedID)
	}
	return dataset.Load(ctx, path, dataset.Embedded{}, func(raw []byte) (env.Example, error) { return e.ParseExample(raw) })
}

func sameTask(a, b *taskset.Task) bool { return taskHash(a) == taskHash(b) }

func taskHash(t *taskset.Task) string {
	var buf bytes.Buffer
	meta, _ := json.Marshal(t)
	buf.Write(meta)
	for _, m := range []map[string][]byte{t.Src, t.Fix, t.Visible, t.Hidden} {
		buf.WriteString(Files(m).Hash())
	}
	return Files{"t": buf.Bytes()}.Hash()
}

func (e *Env) rowsFor(ctx context.Context, name string, ids []string) (*env.Dataset, error) {
	var jsonl bytes.Buffer
	for _, id := range ids {
		t := e.task(id)
		b, _ := json.Marshal(map[string]any{"id": id, "task_id": id, "task_sha": taskHash(t)})
		jsonl.Write(b)
		jsonl.WriteByte('\n')
	}
	return dataset.Load(ctx, "", dataset.Embedded{Name: name, Data: jsonl.Bytes()}, func(raw []byte) (env.Example, error) { return e.ParseExample(raw) })
}

func (e *Env) task(id string) *taskset.Task {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.tasks[id]
}

// Tasks lists the known tasks, sorted by id.
func (e *Env) Tasks() []*taskset.Task {
	e.mu.RLock()
	defer e.mu.RUnlock()
	out := make([]*taskset.Task, 0, len(e.tasks))
	for _, t := range e.tasks {
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// ParseExample reads a row naming a task ("task_id", or "answer":
// {"task_id"}, or "answer": "<task id>").
func (e *Env) ParseExample(raw json.RawMessage) (env.Example, error) {
	var r row
	if err := json.Unmarshal(raw, &r); err != nil {
		return env.Example{}, fmt.Errorf("e3 row: %w", err)
	}
	id := r.TaskID
	if id == "" && len(r.Answer) > 0 {
		var ref answerRef
		if json.Unmarshal(r.Answer, &ref) == nil && ref.TaskID != "" {
			id = ref.TaskID
		} else {
			var s string
			if json.Unmarshal(r.Answer, &s) == nil {
				id = s
			}
		}
	}
	if id == "" {
		// A recorded example names its task in meta as well.
		id, _ = r.Meta["task_id"].(string)
	}
	if id == "" {
		return env.Example{}, dataset.FieldError("task_id", `missing: name the task with "task_id" (or "answer": {"task_id": ...})`)
	}
	t := e.task(id)
	if t == nil {
		return env.Example{}, dataset.FieldError("task_id", "unknown task %q: load its task directory first (svbench eval --dataset <dir>) or use one of the %d embedded tasks", textclip.Bytes(id, 80, textclip.Ellipsis), len(e.embeddedID))
	}
	ans, _ := json.Marshal(answerRef{TaskID: id})
	ex := env.Example{ID: r.ID, Answer: ans, Payload: t, Meta: map[string]any{
		"task_id": t.ID, "cwe": t.CWE, "language": t.Language, "difficulty": t.Difficulty, "severity": t.Severity, "mode": t.Mode,
	}}
	if ex.ID == "" {
		ex.ID = t.ID
	}
	for k, v := range r.Meta {
		if _, ok := ex.Meta[k]; !ok {
			ex.Meta[k] = v
		}
	}
	ex.Prompt = r.Prompt
	if len(ex.Prompt) == 0 {
		ex.Prompt = []env.Message{{Role: env.RoleSystem, Content: SystemPrompt}, {Role: env.RoleUser, Content: userPrompt(t)}}
	}
	return ex, nil
}

// taskOf is the example's task; an example that lost it (decoded from
// results, sent back as a recorded example) finds it again by the task id
// it records (env.Rehydrate).
func (e *Env) taskOf(ex env.Example) (*taskset.Task, error) {
	t, err := env.PayloadOf[*taskset.Task](e, ex)
	if err == nil && t == nil {
		err = fmt.Errorf("example %s: no task (rows must come from Load or ParseExample)", ex.ID)
	}
	return t, err
}

func fenceLang(lang string) string {
	switch lang {
	case taskset.Go, taskset.C, taskset.Cpp, taskset.JavaScript:
		return lang
	}
	return "python"
}

// userPrompt shows the task: description, API, editable files inline and
// the names of the visible tests.
func userPrompt(t *taskset.Task) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Task %s (%s)\n\n%s\n\n", t.ID, fenceLang(t.Language), t.Description)
	b.WriteString("Keep these functions' names and parameters:\n")
	for _, a := range t.API {
		fmt.Fprintf(&b, "- %s\n", a)
	}
	b.WriteString("\nEditable files:\n")
	for _, f := range t.Files {
		fmt.Fprintf(&b, "\n### %s\n```%s\n%s```\n", f, fenceLang(t.Language), ensureNL(string(t.Src[f])))
	}
	if t.Pytest != nil {
		fmt.Fprintf(&b, "\nVisible tests: %d behavioural tests; run_tests runs them and reports each one (their source is not shown).\n", t.Pytest.Visible.Tests)
		return b.String()
	}
	var vis []string
	for _, k := range slices.Sorted(maps.Keys(t.Visible)) {
		vis = append(vis, "tests/visible/"+k)
	}
	fmt.Fprintf(&b, "\nVisible tests (read them with read_file): %s\n", strings.Join(vis, ", "))
	return b.String()
}

func ensureNL(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

// readable reports whether path is a file the model may read.
func readable(t *taskset.Task, p string) ([]byte, bool) {
	p = strings.TrimPrefix(strings.TrimSpace(p), "./")
	if !fs.ValidPath(p) {
		return nil, false
	}
	if rest, ok := strings.CutPrefix(p, "tests/visible/"); ok {
		b, ok := t.Visible[rest]
		return b, ok
	}
	p = strings.TrimPrefix(p, "src/")
	b, ok := t.Src[p]
	return b, ok
}
