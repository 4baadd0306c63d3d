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
	"strings"
	"sync"
	"sync/atomic"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/env/judgeutil"
	"github.com/svbench/svbench/envs/configaudit/policypack"
	"github.com/svbench/svbench/report"
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

// Reward sources: judgeutil's, shared with every environment that has a
// judge.
const (
	SourceExecutable = judgeutil.SourceExecutable
	SourceJudge      = judgeutil.SourceJudge
	SourceHybrid     = judgeutil.SourceHybrid
)

//go:embed data/mini.jsonl
var miniJSONL []byte

func init() {
	// "sv-env-config-verification" resolves through the registry's prefix rule.
	report.Register(report.Spec{Env: env.Spec{ID: ID, Aliases: []string{"e2"}, New: New, Config: DefaultConfig(), Breakdown: []string{"fixture_type", "source"}, Data: dataCommands, Flags: paramFlags},
		Build: BuildReport})
}

// Config is E2's configuration; README.md explains what each parameter
// changes.
type Config struct {
	ToolBudget int `param:"tool_budget" min:"0" max:"1000" doc:"tool calls allowed per episode; 0 offers no tools and a reading-only prompt"`
	MaxTurns   int `param:"max_turns" min:"1" max:"1000" doc:"assistant turns per episode"`
	judgeutil.Settings
	PolicySettings
}

// DefaultConfig is E2 as `svbench eval --env e2` runs it.
func DefaultConfig() Config {
	return Config{ToolBudget: DefaultToolBudget, MaxTurns: DefaultMaxTurns, Settings: judgeutil.DefaultSettings(), PolicySettings: defaultPolicySettings()}
}

// Validate implements env.Validator.
func (c Config) Validate() error { return c.PolicySettings.validate() }

// Env is the E2 environment. It is safe for concurrent use.
type Env struct {
	cfg      Config
	budget   int
	maxTurns int
	source   string
	// judging is the reward source with its judge and judge_weight.
	judging judgeutil.Config

	// The policy condition (policymode.go).
	mode        string
	checkBudget int
	checkDetail string
	packs       packSet
	compliant   compliantIndex

	packsOnce sync.Once
	packsErr  error

	once sync.Once
	v    *verifiers
	verr error
	// built publishes v to Info, which runs beside the first episode's
	// once.Do (a session opens, lists the environment and starts the
	// episode concurrently with another); reading v there raced.
	built atomic.Pointer[verifiers]
}

// New builds the environment from options (Config, decoded by the
// registry, and the judge model).
func New(opts env.Options) (env.Environment, error) { return NewEnv(opts) }

// NewEnv is New with the concrete type.
func NewEnv(opts env.Options) (*Env, error) {
	cfg, err := env.ConfigOf(ID, opts, DefaultConfig())
	if err != nil {
		return nil, err
	}
	judging, err := judgeutil.New(cfg.Settings, opts.Models)
	if err != nil {
		return nil, err
	}
	e := &Env{cfg: cfg, budget: cfg.ToolBudget, maxTurns: cfg.MaxTurns, judging: judging, source: judging.Source,
		mode: cfg.Mode, checkBudget: cfg.CheckPolicyBudget, checkDetail: cfg.CheckPolicyDetail}
	if e.mode == ModePolicy {
		if _, err := e.packSet(); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// packSet loads the policy packs on first use (the embedded ones and the
// policy_packs directories).
func (e *Env) packSet() (packSet, error) {
	e.packsOnce.Do(func() { e.packs, e.packsErr = loadPacks(e.cfg.PolicyPacks) })
	return e.packs, e.packsErr
}

// verifiersFor builds the scanners on first use: trivy's checks take about a
// second to compile, which listing environments should not pay.
func (e *Env) verifiers(ctx context.Context) (*verifiers, error) {
	e.once.Do(func() {
		e.v, e.verr = newVerifiers(ctx, splitDirs(e.cfg.PolicyDirs))
		e.built.Store(e.v)
	})
	return e.v, e.verr
}

// Info describes the environment.
func (e *Env) Info() env.Info {
	info := env.Info{
		ID: ID, Aliases: env.Default.Aliases(ID), Version: Version,
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
	if e.mode == ModePolicy {
		info.Description = "Audit a Kubernetes manifest or Terraform file against an organisation's written policy (clauses, exceptions); report violated clauses and a patch, scored by the policy's hidden Rego."
		info.SystemPrompt = policyInstructions(e.budget > 0) + "\n\n# Organisation policy (pack <id>)\n\n<the pack's policy.md>"
		info.Rubrics = []string{RubricDefault}
		info.Tools = e.policyTools()
		info.Policies = []string{PolicyToolOnly, PolicyOracle}
		info.SolvedWhen = SolvedWhenPolicy
	}
	if e.budget == 0 {
		info.Tools = nil
		if e.mode != ModePolicy {
			info.SystemPrompt = SystemPromptNoTools
		}
	}
	if v := e.built.Load(); v != nil {
		info.Verifiers = v.versions()
	}
	return info
}

// Load reads a dataset; "" is the embedded public mini set.
func (e *Env) Load(ctx context.Context, path string) (*env.Dataset, error) {
	ds := &env.Dataset{}
	fn := func(_ int, raw []byte) error {
		row, err := parseRow(raw)
		if err != nil {
			return err
		}
		if e.mode != ModePolicy && row.PolicyPack != "" {
			// An evaluation's parameters name its condition (reports and
			// scoreboards group by them): policy rows need mode=policy.
			return dataset.FieldError("policy_pack", "is %q: the dataset holds rows of the policy condition; run with --param mode=policy", row.PolicyPack)
		}
		ex, err := e.rowExample(row)
		if err != nil {
			return err
		}
		ds.Examples = append(ds.Examples, ex)
		return nil
	}
	if path == "" {
		id, data := "embedded:e2-mini", miniJSONL
		if e.mode == ModePolicy {
			id, data = "embedded:e2-policy-mini", policypack.MiniSetJSONL()
		}
		if err := dataset.EachLine(bytes.NewReader(data), id, fn); err != nil {
			return nil, err
		}
		ds.Info = env.DatasetInfo{ID: id, Revision: dataset.Revision(data)}
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

// ParseExample accepts svbench rows, reference rows and score rows. A row
// naming a policy pack is scored in the policy condition whatever the
// mode, so `svbench score` and the reward server take both kinds; Load
// (an evaluation's dataset) insists on mode=policy for them.
func (e *Env) ParseExample(raw json.RawMessage) (env.Example, error) {
	row, err := parseRow(raw)
	if err != nil {
		return env.Example{}, err
	}
	return e.rowExample(row)
}

// rowExample checks a row against the environment's condition and builds
// its example.
func (e *Env) rowExample(row Row) (env.Example, error) {
	if e.mode != ModePolicy && row.PolicyPack == "" {
		return row.toExample(nil, e.budget > 0)
	}
	packs, err := e.packSet()
	if err != nil {
		return env.Example{}, err
	}
	if row.PolicyPack == "" {
		return env.Example{}, dataset.FieldError("policy_pack", "is missing: mode=policy audits each row against the policy pack it names (known: %s)", strings.Join(packs.ids(), ", "))
	}
	pk, err := packs.lookup(row.PolicyPack)
	if err != nil {
		return env.Example{}, dataset.FieldError("policy_pack", "%v", err)
	}
	if want := policypack.RowFixtureType(pk.FixtureType()); want != row.FixtureType {
		return env.Example{}, dataset.FieldError("fixture_type", "is %q but policy pack %s audits %q files", row.FixtureType, pk.ID(), want)
	}
	e.compliant.add([]byte(row.Content), []byte(row.Compliant))
	return row.toExample(pk, e.budget > 0)
}

// payload is the example's fixture; an example that lost it (decoded from
// results, sent back as a recorded example) is parsed again (env.Rehydrate).
func (e *Env) payload(ex env.Example) (*fixture, error) {
	fx, err := env.PayloadOf[*fixture](e, ex)
	if err == nil && fx == nil {
		err = fmt.Errorf("example %s: no fixture", ex.ID)
	}
	return fx, err
}

// Start opens an episode.
func (e *Env) Start(ctx context.Context, ex env.Example) (env.Episode, error) {
	fx, err := e.payload(ex)
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
	return &episode{e: e, fx: fx, prompt: prompt, budget: e.budget}, nil
}

var _ env.ScoreCoster = (*Env)(nil)

// ScoreCost is light for the executable rubric (scanners in-process) and
// heavy when the reward source asks the judge model (see
// judgeutil.Config.ScoreCost).
func (e *Env) ScoreCost() env.ScoreCost { return e.judging.ScoreCost(env.CostLight) }
