package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/env"
	_ "github.com/svbench/svbench/internal/envs" // registers every environment
	"github.com/svbench/svbench/report"
	"github.com/svbench/svbench/runner"
)

func newDemoCmd() *cobra.Command {
	var out string
	var envs []string
	var concurrency int
	var seed uint64
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run every built-in baseline on every environment's embedded mini set and write reports and a scoreboard (no key, no network)",
		Long: `The first thing to run after cloning: each environment's built-in policies are evaluated
in-process on its embedded public mini set, exactly as a model would be, and the usual
artifacts are written (results.jsonl, metadata.json, summary.json, report.md with charts),
followed by a scoreboard over all of them.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkConcurrency("-c/--concurrency", concurrency); err != nil {
				return err
			}
			ctx := cmd.Context()
			ids := env.Default.IDs()
			if len(envs) > 0 {
				ids = nil
				for _, n := range envs {
					id, err := env.Default.Resolve(n)
					if err != nil {
						return usageError(err)
					}
					ids = append(ids, id)
				}
			}
			stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
			runs := 0
			var conds []demoCondition
			for _, id := range ids {
				e, err := env.Default.New(id, env.Options{})
				if err != nil {
					return err
				}
				conds = append(conds, demoCondition{id: id, e: e})
				if dc, ok := e.(env.DemoConditioner); ok {
					for _, params := range dc.DemoConditions() {
						ce, err := env.Default.New(id, env.Options{Params: params})
						if err != nil {
							return fmt.Errorf("%s demo condition %v: %w", id, params, err)
						}
						conds = append(conds, demoCondition{id: id, e: ce, params: params})
					}
				}
			}
			// Every run is announced with its place in the whole, and a run
			// longer than a few seconds reports progress as eval does: E3's
			// first run takes minutes.
			total := 0
			for _, c := range conds {
				if _, ok := c.e.(env.PolicyProvider); ok {
					total += len(c.e.Info().Policies)
				}
			}
			for _, c := range conds {
				id, e := c.id, c.e
				pp, ok := e.(env.PolicyProvider)
				if !ok || len(e.Info().Policies) == 0 {
					fmt.Fprintf(stderr, "%s: no built-in policies; skipped\n", id)
					continue
				}
				ds, err := e.Load(ctx, "")
				if err != nil {
					return err
				}
				for _, name := range e.Info().Policies {
					p, ok := pp.Policy(name)
					if !ok {
						return fmt.Errorf("%s lists policy %q but does not provide it", id, name)
					}
					model := "builtin:" + name
					fmt.Fprintf(stderr, "[%d/%d] %s %s: %d examples\n", runs+1, total, id, model, len(ds.Examples))
					rows := report.NewCollector()
					res, err := runner.Run(ctx, runner.Config{
						Env: e, Dataset: runner.InMemory(ds), Client: builtinClient(p), Model: model, EffectiveModel: model, Params: c.params,
						Rollouts: 1, Concurrency: concurrency, Seed: seed, MaxConsecutiveErrors: 3, OutDir: out,
						Progress: progressFor("auto", stderr), Written: rows.Add,
					})
					if err != nil {
						return fmt.Errorf("%s %s: %w", id, model, err)
					}
					if err := writeReportFrom(stdout, res.Dir, res.Metadata, rows); err != nil {
						return fmt.Errorf("%s %s: report: %w", id, model, err)
					}
					runs++
				}
			}
			root := filepath.Join(out, "evals")
			sb, err := report.CollectScoreboard(root, report.ScoreboardOptions{})
			if err != nil {
				return err
			}
			if err := report.WriteScoreboard(root, sb); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "\n%d runs; scoreboard: %s\n", runs, filepath.Join(root, "scoreboard.md"))
			self := invokedAs()
			fmt.Fprintf(stdout, "browse the runs, transcripts and leaderboard: %s view --root %s\n", self, out)
			if self != "svbench" {
				fmt.Fprintf(stdout, "(make install puts svbench on your PATH, as the README's examples assume)\n")
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "outputs", "output root")
	cmd.Flags().StringSliceVar(&envs, "env", nil, "only these environments (default: all)")
	cmd.Flags().IntVarP(&concurrency, "concurrency", "c", 8, "episodes in flight")
	cmd.Flags().Uint64Var(&seed, "seed", 42, "shuffle seed")
	return cmd
}

// demoCondition is one environment instance the demo runs: the default
// condition, or one an environment adds through env.DemoConditioner.
type demoCondition struct {
	id     string
	e      env.Environment
	params map[string]string
}
