package cli

import (
	"fmt"
	"os"
	"sort"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/envs/codevuln/taskset"
	"github.com/svbench/svbench/envs/codevuln/taskset/cvefixes"
	"github.com/svbench/svbench/envs/codevuln/taskset/mutate"
)

// E3 datasets are task directories (see envs/codevuln/tasks/README.md):
// `svbench eval --env e3 --dataset DIR` runs them.

func newDataGenerateE3Cmd() *cobra.Command {
	var (
		n    int
		seed uint64
		out  string
	)
	cmd := &cobra.Command{
		Use:   "e3",
		Short: "Generate E3 repair tasks by mutating clean functions into vulnerable variants with a known CWE",
		Long: `Writes one task directory per generated task (vulnerable src/, fix/, visible and hidden
tests, task.json) under --out, cycling through the mutation kinds so every kind appears once
--n is at least their number. The same --seed and --n give the same tasks. Existing task
directories are never overwritten.`,
		Example: "  svbench data generate e3 --n 50 --seed 7 --out data/e3-gen\n  svbench eval --env e3 --dataset data/e3-gen --model builtin:reference-fix",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return usagef("--out is required: the directory to write task directories into")
			}
			if n <= 0 || n > 10000 {
				return usagef("--n must be in 1..10000, got %d", n)
			}
			ts, err := mutate.Generate(seed, n)
			if err != nil {
				return err
			}
			if err := mutate.WriteDir(out, ts); err != nil {
				return err
			}
			if _, err := taskset.Load(os.DirFS(out)); err != nil {
				return fmt.Errorf("generated tasks do not load back: %w", err)
			}
			byCWE := map[string]int{}
			for _, t := range ts {
				byCWE[t.CWE]++
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d tasks under %s (%s)\n", len(ts), out, countsLine(byCWE))
			return nil
		},
	}
	cmd.Flags().IntVar(&n, "n", 22, "tasks to generate")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "generator seed")
	cmd.Flags().StringVar(&out, "out", "", "output directory (one task directory per task)")
	return cmd
}

func newDataImportE3Cmd() *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "e3 FILE --out DIR",
		Short: "Import CVEfixes-style before/after pairs (CSV or JSONL) as static-only E3 tasks",
		Long: `Each row (code_before, code_after, programming_language, cve_id, cwe_id, filename) of a
Python or Go file becomes a task in the "static-only" mode: no tests exist, so it is scored by
the static analysers, the API check and the patch size only, and E3 reports those rows apart
from tested tasks. Rows that cannot become tasks are counted with their reasons.`,
		Example: "  svbench data import e3 cvefixes_file_change.csv --out data/e3-cvefixes",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("--out is required: the directory to write task directories into")
			}
			res, err := cvefixes.ImportFile(args[0], cvefixes.Options{})
			if err != nil {
				return err
			}
			if err := os.MkdirAll(out, 0o755); err != nil {
				return err
			}
			byCWE := map[string]int{}
			for _, t := range res.Tasks {
				if err := taskset.Write(out, t); err != nil {
					return err
				}
				byCWE[t.CWE]++
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "wrote %d static-only tasks under %s (%s)\n", len(res.Tasks), out, countsLine(byCWE))
			if len(res.Skipped) > 0 {
				reasons := map[string]int{}
				for _, s := range res.Skipped {
					reasons[s.Reason]++
				}
				fmt.Fprintf(w, "skipped %d rows: %s\n", len(res.Skipped), countsLine(reasons))
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "output directory (one task directory per task)")
	return cmd
}

// countsLine renders "a 3, b 1" sorted by key.
func countsLine(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	s := ""
	for i, k := range keys {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s %d", k, m[k])
	}
	return s
}
