// Package configaudit is E2, config verification: a tool-calling episode in
// which a model audits one Kubernetes manifest or Terraform file with
// kube-linter, trivy and OPA, reports the violations and proposes a patch.
// Rewards come from executing the verifiers on the original and the patched
// file; ground truth comes from the mutation labels of svbench's own secure
// corpus merged with the verifiers' findings.
package configaudit

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
)

// ID is the canonical environment id.
const ID = "config-verification"

// Version changes whenever prompts, tools or rubrics change meaning.
const Version = "0.3.0"

// Defaults for the episode parameters.
const (
	DefaultToolBudget = 6
	DefaultMaxTurns   = 6
)

// Reward sources.
const (
	SourceExecutable = "executable"
	SourceJudge      = "llm_judge"
	SourceHybrid     = "hybrid"
)

//go:embed data/mini.jsonl
var miniJSONL []byte

func init() {
	// "sv-env-config-verification" resolves through the registry's prefix rule.
	env.Register(env.Spec{ID: ID, Aliases: []string{"e2"}, New: New, Params: Params})
}

// Params are E2's parameters; README.md explains what each changes.
var Params = []env.ParamSpec{
	{Name: "tool_budget", Kind: env.ParamInt, Default: strconv.Itoa(DefaultToolBudget), Min: 0, Max: 1000,
		Doc: "tool calls allowed per episode; 0 offers no tools and a reading-only prompt"},
	{Name: "max_turns", Kind: env.ParamInt, Default: strconv.Itoa(DefaultMaxTurns), Min: 1, Max: 1000,
		Doc: "assistant turns per episode"},
	{Name: "reward_source", Kind: env.ParamEnum, Default: SourceExecutable, Values: []string{SourceExecutable, SourceJudge, SourceHybrid},
		Doc: "executable verifiers, an LLM judge (needs --judge-model), or both summed"},
}

// Env is the E2 environment. It is safe for concurrent use.
type Env struct {
	opts     env.Options
	budget   int
	maxTurns int
	source   string

	once sync.Once
	v    *verifiers
	verr error
}

// New builds the environment from options. Params: "tool_budget",
// "max_turns", "reward_source" (executable | llm_judge | hybrid).
func New(opts env.Options) (env.Environment, error) { return NewEnv(opts) }

// NewEnv is New with the concrete type.
func NewEnv(opts env.Options) (*Env, error) {
	if err := env.CheckParams(ID, Params, opts.Params); err != nil {
		return nil, err
	}
	e := &Env{opts: opts, budget: DefaultToolBudget, maxTurns: DefaultMaxTurns, source: SourceExecutable}
	if v, ok := opts.Params["tool_budget"]; ok {
		e.budget, _ = strconv.Atoi(strings.TrimSpace(v))
	}
	if v, ok := opts.Params["max_turns"]; ok {
		e.maxTurns, _ = strconv.Atoi(strings.TrimSpace(v))
	}
	if v, ok := opts.Params["reward_source"]; ok {
		e.source = v
	}
	if e.source != SourceExecutable && opts.Judge == nil {
		return nil, fmt.Errorf("reward_source=%s needs a judge model; configure one (e.g. --judge-model) or use reward_source=executable", e.source)
	}
	return e, nil
}

// verifiersFor builds the scanners on first use: trivy's checks take about a
// second to compile, which listing environments should not pay.
func (e *Env) verifiers(ctx context.Context) (*verifiers, error) {
	e.once.Do(func() { e.v, e.verr = newVerifiers(ctx, e.opts.PolicyDirs) })
	return e.v, e.verr
}

// Info describes the environment.
func (e *Env) Info() env.Info {
	info := env.Info{
		ID: ID, Aliases: []string{"e2", "sv-env-config-verification"}, Version: Version,
		Description:   "Audit a Kubernetes manifest or Terraform file with kube-linter, trivy and OPA; report violations and a minimal patch, scored by re-running the verifiers.",
		Rubrics:       []string{RubricDefault, RubricReference},
		DefaultRubric: RubricDefault,
		SystemPrompt:  SystemPrompt,
		OutputSchema:  OutputSchema,
		Tools:         toolDefs(),
		MaxTurns:      e.maxTurns,
		ToolBudget:    e.budget,
		SolvedWhen:    SolvedWhen,
		CoreMetrics:   []string{"reward", "config_auditing", "solved"},
		Policies:      []string{PolicyToolOnly, PolicyToolAutofix},
	}
	if e.budget == 0 {
		info.SystemPrompt, info.Tools = SystemPromptNoTools, nil
	}
	if e.v != nil {
		info.Verifiers = e.v.versions()
	}
	return info
}

// Load reads a dataset; "" is the embedded public mini set.
func (e *Env) Load(ctx context.Context, path string) (*env.Dataset, error) {
	ds := &env.Dataset{}
	fn := func(_ int, raw []byte) error {
		ex, err := e.ParseExample(raw)
		if err != nil {
			return err
		}
		ds.Examples = append(ds.Examples, ex)
		return nil
	}
	if path == "" {
		if err := dataset.EachLine(bytes.NewReader(miniJSONL), "embedded:e2-mini", fn); err != nil {
			return nil, err
		}
		ds.Info = env.DatasetInfo{ID: "embedded:e2-mini", Revision: dataset.Revision(miniJSONL)}
	} else {
		rev, err := dataset.ReadFile(path, fn)
		if err != nil {
			return nil, err
		}
		ds.Info = env.DatasetInfo{ID: path, Revision: rev}
	}
	ds.Info.Rows = len(ds.Examples)
	if ds.Info.Rows == 0 {
		return nil, fmt.Errorf("dataset %s has no rows", ds.Info.ID)
	}
	return ds, nil
}

// ParseExample accepts svbench rows, reference rows and score rows.
func (e *Env) ParseExample(raw json.RawMessage) (env.Example, error) {
	row, err := parseRow(raw)
	if err != nil {
		return env.Example{}, err
	}
	return row.toExample()
}

func payload(ex env.Example) (*fixture, error) {
	if fx, ok := ex.Payload.(*fixture); ok && fx != nil {
		return fx, nil
	}
	// An example built elsewhere (e.g. decoded from results) carries only
	// its answer and prompt: rebuild the fixture from them.
	row := map[string]any{"answer": ex.Answer, "prompt": ex.Prompt, "id": ex.ID}
	raw, err := json.Marshal(row)
	if err != nil {
		return nil, err
	}
	r, err := parseRow(raw)
	if err != nil {
		return nil, fmt.Errorf("example %s: %w", ex.ID, err)
	}
	ex2, err := r.toExample()
	if err != nil {
		return nil, err
	}
	return ex2.Payload.(*fixture), nil
}

// Start opens an episode.
func (e *Env) Start(ctx context.Context, ex env.Example) (env.Episode, error) {
	fx, err := payload(ex)
	if err != nil {
		return nil, err
	}
	if _, err := e.verifiers(ctx); err != nil {
		return nil, fmt.Errorf("config-verification: starting verifiers: %w", err)
	}
	prompt := ex.Prompt
	if len(prompt) == 0 {
		prompt = []env.Message{{Role: env.RoleSystem, Content: SystemPrompt}, {Role: env.RoleUser, Content: userPrompt(fx.Path, string(fx.Content))}}
	}
	if e.budget == 0 {
		prompt = append([]env.Message(nil), prompt...)
		for i := range prompt {
			if prompt[i].Role == env.RoleSystem && prompt[i].Content == SystemPrompt {
				prompt[i].Content = SystemPromptNoTools
			}
		}
	}
	return &episode{e: e, fx: fx, prompt: prompt, budget: e.budget, maxTurn: e.maxTurns}, nil
}
