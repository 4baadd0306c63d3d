package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/analysis/advantage"
	"github.com/svbench/svbench/artifact"
)

func newAdvantagesCmd() *cobra.Command {
	var weights, out string
	var stream bool
	cmd := &cobra.Command{
		Use:   "advantages RUN",
		Short: "Compare GRPO, per-component and GDPO advantages on a run's multi-component rewards, and name the trainer setting that made recorded ones",
		Long: `Groups a run's rollouts by prompt (and training step for a trainer's rows) and computes
each rollout's advantage as TRL's GRPOTrainer computes it (sample std, ε = 1e-4, unscored
rewards left out): grpo (scale_rewards="none"), grpo_std ("group"), per_component and gdpo
(multi_objective_aggregation="normalize_then_sum", batch-normalised over one training step).
Reports the share of zero-variance groups for the summed reward and for each component (and
how many have a constant sum while a component varies: the groups a filter on the reward's
variance drops and GDPO keeps), collapsed (zero-advantage) groups, which component decides the
advantage's sign, each scheme's rank correlation with each component and its sensitivity to
±20% weight changes.

When the rows record advantages, recomputes them under every trainer setting, named
scheme@convention: grpo_std@trl, grpo_batch_std@trl, grpo@trl, gdpo@trl (TRL),
grpo_std@verl, grpo@verl (verl: torch.std, ε = 1e-6, a group of one gets mean 0, std 1),
grpo_std@openrlhf, grpo@openrlhf (OpenRLHF group_norm and dr_grpo: torch.std, ε = 1e-9), and
says which reproduce them. Weights come from the rows (svbench records the rubric's),
--weights, or a least-squares fit of the recorded rewards. Writes advantages.json and
advantages.md.`,
		Example: "  svbench advantages outputs/evals/network-logs--m/RUN\n  svbench advantages prime-rl-run/ --weights accuracy=1,format=0.1,calibration=0.2,asymmetric_cost=0.5",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			w, err := advantage.ParseWeights(weights)
			if err != nil {
				return usageError(err)
			}
			if _, err := os.Stat(args[0]); err != nil {
				return usagef("advantages: %v", err)
			}
			var (
				ld  *advantage.Loaded
				rep *advantage.Report
			)
			if stream {
				var src advantage.Source
				if ld, src, err = advantage.LoadStream(args[0], w); err != nil {
					return err
				}
				rep, err = advantage.AnalyseStream(ld.Input.Names, ld.Input.Weights, src)
			} else {
				if ld, err = advantage.Load(args[0], w); err != nil {
					return err
				}
				rep, err = advantage.Analyse(ld.Input)
			}
			if err != nil {
				return err
			}
			dir := out
			if dir == "" {
				dir = filepath.Dir(artifact.ResultsPath(args[0]))
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return err
			}
			b, err := rep.JSON()
			if err != nil {
				return err
			}
			if err := artifact.WriteFileAtomic(filepath.Join(dir, "advantages.json"), append(b, '\n')); err != nil {
				return err
			}
			md := rep.Markdown(ld)
			if err := artifact.WriteFileAtomic(filepath.Join(dir, "advantages.md"), []byte(md)); err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), md)
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote advantages.json and advantages.md to %s\n", dir)
			return nil
		},
	}
	cmd.Flags().StringVar(&weights, "weights", "", "component weights name=w,… (default: recorded in the rows, else fitted)")
	cmd.Flags().StringVar(&out, "out", "", "output directory (default: the run's)")
	cmd.Flags().BoolVar(&stream, "stream", false, "read the rows group by group instead of holding them (same figures, a fraction of the memory); needs each group's rows consecutive and weights in the rows or --weights")
	return cmd
}
