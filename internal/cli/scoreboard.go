package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/report"
)

func newScoreboardCmd() *cobra.Command {
	var (
		root, out, envName, rubric string
		all                        bool
	)
	cmd := &cobra.Command{
		Use:   "scoreboard",
		Short: "Rank evaluation runs by each environment's main metric",
		Long: `Walks ROOT for run directories (metadata.json + summary.json; a missing or stale
summary is computed in memory) and writes scoreboard.md and scoreboard.json: one row per
run with its key metrics, sorted by the environment's main metric. Directories holding a
trainer's rollouts (run_manifest.json beside results.jsonl, as the reference's
verifiers/prime-rl pipeline writes them) are re-scored with --rubric (default reference,
which reproduces the rewards the trainer recorded). By default only the latest run per
(environment, model, dataset revision, rubric, params, source) is kept; --all keeps every run.`,
		Example: "  svbench scoreboard\n  svbench scoreboard --root outputs/evals --env e1 --all --out /tmp/sb",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if st, err := os.Stat(root); err != nil || !st.IsDir() {
				return usagef("--root %s: not a directory", root)
			}
			id := ""
			if envName != "" {
				var err error
				if id, err = resolveReportEnv(envName); err != nil {
					return usagef("--env: %v", err)
				}
			}
			load := func(dir string) (*report.Report, *artifact.Metadata, error) {
				tr, err := loadTrainerRun(cmd.Context(), dir, "", rubric, report.Options{BootstrapReps: -1})
				if err != nil {
					return nil, nil, err
				}
				return tr.Report, tr.Meta, nil
			}
			sb, err := report.CollectScoreboard(root, report.ScoreboardOptions{Env: id, All: all, LoadTrainerRun: load})
			if err != nil {
				return err
			}
			dir := out
			if dir == "" {
				dir = root
			}
			if err := report.WriteScoreboard(dir, sb); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, s := range sb.Skipped {
				fmt.Fprintf(cmd.ErrOrStderr(), "skipped %s\n", s)
			}
			if len(sb.Unranked) > 0 {
				fmt.Fprintf(w, "%d incomplete run(s) listed, not ranked\n", len(sb.Unranked))
			}
			fmt.Fprintf(w, "%d run(s) ranked; wrote %s and %s\n", len(sb.Runs),
				filepath.Join(dir, "scoreboard.md"), filepath.Join(dir, "scoreboard.json"))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&root, "root", "outputs/evals", "directory holding run directories")
	f.StringVar(&out, "out", "", "output directory (default: --root)")
	f.StringVar(&envName, "env", "", "only this environment (e1, network-logs, …)")
	f.StringVar(&rubric, "rubric", "reference", "rubric for re-scoring trainer rollouts")
	f.BoolVar(&all, "all", false, "keep every run, not only the latest per (env, model, dataset, rubric, params, source)")
	return cmd
}
