package codevuln

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/codevuln/taskset"
	"github.com/svbench/svbench/envs/codevuln/taskset/cvefixes"
	"github.com/svbench/svbench/envs/codevuln/taskset/mutate"
)

// E3 datasets are task directories (see tasks/README.md): `svbench eval
// --env e3 --dataset DIR` runs them. dataCommands are E3's pipelines, which
// `svbench data generate e3` and `svbench data import e3` run.
func dataCommands() []env.DataCommand {
	return []env.DataCommand{generateCommand(), importCommand()}
}

func generateCommand() env.DataCommand {
	return env.DataCommand{
		Kind:  env.DataGenerate,
		Short: "Generate E3 repair tasks by mutating clean functions into vulnerable variants with a known CWE",
		Long: `Writes one task directory per generated task (vulnerable src/, fix/, visible and hidden
tests, task.json) under --out, cycling through the mutation kinds so every kind appears once
--n is at least their number. The same --seed and --n give the same tasks. Existing task
directories are never overwritten.`,
		Example: "  svbench data generate e3 --n 50 --seed 7 --out data/e3-gen\n  svbench eval --env e3 --dataset data/e3-gen --model builtin:reference-fix",
		Flags: func(fs *pflag.FlagSet) env.DataRunner {
			n := fs.Int("n", 22, "tasks to generate")
			seed := fs.Uint64("seed", 1, "generator seed")
			out := fs.String("out", "", "output directory (one task directory per task)")
			return func(_ context.Context, _ []string, w env.DataIO) error {
				if *out == "" {
					return env.Usagef("--out is required: the directory to write task directories into")
				}
				if *n <= 0 || *n > 10000 {
					return env.Usagef("--n must be in 1..10000, got %d", *n)
				}
				ts, err := mutate.Generate(*seed, *n)
				if err != nil {
					return err
				}
				if err := mutate.WriteDir(*out, ts); err != nil {
					return err
				}
				if _, err := taskset.Load(os.DirFS(*out)); err != nil {
					return fmt.Errorf("generated tasks do not load back: %w", err)
				}
				byCWE := map[string]int{}
				for _, t := range ts {
					byCWE[t.CWE]++
				}
				fmt.Fprintf(w.Out, "wrote %d tasks under %s (%s)\n", len(ts), *out, countsLine(byCWE))
				return nil
			}
		},
	}
}

func importCommand() env.DataCommand {
	return env.DataCommand{
		Kind:    env.DataImport,
		Args:    "FILE --out DIR",
		MinArgs: 1, MaxArgs: 1,
		Short: "Import CVEfixes-style before/after pairs (CSV or JSONL) as static-only E3 tasks",
		Long: `Each row (code_before, code_after, programming_language, cve_id, cwe_id, filename) of a
Python or Go file becomes a task in the "static-only" mode: no tests exist, so it is scored by
the static analysers, the API check and the patch size only, and E3 reports those rows apart
from tested tasks. Rows that cannot become tasks are counted with their reasons.`,
		Example: "  svbench data import e3 cvefixes_file_change.csv --out data/e3-cvefixes",
		Flags: func(fs *pflag.FlagSet) env.DataRunner {
			out := fs.String("out", "", "output directory (one task directory per task)")
			return func(_ context.Context, args []string, w env.DataIO) error {
				if *out == "" {
					return env.Usagef("--out is required: the directory to write task directories into")
				}
				res, err := cvefixes.ImportFile(args[0], cvefixes.Options{})
				if err != nil {
					return err
				}
				if err := os.MkdirAll(*out, 0o755); err != nil {
					return err
				}
				byCWE := map[string]int{}
				for _, t := range res.Tasks {
					if err := taskset.Write(*out, t); err != nil {
						return err
					}
					byCWE[t.CWE]++
				}
				fmt.Fprintf(w.Out, "wrote %d static-only tasks under %s (%s)\n", len(res.Tasks), *out, countsLine(byCWE))
				if len(res.Skipped) > 0 {
					reasons := map[string]int{}
					for _, s := range res.Skipped {
						reasons[s.Reason]++
					}
					fmt.Fprintf(w.Out, "skipped %d rows: %s\n", len(res.Skipped), countsLine(reasons))
				}
				return nil
			}
		},
	}
}

// countsLine renders "a 3, b 1" sorted by key.
func countsLine(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
