package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/runner"
)

func newMergeCmd() *cobra.Command {
	var out string
	var noReport bool
	cmd := &cobra.Command{
		Use:   "merge --out DIR SHARD_RUN_DIR...",
		Short: "Join the run directories of a sharded eval (svbench eval --shard i/n) into one run",
		Long: `Merge refuses shards whose configuration differs (environment, model, dataset revision,
seed, rollouts, sampling), a missing or repeated shard, an unfinished shard, and any
(example, rollout) pair present twice. The merged run is identical to an unsharded run
with the same seed.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("--out is required")
			}
			meta, err := runner.Merge(args, out)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "merged %d shards: %d rollouts\n", len(args), meta.Completed)
			if noReport {
				printRunSummary(cmd.OutOrStdout(), out, meta, nil)
				return nil
			}
			return writeReport(cmd.OutOrStdout(), out, meta)
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory for the merged run")
	cmd.Flags().BoolVar(&noReport, "no-report", false, "skip summary.json and report.md")
	return cmd
}
