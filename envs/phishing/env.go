// Package phishing is E4, phishing detection: the model reads one raw email
// (headers and MIME body) and answers Phishing, Legitimate or Abstain with a
// confidence and evidence quoted from the message. Evidence is graded
// against indicators a deterministic parser extracts (package mail), so a
// model is rewarded for pointing at real red flags, not for naming them.
package phishing

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/env/judgeutil"
	"github.com/svbench/svbench/envs/phishing/mail"
	"github.com/svbench/svbench/report"
)

// ID is the canonical environment id.
const ID = "phishing-detection"

// Version changes whenever prompts, parsing or scoring change in a way that
// moves numbers.
const Version = "1.1.0"

// aliases are registered once; Info reads them back from the registry,
// which accepts the reference's "sv-env-" prefix by itself.
var aliases = []string{"e4"}

// SystemPrompt asks for the reference's answer shape with typed evidence.
var SystemPrompt = `You are an email security analyst. Review the message and respond with only a JSON object:
{"label": "Phishing|Legitimate|Abstain", "confidence": 0.0-1.0, "evidence": [{"type": "<indicator type>", "value": "<text quoted from the email>"}]}

- "confidence" is your probability (a JSON number) that the label is correct; be calibrated.
- Missing a phishing email costs the most; a false alarm costs less; Abstain costs less than a wrong call but far less than a right one.
- Each evidence "value" must be copied from the email (a header value, URL, file name or phrase) and "type" must be one of: ` + typeList() + `.
- Quote only real red flags; on a legitimate email give an empty list. At most 32 items.`

func typeList() string {
	var b bytes.Buffer
	for i, t := range mail.Types {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(t)
	}
	return b.String()
}

var outputSchema = json.RawMessage(`{"type":"object","required":["label","confidence"],"properties":{"label":{"type":"string","enum":["Phishing","Legitimate","Abstain"]},"confidence":{"type":"number","minimum":0,"maximum":1},"evidence":{"type":"array","maxItems":32,"items":{"type":"object","required":["type","value"],"properties":{"type":{"type":"string"},"value":{"type":"string"}}}}}}`)

//go:generate go test -run TestMiniSetReproducible -update .

//go:embed data/mini.jsonl
var miniSet []byte

// Environment is E4. It holds no mutable state and is safe for concurrent use.
type Environment struct {
	// rs is the reward source; the zero value is the executable rubric.
	rs judgeutil.Config
}

// Config is E4's configuration: the reward source study's switches.
type Config struct {
	judgeutil.Settings
}

// DefaultConfig is E4 as `svbench eval --env e4` runs it.
func DefaultConfig() Config { return Config{Settings: judgeutil.DefaultSettings()} }

func init() {
	report.Register(report.Spec{Env: env.Spec{
		ID:      ID,
		Aliases: aliases,
		New:     func(opts env.Options) (env.Environment, error) { return NewWithOptions(opts) },
		Config:  DefaultConfig(),
		// Breakdown: the meta fields compare slices results by.
		Breakdown: []string{"difficulty", "language", "campaign", "source"},
		Data:      dataCommands,
	}, Build: BuildReport, KeyMetricsVersion: KeyMetricsVersion})
}

// New returns the environment scored by its executable rubric.
func New() *Environment {
	return &Environment{rs: judgeutil.Config{Source: judgeutil.SourceExecutable}}
}

// NewWithOptions builds E4 with parameters: reward_source (executable |
// llm_judge | hybrid, the judge from opts.Models[env.ModelJudge]) and judge_weight.
func NewWithOptions(opts env.Options) (*Environment, error) {
	c, err := env.ConfigOf(ID, opts, DefaultConfig())
	if err != nil {
		return nil, err
	}
	rs, err := judgeutil.New(c.Settings, opts.Models)
	if err != nil {
		return nil, err
	}
	return &Environment{rs: rs}, nil
}

// Info describes E4.
func (e *Environment) Info() env.Info {
	return env.Info{
		ID:            ID,
		Aliases:       env.Default.Aliases(ID),
		Version:       Version,
		Description:   "Phishing detection: classify one raw email as Phishing, Legitimate or Abstain with a calibrated confidence and evidence quoted from the message.",
		Rubrics:       []string{RubricDefault, RubricReference},
		DefaultRubric: RubricDefault,
		SystemPrompt:  SystemPrompt,
		OutputSchema:  outputSchema,
		MaxTurns:      1,
		Policies:      []string{PolicyIndicators},
		SolvedWhen:    "the label is the gold label (Phishing or Legitimate); an abstention is never solved, evidence is scored separately",
		CoreMetrics:   []string{"reward", "accuracy", "evidence", "solved"},
	}
}

// Load reads a JSONL dataset (svbench rows or the reference's row shape);
// "" loads the embedded public mini set.
func (e *Environment) Load(ctx context.Context, path string) (*env.Dataset, error) {
	return dataset.Load(ctx, path, dataset.Embedded{Name: "embedded:e4-mini", Data: miniSet}, func(raw []byte) (env.Example, error) {
		return parseRow(raw, true)
	})
}

// ParseExample reads one row. Only "answer" is required, so trainers can
// score rows that carry the prompt separately.
func (e *Environment) ParseExample(row json.RawMessage) (env.Example, error) {
	return parseRow(row, false)
}

// Start opens the single-turn episode.
func (e *Environment) Start(_ context.Context, ex env.Example) (env.Episode, error) {
	return &env.SingleTurn{Messages: ex.Prompt}, nil
}

// Score grades the final assistant message, then asks the judge when the
// reward source needs one. A judge failure is an error wrapping
// judgeutil.ErrJudge, never a zero verdict.
func (e *Environment) Score(ctx context.Context, ex env.Example, r *env.Rollout, rubric string) (env.Score, error) {
	p, err := env.PayloadOf[*payload](e, ex)
	if err != nil {
		return env.Score{}, err
	}
	if p == nil || p.gold == "" {
		return env.Score{}, fmt.Errorf("example %s: answer missing or not a label", ex.ID)
	}
	text := r.FinalText()
	s, err := scoreText(p, text, rubric)
	if err != nil {
		return s, err
	}
	s.Solved = s.Components["accuracy"] >= 1
	return e.rs.Apply(s, func() (float64, error) {
		return judgeutil.Verdict(ctx, e.rs.Judge, judgeSystem, judgePrompt(p, text))
	})
}

// scoreText scores a completion text against a payload.
func scoreText(p *payload, text, rubric string) (env.Score, error) {
	out := ParseOutput(text)
	an, hay := p.analysis()
	g := Ground(out.Items, out.EvidenceCount, an, hay)
	s := scored{out: out, p: p, g: g}
	view := map[string]any{
		"predicted_label":     out.Label,
		"evidence_items":      out.EvidenceCount,
		"evidence_grounded":   g.Grounded,
		"evidence_precision":  g.Precision,
		"evidence_duplicates": g.Duplicates,
		"indicator_types":     g.IndicatorTypes,
	}
	if g.IndicatorTypes > 0 {
		view["evidence_recall"] = g.Recall
	}
	if g.Excess {
		view["evidence_excess"] = true
	}
	switch rubric {
	case "", RubricDefault:
		view["confidence"] = out.Confidence
		view["format_valid"] = defFormatValid(out)
		return defaultRubric.Evaluate(env.Example{}, s, view), nil
	case RubricReference:
		view["confidence"] = out.RefConfidence
		view["format_valid"] = refFormat(env.Example{}, s) == 1
		return referenceRubric.Evaluate(env.Example{}, s, view), nil
	}
	return env.Score{}, fmt.Errorf("unknown rubric %q for %s (known: %s, %s)", rubric, ID, RubricDefault, RubricReference)
}

var _ env.ScoreCoster = (*Environment)(nil)

// ScoreCost is light for the executable rubric and heavy when the reward
// source asks the judge model (see judgeutil.Config.ScoreCost).
func (e *Environment) ScoreCost() env.ScoreCost { return e.rs.ScoreCost(env.CostLight) }
