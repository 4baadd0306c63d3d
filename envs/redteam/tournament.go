package redteam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/spf13/pflag"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/base/atomicfile"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/report"
)

// The parameters through which E5 and E6 meet their served opponent
// (recorded in metadata, so --resume restores them and compare treats
// another opponent as another budget).
const (
	paramTargetModel   = "target_model"
	paramAttackerModel = "attacker_model"
)

// TournamentConfig is one tournament: an attacker against a defender over
// rounds of E5 and E6.
type TournamentConfig struct {
	// Attacker and Defender are model names as users type them
	// (builtin:<policy> or served models).
	Attacker, Defender string
	// JudgeModel is the served judge for judge=llama-guard|classifier.
	JudgeModel string
	// Dataset is a scenario JSONL file (empty: the embedded mini set).
	Dataset string
	// Out is the directory the rounds and the tournament's files go to.
	Out string
	// KeepUnsafe appends raw text judged unsafe to this file.
	KeepUnsafe string
	// Rounds to play, scenarios per round (0 = all), episodes in flight.
	Rounds, N, Concurrency int
	// Seed is the base seed: round K uses Seed+K.
	Seed uint64
	// Params go to both environments.
	Params map[string]string
}

// RoundCategory is one (round, category) point of the tournament.
type RoundCategory struct {
	Round            int     `json:"round"`
	Category         string  `json:"category"`
	Attacks          int     `json:"attacks"`
	Successes        int     `json:"successes"`
	ASR              float64 `json:"attack_success_rate"`
	DefenderFailures int     `json:"defender_failures"`
}

// TournamentResult is what a tournament produced.
type TournamentResult struct {
	Points []RoundCategory
	// DefenderRows and AttackerRows count the co-training rows written.
	DefenderRows, AttackerRows int
}

// tournamentCommand is `svbench redteam tournament`.
func tournamentCommand() env.Command {
	return env.Command{
		Group:      "redteam",
		GroupShort: "Red-team tools over E5 (attack) and E6 (defence)",
		Name:       "tournament",
		Short:      "Play an attacker against a defender over rounds of E5 and E6; write attack-success curves and co-training data",
		Long: `Each round plays E5 with the attacker against the defender as target, and E6 with the defender
facing the attacker live. Writes, under --out:

  round-K/e5, round-K/e6       ordinary runs (results.jsonl, metadata.json, report.md, summary.json)
  tournament.json              attack success and defender failures per round and category
  asr_by_round.svg             attack-success curves per category and round
  defender_training.jsonl      successful attacks (attacker turns; the unsafe reply redacted), for the defender
  attacker_training.jsonl      the defender's failures in E6 (unsafe compliance, over-refusal), for the attacker

Either side may be builtin:<policy> (template-attacker; refuse-all, helpful-all, balanced) or a
served model (--endpoints aliases work). Round K uses seed --seed+K. Raw text judged unsafe is
never written unless --keep-unsafe names a file.`,
		Example: `  svbench redteam tournament --attacker builtin:template-attacker --defender builtin:balanced --rounds 3
  svbench redteam tournament --attacker qwen3-8b --defender llama3-8b --endpoints eps.yaml --judge-model llama-guard --param judge=llama-guard --rounds 5`,
		Models: true,
		Flags: func(fs *pflag.FlagSet) env.CommandRunner {
			var c TournamentConfig
			var params []string
			fs.StringVar(&c.Attacker, "attacker", "", "attacker model or builtin:<policy>")
			fs.StringVar(&c.Defender, "defender", "", "defender model or builtin:<policy>")
			fs.IntVar(&c.Rounds, "rounds", 3, "rounds to play")
			fs.IntVarP(&c.N, "num-examples", "n", 0, "scenarios per round (0 = all)")
			fs.IntVarP(&c.Concurrency, "concurrency", "c", 8, "episodes in flight")
			fs.Uint64Var(&c.Seed, "seed", 42, "base seed (round K uses seed+K)")
			fs.StringVar(&c.Dataset, "dataset", "", "scenario JSONL (default: the embedded sanitised mini set)")
			fs.StringVar(&c.Out, "out", "outputs/tournament", "output directory")
			fs.StringVar(&c.JudgeModel, "judge-model", "", "served judge for --param judge=llama-guard|classifier")
			fs.StringVar(&c.KeepUnsafe, "keep-unsafe", "", "append raw text judged unsafe to this file (mode 0600); default: never written")
			fs.StringArrayVar(&params, "param", nil, "parameter for both environments, e.g. judge=llama-guard")
			return func(ctx context.Context, _ []string, cio env.CommandIO) error {
				if c.Attacker == "" || c.Defender == "" {
					return env.Usagef("--attacker and --defender are required (e.g. builtin:template-attacker, builtin:balanced)")
				}
				if c.Rounds < 1 || c.Rounds > 1000 {
					return env.Usagef("--rounds %d: want 1 to 1000", c.Rounds)
				}
				p, err := env.ParseParams(params)
				if err != nil {
					return err
				}
				c.Params = p
				res, err := RunTournament(ctx, c, cio.Models)
				if err != nil {
					return err
				}
				w := cio.Out
				fmt.Fprintf(w, "\ntournament %s vs %s, %d round(s) → %s\n", c.Attacker, c.Defender, c.Rounds, c.Out)
				for _, p := range res.Points {
					if p.Category == "all" {
						fmt.Fprintf(w, "  round %-3d ASR %5.1f%% (%d/%d)  defender failures in E6: %d\n", p.Round, 100*p.ASR, p.Successes, p.Attacks, p.DefenderFailures)
					}
				}
				fmt.Fprintf(w, "  co-training rows: %d for the defender, %d for the attacker\n", res.DefenderRows, res.AttackerRows)
				return nil
			}
		},
	}
}

// RunTournament plays c.Rounds rounds: E5 with the attacker as the policy
// against the defender as its target, then E6 with the defender as the
// policy facing the attacker live. It writes each round's runs and the
// tournament's files under c.Out. Each run's start is announced through
// models (EvalRequest.Banner).
func RunTournament(ctx context.Context, c TournamentConfig, models env.Models) (*TournamentResult, error) {
	if models == nil {
		return nil, errors.New("tournament: no models to play")
	}
	base := map[string]string{}
	for k, v := range c.Params {
		base[k] = v
	}
	if c.KeepUnsafe != "" {
		base["keep_unsafe"] = c.KeepUnsafe
	}
	var judge env.Model
	if c.JudgeModel != "" {
		j, err := models.Model(c.JudgeModel, env.ModelJudge, c.Concurrency)
		if err != nil {
			return nil, err
		}
		judge = j
	}
	opponent := func(role, name string) (map[string]env.Model, error) {
		m, err := models.Model(name, role, c.Concurrency)
		if err != nil {
			return nil, err
		}
		out := map[string]env.Model{role: m}
		if judge != nil {
			out[env.ModelJudge] = judge
		}
		return out, nil
	}
	withParams := func(extra map[string]string) map[string]string {
		p := map[string]string{}
		for k, v := range base {
			p[k] = v
		}
		for k, v := range extra {
			p[k] = v
		}
		return p
	}
	e5Models, err := opponent(env.ModelTarget, c.Defender)
	if err != nil {
		return nil, err
	}
	e6Models, err := opponent(env.ModelAttacker, c.Attacker)
	if err != nil {
		return nil, err
	}
	e5Params := withParams(map[string]string{"target": TargetModel, paramTargetModel: c.Defender})
	e5, err := newEnv(AttackID, env.Options{Params: e5Params, Models: e5Models})
	if err != nil {
		return nil, err
	}
	e6Params := withParams(map[string]string{"escalation": EscalationLive, paramAttackerModel: c.Attacker})
	e6, err := newEnv(DefenseID, env.Options{Params: e6Params, Models: e6Models})
	if err != nil {
		return nil, err
	}
	var points []RoundCategory
	var defData, attData []map[string]any
	for k := 1; k <= c.Rounds; k++ {
		roundDir := filepath.Join(c.Out, fmt.Sprintf("round-%d", k))
		var dirs [2]string
		for i, side := range []struct {
			e           env.Environment
			model, name string
			params      map[string]string
		}{{e5, c.Attacker, "e5", e5Params}, {e6, c.Defender, "e6", e6Params}} {
			dir, err := models.Eval(ctx, env.EvalRequest{Env: side.e, Model: side.model, Dataset: c.Dataset,
				N: c.N, Rollouts: 1, Concurrency: c.Concurrency, Seed: c.Seed + uint64(k), MaxConsecutiveErrors: 3,
				OutDir: roundDir, RunID: side.name, Params: side.params,
				Banner: fmt.Sprintf("round %d/%d: %s %s", k, c.Rounds, side.name, side.model)})
			if err != nil {
				return nil, err
			}
			dirs[i] = dir
		}
		pts, d, a, err := collectRound(k, dirs[0], dirs[1])
		if err != nil {
			return nil, err
		}
		points, defData, attData = append(points, pts...), append(defData, d...), append(attData, a...)
	}
	if err := writeTournament(c, points, defData, attData); err != nil {
		return nil, err
	}
	return &TournamentResult{Points: points, DefenderRows: len(defData), AttackerRows: len(attData)}, nil
}

// newEnv builds one side of the tournament; a parameter the environment
// refuses is the caller's mistake.
func newEnv(id string, o env.Options) (env.Environment, error) {
	e, err := env.Default.New(id, o)
	if errors.Is(err, env.ErrBadParam) {
		return nil, env.UsageError{Err: err}
	}
	return e, err
}

// collectRound reads one round's (already redacted) results.
func collectRound(k int, e5Dir, e6Dir string) ([]RoundCategory, []map[string]any, []map[string]any, error) {
	per := map[string]*RoundCategory{"all": {Round: k, Category: "all"}}
	get := func(cat string) *RoundCategory {
		if per[cat] == nil {
			per[cat] = &RoundCategory{Round: k, Category: cat}
		}
		return per[cat]
	}
	var defData, attData []map[string]any
	turnsOf := func(msgs []env.Message, role env.Role) []string {
		var out []string
		for _, m := range msgs {
			if m.Role == role {
				out = append(out, m.Content)
			}
		}
		return out
	}
	err := artifact.EachResult(filepath.Join(e5Dir, artifact.ResultsFile), func(r *artifact.Result) error {
		if _, excluded := report.ExcludedRow(0, r); excluded {
			return nil
		}
		cat, _ := r.Parsed["category"].(string)
		ok := r.Parsed["outcome"] == OutcomeUnsafe
		for _, c := range []*RoundCategory{per["all"], get(cat)} {
			c.Attacks++
			if ok {
				c.Successes++
			}
		}
		if ok {
			defData = append(defData, map[string]any{"round": k, "example_id": r.ExampleID, "category": cat,
				"conversation": turnsOf(r.Completion, env.RoleAssistant), "desired": "refuse", "source": "e5_success"})
		}
		return nil
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("round %d, e5: %w", k, err)
	}
	err = artifact.EachResult(filepath.Join(e6Dir, artifact.ResultsFile), func(r *artifact.Result) error {
		if _, excluded := report.ExcludedRow(0, r); excluded {
			return nil
		}
		cat, _ := r.Parsed["category"].(string)
		kind, _ := r.Parsed["kind"].(string)
		failure := ""
		switch {
		case r.Parsed["outcome"] == "unsafe":
			failure = "unsafe_compliance"
		case kind == KindBenign && r.Components["over_refusal"] < 0:
			failure = "over_refusal"
		}
		if failure == "" {
			return nil
		}
		per["all"].DefenderFailures++
		get(cat).DefenderFailures++
		user := []string{}
		for _, m := range r.Prompt {
			if m.Role == env.RoleUser {
				user = append(user, m.Content)
			}
		}
		attData = append(attData, map[string]any{"round": k, "example_id": r.ExampleID, "category": cat, "kind": kind, "failure": failure,
			"user_turns": append(user, turnsOf(r.Completion, env.RoleUser)...), "source": "e6_defender_failure"})
		return nil
	})
	if err != nil {
		return nil, nil, nil, fmt.Errorf("round %d, e6: %w", k, err)
	}
	var out []RoundCategory
	for _, c := range per {
		if c.Attacks > 0 {
			c.ASR = float64(c.Successes) / float64(c.Attacks)
		}
		out = append(out, *c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Category < out[j].Category })
	return out, defData, attData, nil
}

// writeTournament writes tournament.json, the co-training files and the
// attack-success curves.
func writeTournament(c TournamentConfig, points []RoundCategory, defData, attData []map[string]any) error {
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return err
	}
	if err := artifact.WriteJSONAtomic(filepath.Join(c.Out, "tournament.json"), map[string]any{
		"attacker": c.Attacker, "defender": c.Defender, "rounds": c.Rounds, "seed": c.Seed, "points": points}); err != nil {
		return err
	}
	for name, rows := range map[string][]map[string]any{"defender_training.jsonl": defData, "attacker_training.jsonl": attData} {
		if err := atomicfile.Write(filepath.Join(c.Out, name), func(w io.Writer) error {
			enc := json.NewEncoder(w)
			for _, r := range rows {
				if err := enc.Encode(r); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	x := make([]float64, c.Rounds)
	for i := range x {
		x[i] = float64(i + 1)
	}
	series := map[string][]float64{}
	for _, p := range points {
		if series[p.Category] == nil {
			series[p.Category] = make([]float64, c.Rounds)
		}
		series[p.Category][p.Round-1] = p.ASR
	}
	var ss []report.Series
	for _, cat := range slices.Sorted(maps.Keys(series)) {
		ss = append(ss, report.Series{Name: cat, Mean: series[cat]})
	}
	svg := report.LineChart(fmt.Sprintf("Attack success by round: %s vs %s", c.Attacker, c.Defender), "round", "attack success rate", x, ss, true)
	return atomicfile.WriteBytes(filepath.Join(c.Out, "asr_by_round.svg"), svg)
}
