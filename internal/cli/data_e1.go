package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/envs/netlogs"
)

// newDataBuildE1Cmd is `svbench data build e1`: synthetic Zeek-style flows,
// split 70/15/15 and documented by a provenance card.
func newDataBuildE1Cmd() *cobra.Command {
	var (
		n          int
		seed       uint64
		difficulty string
		render     string
		out        string
	)
	cmd := &cobra.Command{
		Use:   "e1",
		Short: "Generate the E1 network-log dataset (synthetic Zeek conn flows) as train/dev/test splits with a card",
		Long: `Generates labelled network flows from benign service models and attack playbooks
(port scans, brute force, C2 beacons, floods, exfiltration, IoT botnet scans), half of them
malicious, then writes train.jsonl/dev.jsonl/test.jsonl (70/15/15, stratified by scenario and
label, deduplicated by flow hash), card.json and README.md to --out.

Difficulty: easy (complete records, clear-cut activity), medium (some missing fields, some
benign look-alikes), hard (many missing fields, backups that look like exfiltration, pollers
that look like beacons, the IT scanner, low-and-slow attacks), or mixed (each row drawn at random).`,
		Example: "  svbench data build e1 --n 10000 --seed 7 --difficulty hard --out data/e1-hard",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usagef("--out is required: the directory to write the splits to")
			}
			if n <= 0 {
				return usagef("--n must be positive, got %d", n)
			}
			switch difficulty {
			case netlogs.DifficultyEasy, netlogs.DifficultyMedium, netlogs.DifficultyHard, netlogs.DifficultyMixed:
			default:
				return usagef("--difficulty must be easy, medium, hard or mixed, got %q", difficulty)
			}
			if render != "rich" && render != "reference" {
				return usagef("--render must be rich or reference, got %q", render)
			}
			splits, card, err := netlogs.BuildSplits(netlogs.GenerateOptions{N: n, Seed: seed, Difficulty: difficulty, Render: render})
			if err != nil {
				return err
			}
			if err := dataset.WriteSplits(out, splits, card); err != nil {
				return fmt.Errorf("write E1 dataset: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s: train %d, dev %d, test %d rows (card.json, README.md)\n",
				out, len(splits["train"]), len(splits["dev"]), len(splits["test"]))
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&n, "n", 5000, "rows to generate (half malicious)")
	f.Uint64Var(&seed, "seed", 1, "generator and split seed")
	f.StringVar(&difficulty, "difficulty", netlogs.DifficultyMixed, "easy, medium, hard or mixed")
	f.StringVar(&render, "render", "rich", "question text: rich (all Zeek fields and window counters) or reference (the reference's thin one-liner)")
	f.StringVar(&out, "out", "", "output directory")
	return cmd
}
