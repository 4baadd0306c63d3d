package netlogs

import (
	"context"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
)

// dataCommands are E1's dataset pipelines in its registration:
// `svbench data build e1` generates synthetic Zeek-style flows, split
// 70/15/15 and documented by a provenance card; `svbench data import e1`
// (importCommand, import_command.go) imports public flow corpora.
func dataCommands() []env.DataCommand {
	return []env.DataCommand{{
		Kind:  env.DataBuild,
		Short: "Generate the E1 network-log dataset (synthetic Zeek conn flows) as train/dev/test splits with a card",
		Long: `Generates labelled network flows, half of them malicious: five activities (large uploads,
check-ins on a timer, repeated failed logins, fan-out to web hosts, port sweeps), each benign
in one context and malicious in another by the site baseline E1's system prompt states (the
asset's role, the hour, the peer and the cadence, two of them read together). Writes
train.jsonl/dev.jsonl/test.jsonl (70/15/15, stratified by scenario and label, deduplicated by
flow hash), card.json and README.md to --out. meta.ambiguous marks rows whose record does not
show what decides them; the default rubric pays abstentions only there.

Difficulty: easy (complete records, clear-cut counters), medium (some missing fields, some
hours and cadences between their values, a few attacks disguised in a benign context), hard
(more of each, smaller counters), or mixed (each row drawn at random).`,
		Example: "  svbench data build e1 --n 10000 --seed 7 --difficulty hard --out data/e1-hard",
		Flags: func(f *pflag.FlagSet) env.DataRunner {
			n := f.Int("n", 5000, "rows to generate (half malicious)")
			seed := f.Uint64("seed", 1, "generator and split seed")
			difficulty := f.String("difficulty", DifficultyMixed, "easy, medium, hard or mixed")
			render := f.String("render", "rich", "question text: rich (all Zeek fields and window counters) or reference (the reference's thin one-liner)")
			out := f.String("out", "", "output directory")
			return func(_ context.Context, _ []string, w env.DataIO) error {
				if *out == "" {
					return env.Usagef("--out is required: the directory to write the splits to")
				}
				if *n <= 0 {
					return env.Usagef("--n must be positive, got %d", *n)
				}
				switch *difficulty {
				case DifficultyEasy, DifficultyMedium, DifficultyHard, DifficultyMixed:
				default:
					return env.Usagef("--difficulty must be easy, medium, hard or mixed, got %q", *difficulty)
				}
				if *render != "rich" && *render != "reference" {
					return env.Usagef("--render must be rich or reference, got %q", *render)
				}
				splits, card, err := BuildSplits(GenerateOptions{N: *n, Seed: *seed, Difficulty: *difficulty, Render: *render})
				if err != nil {
					return err
				}
				if err := dataset.WriteSplits(*out, splits, card); err != nil {
					return fmt.Errorf("write E1 dataset: %w", err)
				}
				fmt.Fprintf(w.Out, "wrote %s: train %d, dev %d, test %d rows (card.json, README.md)\n",
					*out, len(splits["train"]), len(splits["dev"]), len(splits["test"]))
				return nil
			}
		},
	}, importCommand()}
}
