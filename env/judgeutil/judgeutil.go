// Package judgeutil holds what environments share to offer the llm_judge and
// hybrid reward sources: the declared parameters, a strict yes/no reading
// of the judge's reply that fails closed, fencing of model output inside
// the judge's prompt, and the way a judge verdict joins a rubric's score.
package judgeutil

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/svbench/svbench/env"

	"github.com/svbench/svbench/base/clip"
)

// Reward sources (the values of the reward_source parameter).
const (
	SourceExecutable = "executable"
	SourceJudge      = "llm_judge"
	SourceHybrid     = "hybrid"
)

// Component is the name of the judge's reward component.
const Component = "judge"

// ErrJudge marks every failure to obtain a verdict: no judge configured,
// the endpoint failing, or a reply that is neither yes nor no. Callers
// count such rows apart; a failed judgement is never scored as a "no".
var ErrJudge = errors.New("judge gave no verdict")

// MaxReplyShown bounds how much of an unreadable reply an error quotes.
const MaxReplyShown = 80

// Settings are the reward-source parameters an environment offering the
// judge embeds in its configuration struct (env.Spec.Config).
type Settings struct {
	RewardSource string  `param:"reward_source" enum:"executable,llm_judge,hybrid" doc:"executable rubric, an LLM judge's yes/no (needs --judge-model), or the rubric plus the judge"`
	JudgeWeight  float64 `param:"judge_weight" min:"0" max:"10" doc:"weight of the judge component under reward_source=hybrid (the reference's E1 hybrid config uses 0.1)"`
}

// SourceOfReward makes every configuration embedding Settings an
// env.RewardSourced.
func (s Settings) SourceOfReward() string { return s.RewardSource }

// DefaultSettings are the executable rubric, the judge weighing 1 under
// hybrid.
func DefaultSettings() Settings { return Settings{RewardSource: SourceExecutable, JudgeWeight: 1} }

// Config is an environment's reward source with its judge.
type Config struct {
	Source string
	// Weight is the judge component's weight under hybrid (llm_judge
	// always weighs it 1: the judge's verdict is the whole reward).
	Weight float64
	Judge  env.Model
}

// New joins decoded settings to the judge model. It refuses a judge source
// without a judge, so a run never starts that could only fail.
func New(s Settings, models map[string]env.Model) (Config, error) {
	c := Config{Source: s.RewardSource, Weight: s.JudgeWeight, Judge: models[env.ModelJudge]}
	if c.UsesJudge() && c.Judge == nil {
		return c, fmt.Errorf("reward_source=%s needs a judge model; configure one (e.g. --judge-model) or use reward_source=executable", c.Source)
	}
	return c, nil
}

// UsesJudge says whether scoring asks the judge.
func (c Config) UsesJudge() bool { return c.Source == SourceJudge || c.Source == SourceHybrid }

// ScoreCost is the cost class of scoring under this reward source, for an
// environment whose executable rubric costs own: asking the judge is a
// remote model call per item (seconds), so a reward service must queue
// judge-backed scoring as heavy, not beside microsecond parsers.
// Environments offering the judge implement env.ScoreCoster with it.
func (c Config) ScoreCost(own env.ScoreCost) env.ScoreCost {
	if c.UsesJudge() {
		return env.CostHeavy
	}
	return own
}

// Apply folds a judge verdict into the executable score: unchanged for
// executable, the verdict alone (component "judge", weight 1) for
// llm_judge, the executable components plus "judge" at c.Weight for
// hybrid. Parsed and Solved stay the executable evaluation's: what the
// model answered and whether it did the task do not depend on who grades
// it. ask is called only when the source needs it; its error is returned
// (wrapped in ErrJudge), never turned into a verdict.
func (c Config) Apply(s env.Score, ask func() (float64, error)) (env.Score, error) {
	if !c.UsesJudge() {
		return s, nil
	}
	v, err := ask()
	if err != nil {
		if !errors.Is(err, ErrJudge) {
			err = fmt.Errorf("%w: %w", ErrJudge, err)
		}
		return env.Score{}, err
	}
	if c.Source == SourceJudge {
		s.Components = map[string]float64{Component: v}
		s.Weights = map[string]float64{Component: 1}
		s.Total = v
		return s, nil
	}
	comps := make(map[string]float64, len(s.Components)+1)
	weights := make(map[string]float64, len(s.Weights)+1)
	for k, x := range s.Components {
		comps[k] = x
	}
	for k, x := range s.Weights {
		weights[k] = x
	}
	comps[Component], weights[Component] = v, c.Weight
	s.Components, s.Weights = comps, weights
	s.Total += c.Weight * v
	return s, nil
}

// Verdict asks the judge one system + user question and reads its reply
// strictly: 1 for yes, 0 for no, an error wrapping ErrJudge otherwise.
func Verdict(ctx context.Context, j env.Model, system, prompt string) (float64, error) {
	if j == nil {
		return 0, fmt.Errorf("%w: no judge model configured (--judge-model)", ErrJudge)
	}
	reply, _, err := j.Chat(ctx, Question(system, prompt))
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrJudge, err)
	}
	return ParseVerdict(reply.Content)
}

// Question is the conversation a verdict is asked in.
func Question(system, prompt string) []env.Message {
	return []env.Message{{Role: env.RoleSystem, Content: system}, {Role: env.RoleUser, Content: prompt}}
}

// ParseVerdict reads the reply's first word, ignoring quotes, markdown
// emphasis and trailing punctuation: yes → 1, no → 0. Anything else is an
// error quoting the start of the reply, so an evasive or truncated reply
// is visible instead of silently counting as "no".
func ParseVerdict(reply string) (float64, error) {
	s := strings.TrimSpace(reply)
	s = strings.TrimLeft(s, "\"'*`_#>[( \t\r\n")
	end := strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	})
	word := s
	if end >= 0 {
		word = s[:end]
	}
	switch strings.ToLower(word) {
	case "yes":
		return 1, nil
	case "no":
		return 0, nil
	}
	return 0, fmt.Errorf("%w: reply is neither yes nor no: %q", ErrJudge, Truncate(strings.TrimSpace(reply), MaxReplyShown))
}

// Truncate cuts s to at most n bytes on a rune boundary, marking the cut.
func Truncate(s string, n int) string {
	return clip.Bytes(s, n, "\n[truncated]")
}

// Fence puts untrusted text (a model's answer, an email) between named
// markers, removing any copy of the markers inside it so the text cannot
// close its own fence and pose as instructions to the judge.
func Fence(name, text string, limit int) string {
	open, close := "<<<"+name+">>>", "<<<END "+name+">>>"
	// Repeat until stable: removing one marker can join the halves of
	// another ("<<<END <<<END X>>>X>>>").
	for strings.Contains(text, close) || strings.Contains(text, open) {
		text = strings.ReplaceAll(text, close, "")
		text = strings.ReplaceAll(text, open, "")
	}
	return open + "\n" + Truncate(text, limit) + "\n" + close
}

// Func adapts a function answering one system + user question to the
// env.Model a judge is: a library user's or a test's judge without a model
// client. Any other conversation shape is refused, as a judge asked by
// Verdict never sees one.
type Func struct {
	Model string
	Ask   func(ctx context.Context, system, prompt string) (string, error)
}

// Chat answers a conversation of one system and one user message.
func (f Func) Chat(ctx context.Context, msgs []env.Message) (env.Message, env.Usage, error) {
	if len(msgs) != 2 || msgs[0].Role != env.RoleSystem || msgs[1].Role != env.RoleUser {
		return env.Message{}, env.Usage{}, fmt.Errorf("%w: judge %q answers one system and one user message, got %d messages", ErrJudge, f.Model, len(msgs))
	}
	reply, err := f.Ask(ctx, msgs[0].Content, msgs[1].Content)
	return env.Message{Role: env.RoleAssistant, Content: reply}, env.Usage{}, err
}

// Name is the judge's model name.
func (f Func) Name() string { return f.Model }

// Models is the Options.Models carrying j as the judge (nil for no judge).
func Models(j env.Model) map[string]env.Model {
	if j == nil {
		return nil
	}
	return map[string]env.Model{env.ModelJudge: j}
}
