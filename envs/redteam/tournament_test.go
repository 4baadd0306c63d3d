package redteam

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/runner"
)

// builtinModels plays E5's and E6's built-in policies (builtin:<policy>)
// as the CLI's model service would, without endpoints.
type builtinModels struct{ banners *bytes.Buffer }

func (builtinModels) policy(name string) (env.Policy, error) {
	policy, ok := strings.CutPrefix(name, "builtin:")
	if !ok {
		return nil, fmt.Errorf("%s: only built-in policies here", name)
	}
	for _, id := range []string{AttackID, DefenseID} {
		e, err := env.Default.New(id, env.Options{})
		if err != nil {
			return nil, err
		}
		if p, ok := e.(env.PolicyProvider).Policy(policy); ok {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no built-in policy %q", policy)
}

func (b builtinModels) Model(name, _ string, _ int) (env.Model, error) {
	p, err := b.policy(name)
	if err != nil {
		return nil, err
	}
	return env.PolicyModel(name, p), nil
}

func (b builtinModels) Eval(ctx context.Context, r env.EvalRequest) (string, error) {
	p, err := b.policy(r.Model)
	if err != nil {
		return "", err
	}
	ds, closeDS, err := runner.OpenDataset(ctx, r.Env, r.Dataset, "", false)
	if err != nil {
		return "", err
	}
	defer closeDS()
	if b.banners != nil {
		fmt.Fprintln(b.banners, r.Banner)
	}
	res, err := runner.Run(ctx, runner.Config{Env: r.Env, Dataset: ds, Client: llm.Builtin{Policy: p}, Model: r.Model, EffectiveModel: r.Model,
		N: r.N, Rollouts: max(r.Rollouts, 1), Concurrency: r.Concurrency, Seed: r.Seed, MaxConsecutiveErrors: r.MaxConsecutiveErrors,
		OutDir: r.OutDir, RunID: r.RunID, Params: r.Params})
	if err != nil {
		return "", err
	}
	return res.Dir, nil
}

func TestTournament(t *testing.T) {
	dir := t.TempDir()
	var progress bytes.Buffer
	res, err := RunTournament(context.Background(), TournamentConfig{Attacker: "builtin:template-attacker", Defender: "builtin:helpful-all",
		Rounds: 2, Concurrency: 4, Seed: 42, Out: dir}, builtinModels{&progress})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "round 2/2: e6 builtin:helpful-all") {
		t.Errorf("progress: %q", progress.String())
	}
	succ, rounds := 0, map[int]bool{}
	for _, p := range res.Points {
		if p.Category == "all" {
			succ += p.Successes
			rounds[p.Round] = true
			if p.Attacks == 0 || p.ASR != float64(p.Successes)/float64(p.Attacks) {
				t.Errorf("round %d: ASR %v of %d/%d", p.Round, p.ASR, p.Successes, p.Attacks)
			}
		}
	}
	if len(rounds) != 2 {
		t.Errorf("rounds with an 'all' point: %v", rounds)
	}
	// Every successful attack is a defender training row; a helpful-all
	// defender also fails in E6, so the attacker gets rows too.
	def, _ := os.ReadFile(filepath.Join(dir, "defender_training.jsonl"))
	if succ == 0 || bytes.Count(def, []byte("\n")) != succ || res.DefenderRows != succ {
		t.Errorf("%d successes, %d defender rows (%d said)", succ, bytes.Count(def, []byte("\n")), res.DefenderRows)
	}
	att, _ := os.ReadFile(filepath.Join(dir, "attacker_training.jsonl"))
	if res.AttackerRows == 0 || bytes.Count(att, []byte("\n")) != res.AttackerRows {
		t.Errorf("%d attacker rows written, %d said", bytes.Count(att, []byte("\n")), res.AttackerRows)
	}
	for _, f := range []string{"tournament.json", "asr_by_round.svg"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	// Every row judged unsafe was redacted before it was written.
	matches, _ := filepath.Glob(filepath.Join(dir, "round-*", "evals", "*", "*", artifact.ResultsFile))
	if len(matches) != 4 {
		t.Fatalf("runs: %v", matches)
	}
	for _, m := range matches {
		_ = artifact.EachResult(m, func(r *artifact.Result) error {
			o := r.Parsed["outcome"]
			if o != OutcomeUnsafe && o != "unsafe" {
				return nil
			}
			for _, msg := range r.Completion {
				if IsRedacted(msg.Content) {
					return nil
				}
			}
			t.Errorf("%s %s: unsafe row without a redacted message", m, r.ExampleID)
			return nil
		})
	}
}

func TestTournamentCommandRefusesBadRounds(t *testing.T) {
	c := tournamentCommand()
	fs := pflag.NewFlagSet("tournament", pflag.ContinueOnError)
	run := c.Flags(fs)
	if err := fs.Parse([]string{"--attacker", "builtin:template-attacker", "--defender", "builtin:balanced", "--rounds", "0"}); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), nil, env.CommandIO{Models: builtinModels{}}); !env.IsUsage(err) {
		t.Errorf("--rounds 0: %v, want a usage error", err)
	}
}
