// Package toyparity is a seventh environment kept as a test fixture: one
// package and one blank import must make it work in every svbench command
// (eval, score, serve, report, compare, scoreboard, leaderboard, view, data,
// probe) with no code outside this package. The task: does a bit string hold
// an odd number of ones? It answers yes or no.
package toyparity

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
)

// ID is the environment's canonical id.
const ID = "toy-parity"

//go:embed mini.jsonl
var mini []byte

func init() {
	env.Register(env.Spec{ID: ID, Aliases: []string{"e7"}, New: func(env.Options) (env.Environment, error) { return Env{}, nil },
		Breakdown: []string{"length"}, Data: func() []env.DataCommand { return []env.DataCommand{generate()} }})
}

// Env is the environment; it holds nothing.
type Env struct{}

type row struct {
	ID     string            `json:"id"`
	Bits   string            `json:"bits"`
	Answer string            `json:"answer"`
	Meta   map[string]string `json:"meta"`
	// Prompt is a recorded example's (env.Rehydrate): it has no bits.
	Prompt []env.Message `json:"prompt"`
}

// Info describes the task.
func (Env) Info() env.Info {
	return env.Info{ID: ID, Aliases: env.Default.Aliases(ID), Version: "0.1.0", Description: "parity of a bit string (test fixture)",
		Rubrics: []string{"default"}, DefaultRubric: "default", SystemPrompt: "Answer yes or no.", MaxTurns: 1,
		Policies: []string{"count"}, SolvedWhen: "the answer is the gold yes/no", CoreMetrics: []string{"reward"}}
}

// Load reads the embedded set or a JSONL file.
func (e Env) Load(ctx context.Context, path string) (*env.Dataset, error) {
	return dataset.Load(ctx, path, dataset.Embedded{Name: "embedded:toy-parity", Data: mini}, func(raw []byte) (env.Example, error) { return e.ParseExample(raw) })
}

// ParseExample reads one row.
func (Env) ParseExample(raw json.RawMessage) (env.Example, error) {
	var r row
	if err := json.Unmarshal(raw, &r); err != nil {
		return env.Example{}, err
	}
	if r.Answer != "yes" && r.Answer != "no" {
		return env.Example{}, dataset.FieldError("answer", "want yes or no, got %q", r.Answer)
	}
	meta := map[string]any{}
	for k, v := range r.Meta {
		meta[k] = v
	}
	ans, _ := json.Marshal(r.Answer)
	prompt := r.Prompt
	if r.Bits != "" || len(prompt) == 0 {
		prompt = env.NewSingleTurn("Answer yes or no.", "Does "+r.Bits+" hold an odd number of ones?").Messages
	}
	return env.Example{ID: r.ID, Answer: ans, Meta: meta, Prompt: prompt}, nil
}

// Start opens a single-turn episode.
func (Env) Start(_ context.Context, ex env.Example) (env.Episode, error) {
	return &env.SingleTurn{Messages: ex.Prompt}, nil
}

// Parse reads the model's answer: the first word, yes or no.
func Parse(text string) (string, bool) {
	f := strings.Fields(strings.ToLower(text))
	if len(f) == 0 {
		return "", false
	}
	w := strings.Trim(f[0], ".!,")
	return w, w == "yes" || w == "no"
}

// Score pays 1 for the gold answer, 0.1 for a readable wrong one.
func (Env) Score(_ context.Context, ex env.Example, r *env.Rollout, _ string) (env.Score, error) {
	var gold string
	if err := json.Unmarshal(ex.Answer, &gold); err != nil {
		return env.Score{}, fmt.Errorf("answer: %w", err)
	}
	got, ok := Parse(r.FinalText())
	s := env.Score{Components: map[string]float64{"correct": 0, "format": 0}, Weights: map[string]float64{"correct": 1, "format": 0.1},
		Rubric: "default", Parsed: map[string]any{"answer": got, "valid": ok}}
	if ok {
		s.Components["format"] = 1
	}
	if got == gold {
		s.Components["correct"], s.Solved = 1, true
	}
	s.Total = s.Components["correct"] + 0.1*s.Components["format"]
	return s, nil
}

// DescribeRubric declares the one rubric's components (env.RubricDescriber).
func (Env) DescribeRubric(rubric string) (env.RubricInfo, error) {
	if rubric != "" && rubric != "default" {
		return env.RubricInfo{}, env.UnknownRubric(ID, rubric, "default")
	}
	return env.NewRubricInfo("default", env.RubricComponent{Name: "correct", Weight: 1, Min: 0, Max: 1},
		env.RubricComponent{Name: "format", Weight: 0.1, Min: 0, Max: 1}), nil
}

// Policy "count" counts the ones.
func (Env) Policy(name string) (env.Policy, bool) {
	if name != "count" {
		return nil, false
	}
	return env.PolicyFunc(func(_ context.Context, conv []env.Message, _ []env.Tool) (env.Message, error) {
		ans, user := "no", ""
		for _, m := range conv {
			if m.Role == env.RoleUser {
				user = m.Content
			}
		}
		if strings.Count(user, "1")%2 == 1 {
			ans = "yes"
		}
		return env.Message{Role: env.RoleAssistant, Content: ans}, nil
	}), true
}

// ReferencePolicy answers the row's gold yes/no (envtest.Referencer).
func (Env) ReferencePolicy(ex env.Example) (env.Policy, error) {
	var gold string
	if err := json.Unmarshal(ex.Answer, &gold); err != nil {
		return nil, fmt.Errorf("answer: %w", err)
	}
	return env.PolicyFunc(func(context.Context, []env.Message, []env.Tool) (env.Message, error) {
		return env.Message{Role: env.RoleAssistant, Content: gold}, nil
	}), nil
}

// Exploits: always yes.
func (e Env) Exploits() []env.Exploit {
	yes := env.PolicyFunc(func(context.Context, []env.Message, []env.Tool) (env.Message, error) {
		return env.Message{Role: env.RoleAssistant, Content: "yes"}, nil
	})
	return []env.Exploit{{Name: "always-yes", Family: "label shortcut", Description: "answers yes to everything", Policy: yes}}
}

// HonestPolicy is the counting baseline.
func (Env) HonestPolicy() string { return "count" }

// generate is the environment's dataset generator: `svbench data generate
// e7 --n N --out FILE` writes N rows of random bit strings.
func generate() env.DataCommand {
	return env.DataCommand{Kind: env.DataGenerate, Short: "Generate parity rows", MaxArgs: 0,
		Flags: func(fs *pflag.FlagSet) env.DataRunner {
			n := fs.Int("n", 12, "rows")
			seed := fs.Uint64("seed", 1, "seed")
			out := fs.String("out", "", "JSONL file to write")
			return func(_ context.Context, _ []string, w env.DataIO) error {
				if *out == "" || *n <= 0 {
					return env.Usagef("--out FILE and a positive --n are required")
				}
				if *n > 1<<10 {
					return env.Usagef("--n %d: at most %d distinct rows", *n, 1<<10)
				}
				perm := rand.New(rand.NewPCG(*seed, 0)).Perm(1 << 10)
				var b strings.Builder
				for i := range *n {
					bits := strconv.FormatUint(uint64(perm[i])|1<<10, 2)
					ans := map[bool]string{true: "yes", false: "no"}[strings.Count(bits, "1")%2 == 1]
					line, _ := json.Marshal(row{ID: fmt.Sprintf("g%03d", i), Bits: bits, Answer: ans, Meta: map[string]string{"length": "long"}})
					b.Write(append(line, '\n'))
				}
				if err := os.WriteFile(*out, []byte(b.String()), 0o644); err != nil {
					return err
				}
				fmt.Fprintf(w.Out, "wrote %d rows to %s\n", *n, *out)
				return nil
			}
		}}
}
