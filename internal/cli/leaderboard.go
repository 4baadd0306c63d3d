package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/analysis/leaderboard"
	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/ingest"
	"github.com/svbench/svbench/report"
)

func newLeaderboardCmd() *cobra.Command {
	var root, out, envName, rubric string
	var maxTableMiB int
	cmd := &cobra.Command{
		Use:   "leaderboard [--root DIR | RUN...]",
		Short: "One row per (model, environment, condition) with 95% intervals and an evidence grade",
		Long: `Collects runs (every run directory under --root, or the RUN directories given) the way
scoreboard does and writes leaderboard.md and leaderboard.json: per environment and
condition (rubric, reward source, other parameters such as E2's policy-pack mode, and a
trainer's source), one entry per model — its most complete run, named — with 95% intervals and
an evidence grade, ranked by grade and then by the environment's main metric within a grade
(grade D entries are listed, not ranked):

  A  completed, ≥ 200 examples, ≥ 3 rollouts per example, budget matched
  B  completed, ≥ 100 examples, budget matched
  C  completed, ≥ 30 examples (a budget mismatch caps the grade here)
  D  not completed, or < 30 examples

The budget (dataset revision, rollouts per example, max tokens, temperature, top-p, extra
request body, max turns, tool budget, system prompt) is compared with the other models in the same condition; what differs is named.`,
		Example: "  svbench leaderboard --root outputs/evals\n  svbench leaderboard outputs/evals/network-logs--a/RUN outputs/evals/network-logs--b/RUN --out /tmp/lb",
		RunE: func(cmd *cobra.Command, args []string) error {
			sources := args
			if len(sources) == 0 {
				sources = []string{root}
			} else if cmd.Flags().Changed("root") {
				return usagef("leaderboard: give --root or run directories, not both")
			}
			for _, s := range sources {
				if st, err := os.Stat(s); err != nil || !st.IsDir() {
					return usagef("leaderboard: %s: not a directory", s)
				}
			}
			id := ""
			if envName != "" {
				var err error
				if id, err = resolveReportEnv(envName); err != nil {
					return usagef("--env: %v", err)
				}
			}
			limit, err := tableLimit(maxTableMiB)
			if err != nil {
				return err
			}
			load := func(dir string) (*report.Report, *artifact.Metadata, error) {
				in := ingest.Options{Rubric: rubric, MaxTableBytes: limit, Keep: report.Slim}
				tr, err := loadTrainerRunWith(cmd.Context(), dir, "", in, report.Options{BootstrapReps: -1})
				if err != nil {
					return nil, nil, err
				}
				return tr.Report, tr.Meta, nil
			}
			lb, err := leaderboard.Build(sources, leaderboard.Options{Env: id, LoadTrainerRun: load})
			if err != nil {
				return err
			}
			dir := out
			if dir == "" {
				dir = sources[0]
				if len(args) > 0 {
					dir = "."
				}
			}
			if err := leaderboard.Write(dir, lb); err != nil {
				return err
			}
			for _, s := range lb.Skipped {
				fmt.Fprintf(cmd.ErrOrStderr(), "skipped %s\n", s)
			}
			fmt.Fprint(cmd.OutOrStdout(), lb.Markdown())
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s and %s\n", filepath.Join(dir, "leaderboard.md"), filepath.Join(dir, "leaderboard.json"))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&root, "root", "outputs/evals", "directory holding run directories (when no RUN is given)")
	f.StringVar(&out, "out", "", "output directory (default: --root, or the current directory for RUN arguments)")
	f.StringVar(&envName, "env", "", "only this environment (e1, network-logs, …)")
	f.StringVar(&rubric, "rubric", "reference", "rubric for re-scoring trainer rollouts")
	maxTableFlag(f, &maxTableMiB)
	return cmd
}
