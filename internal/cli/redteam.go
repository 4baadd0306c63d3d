package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/redteam"
	"github.com/svbench/svbench/internal/atomicfile"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/report"
	"github.com/svbench/svbench/runner"
)

// Parameters through which the CLI's --target-model and --attacker-model
// reach environments that play against a second model (E5, E6). Keeping
// them as parameters records them in metadata, so --resume restores them
// and compare treats another opponent as another budget.
const (
	paramTargetModel   = "target_model"
	paramAttackerModel = "attacker_model"
)

// policyModel serves a built-in policy as an env.Model (a builtin:<policy>
// target or attacker): it sees the conversation a served model would.
type policyModel struct {
	name string
	p    env.Policy
}

func (m policyModel) Chat(ctx context.Context, msgs []env.Message) (env.Message, env.Usage, error) {
	msg, err := m.p.Act(ctx, msgs, nil)
	return msg, env.Usage{}, err
}

func (m policyModel) Name() string { return m.name }

// builtinModel finds builtin:<policy> among every environment's policies.
func builtinModel(name string) (env.Model, error) {
	policy := strings.TrimPrefix(name, "builtin:")
	var known []string
	for _, id := range env.Default.IDs() {
		e, err := env.Default.New(id, env.Options{})
		if err != nil {
			continue
		}
		if pp, ok := e.(env.PolicyProvider); ok {
			if p, ok := pp.Policy(policy); ok {
				return policyModel{name: name, p: p}, nil
			}
		}
		known = append(known, e.Info().Policies...)
	}
	return nil, usagef("no built-in policy %q (known: %s)", policy, strings.Join(known, ", "))
}

// envModel resolves a model an environment talks to: builtin:<policy>, an
// alias from --endpoints, or a model on --base-url.
// role (env.ModelTarget, ModelAttacker, ModelJudge: the same strings as
// the artifact's usage roles) files its tokens and cache entries.
func (f *modelFlags) envModel(name, role string, concurrency int, sampling llm.Sampling) (env.Model, error) {
	if strings.HasPrefix(name, "builtin:") {
		return builtinModel(name)
	}
	m, err := f.endpointModel(name, concurrency, "template-attacker")
	if err != nil {
		return nil, err
	}
	client := m.Client
	if f.wrap != nil {
		client = f.wrap(client, m.BaseURL, role)
	}
	return llm.EnvModel{Client: client, Model: m.Effective, Sampling: sampling}, nil
}

// envModels builds Options.Models from the target_model / attacker_model
// parameters and the judge model. Judges are asked at temperature 0 with a
// short answer budget (Llama Guard's verdict is two lines).
func (f *modelFlags) envModels(params map[string]string, judgeModel string, concurrency int) (map[string]env.Model, error) {
	zero := 0.0
	out := map[string]env.Model{}
	for role, spec := range map[string]struct {
		name string
		s    llm.Sampling
	}{
		env.ModelTarget:   {params[paramTargetModel], llm.Sampling{Temperature: &zero, MaxTokens: 1024}},
		env.ModelAttacker: {params[paramAttackerModel], llm.Sampling{MaxTokens: 512}},
		env.ModelJudge:    {judgeModel, llm.Sampling{Temperature: &zero, MaxTokens: 64}},
	} {
		if spec.name == "" {
			continue
		}
		if role == env.ModelJudge && strings.HasPrefix(spec.name, "builtin:") {
			return nil, usagef("--judge-model must be a served model, not %s", spec.name)
		}
		m, err := f.envModel(spec.name, role, concurrency, spec.s)
		if err != nil {
			return nil, fmt.Errorf("%s model: %w", role, err)
		}
		out[role] = m
	}
	return out, nil
}

// newEnvOpts builds an environment by any accepted name.
func newEnvOpts(name string, o env.Options) (env.Environment, error) {
	if name == "" {
		return nil, usagef("--env is required (one of: %s)", strings.Join(env.Default.IDs(), ", "))
	}
	if _, err := env.Default.Resolve(name); err != nil {
		return nil, usageError{err}
	}
	e, err := env.Default.New(name, o)
	if errors.Is(err, env.ErrBadParam) {
		return nil, usageError{err}
	}
	return e, err
}

// setModelParam records --target-model / --attacker-model as a parameter,
// refusing one that contradicts a resumed run's.
func setModelParam(params map[string]string, key, flag, value string) (map[string]string, error) {
	if value == "" {
		return params, nil
	}
	if params == nil {
		params = map[string]string{}
	}
	if prev, ok := params[key]; ok && prev != value {
		return nil, usagef("--%s %s, but the run used %s", flag, value, prev)
	}
	params[key] = value
	return params, nil
}

type tournamentFlags struct {
	attacker, defender, judgeModel, datasetPath, out, keepUnsafe string
	rounds, n, concurrency                                       int
	seed                                                         uint64
	params                                                       []string
	model                                                        modelFlags
}

func newRedteamCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "redteam", Short: "Red-team tools over E5 (attack) and E6 (defence)"}
	cmd.AddCommand(newTournamentCmd())
	return cmd
}

func newTournamentCmd() *cobra.Command {
	var f tournamentFlags
	cmd := &cobra.Command{
		Use:   "tournament",
		Short: "Play an attacker against a defender over rounds of E5 and E6; write attack-success curves and co-training data",
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
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runTournament(cmd, &f) },
	}
	fs := cmd.Flags()
	fs.StringVar(&f.attacker, "attacker", "", "attacker model or builtin:<policy>")
	fs.StringVar(&f.defender, "defender", "", "defender model or builtin:<policy>")
	fs.IntVar(&f.rounds, "rounds", 3, "rounds to play")
	fs.IntVarP(&f.n, "num-examples", "n", 0, "scenarios per round (0 = all)")
	fs.IntVarP(&f.concurrency, "concurrency", "c", 8, "episodes in flight")
	fs.Uint64Var(&f.seed, "seed", 42, "base seed (round K uses seed+K)")
	fs.StringVar(&f.datasetPath, "dataset", "", "scenario JSONL (default: the embedded sanitised mini set)")
	fs.StringVar(&f.out, "out", "outputs/tournament", "output directory")
	fs.StringVar(&f.judgeModel, "judge-model", "", "served judge for --param judge=llama-guard|classifier")
	fs.StringVar(&f.keepUnsafe, "keep-unsafe", "", "append raw text judged unsafe to this file (mode 0600); default: never written")
	fs.StringArrayVar(&f.params, "param", nil, "parameter for both environments, e.g. judge=llama-guard")
	f.model.register(cmd)
	return cmd
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

func runTournament(cmd *cobra.Command, f *tournamentFlags) error {
	ctx := cmd.Context()
	if f.attacker == "" || f.defender == "" {
		return usagef("--attacker and --defender are required (e.g. builtin:template-attacker, builtin:balanced)")
	}
	if f.rounds < 1 || f.rounds > 1000 {
		return usagef("--rounds %d: want 1 to 1000", f.rounds)
	}
	base, err := parseParams(f.params)
	if err != nil {
		return err
	}
	if f.keepUnsafe != "" {
		if base == nil {
			base = map[string]string{}
		}
		base["keep_unsafe"] = f.keepUnsafe
	}
	sampling, err := f.model.sampling(cmd)
	if err != nil {
		return err
	}
	judgeModels, err := f.model.envModels(nil, f.judgeModel, f.concurrency)
	if err != nil {
		return err
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
	models := func(role, name string) (map[string]env.Model, error) {
		m, err := f.model.envModel(name, role, f.concurrency, llm.Sampling{})
		if err != nil {
			return nil, err
		}
		out := map[string]env.Model{role: m}
		if j := judgeModels[env.ModelJudge]; j != nil {
			out[env.ModelJudge] = j
		}
		return out, nil
	}
	e5Models, err := models(env.ModelTarget, f.defender)
	if err != nil {
		return err
	}
	e6Models, err := models(env.ModelAttacker, f.attacker)
	if err != nil {
		return err
	}
	e5Params := withParams(map[string]string{"target": redteam.TargetModel, paramTargetModel: f.defender})
	e5, err := newEnvOpts(redteam.AttackID, env.Options{Params: e5Params, Models: e5Models})
	if err != nil {
		return err
	}
	e6Params := withParams(map[string]string{"escalation": redteam.EscalationLive, paramAttackerModel: f.attacker})
	e6, err := newEnvOpts(redteam.DefenseID, env.Options{Params: e6Params, Models: e6Models})
	if err != nil {
		return err
	}
	stderr := cmd.ErrOrStderr()
	var points []RoundCategory
	var defData, attData []map[string]any
	for k := 1; k <= f.rounds; k++ {
		roundDir := filepath.Join(f.out, fmt.Sprintf("round-%d", k))
		var dirs [2]string
		for i, side := range []struct {
			e           env.Environment
			model, name string
			params      map[string]string
		}{{e5, f.attacker, "e5", e5Params}, {e6, f.defender, "e6", e6Params}} {
			m, err := f.model.resolveModel(side.model, side.e, f.concurrency)
			if err != nil {
				return err
			}
			ds, closeDS, err := runner.OpenDataset(ctx, side.e, f.datasetPath, false)
			if err != nil {
				return err
			}
			fmt.Fprintf(stderr, "round %d/%d: %s %s\n", k, f.rounds, side.name, m.Name)
			res, err := runner.Run(ctx, runner.Config{Env: side.e, Dataset: ds, Client: m.Client, Model: m.Name, EffectiveModel: m.Effective, BaseURL: m.BaseURL,
				Sampling: sampling, N: f.n, Rollouts: 1, Concurrency: f.concurrency, Seed: f.seed + uint64(k), MaxConsecutiveErrors: 3,
				OutDir: roundDir, RunID: side.name, Params: side.params})
			closeDS()
			if err != nil {
				return err
			}
			if rep, err := report.FromRun(res.Dir, "", report.Options{}); err == nil {
				_ = report.WriteDir(res.Dir, rep)
			}
			dirs[i] = res.Dir
		}
		pts, d, a, err := collectRound(k, dirs[0], dirs[1])
		if err != nil {
			return err
		}
		points, defData, attData = append(points, pts...), append(defData, d...), append(attData, a...)
	}
	if err := writeTournament(f, points, defData, attData); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "\ntournament %s vs %s, %d round(s) → %s\n", f.attacker, f.defender, f.rounds, f.out)
	for _, p := range points {
		if p.Category == "all" {
			fmt.Fprintf(w, "  round %-3d ASR %5.1f%% (%d/%d)  defender failures in E6: %d\n", p.Round, 100*p.ASR, p.Successes, p.Attacks, p.DefenderFailures)
		}
	}
	fmt.Fprintf(w, "  co-training rows: %d for the defender, %d for the attacker\n", len(defData), len(attData))
	return nil
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
		if r.Error != "" || r.ScoreError != "" {
			return nil
		}
		cat, _ := r.Parsed["category"].(string)
		ok := r.Parsed["outcome"] == redteam.OutcomeUnsafe
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
		return nil, nil, nil, err
	}
	err = artifact.EachResult(filepath.Join(e6Dir, artifact.ResultsFile), func(r *artifact.Result) error {
		if r.Error != "" || r.ScoreError != "" {
			return nil
		}
		cat, _ := r.Parsed["category"].(string)
		kind, _ := r.Parsed["kind"].(string)
		failure := ""
		switch {
		case r.Parsed["outcome"] == "unsafe":
			failure = "unsafe_compliance"
		case kind == redteam.KindBenign && r.Components["over_refusal"] < 0:
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
		return nil, nil, nil, err
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

func writeTournament(f *tournamentFlags, points []RoundCategory, defData, attData []map[string]any) error {
	if err := os.MkdirAll(f.out, 0o755); err != nil {
		return err
	}
	if err := artifact.WriteJSONAtomic(filepath.Join(f.out, "tournament.json"), map[string]any{
		"attacker": f.attacker, "defender": f.defender, "rounds": f.rounds, "seed": f.seed, "points": points}); err != nil {
		return err
	}
	for name, rows := range map[string][]map[string]any{"defender_training.jsonl": defData, "attacker_training.jsonl": attData} {
		if err := atomicfile.Write(filepath.Join(f.out, name), func(w io.Writer) error {
			enc := json.NewEncoder(w)
			for _, r := range rows {
				if err := enc.Encode(r); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			return err
		}
	}
	x := make([]float64, f.rounds)
	for i := range x {
		x[i] = float64(i + 1)
	}
	series := map[string][]float64{}
	for _, p := range points {
		if series[p.Category] == nil {
			series[p.Category] = make([]float64, f.rounds)
		}
		series[p.Category][p.Round-1] = p.ASR
	}
	var ss []report.Series
	for _, c := range runner.SortedKeys(series) {
		ss = append(ss, report.Series{Name: c, Mean: series[c]})
	}
	svg := report.LineChart(fmt.Sprintf("Attack success by round: %s vs %s", f.attacker, f.defender), "round", "attack success rate", x, ss, true)
	return atomicfile.WriteBytes(filepath.Join(f.out, "asr_by_round.svg"), svg)
}
