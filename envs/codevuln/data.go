package codevuln

import (
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

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
		Args:    "FILE|DIR --out DIR",
		MinArgs: 1, MaxArgs: 1,
		Short: "Import CWEval's Python tasks (a checkout) as tested E3 repair tasks, or CVEfixes-style pairs as static-only tasks",
		Long: `--format cweval (the default for a directory): DIR is a checkout of CWEval
(github.com/Co1lin/CWEval). Each known-vulnerable copy of a Python task's function becomes a
repair task: the task file with the unsafe body is the code to fix, the task file the reference
fix, and the benchmark's pytest module the tests (functionality-marked cases are the visible
suite, security-marked ones the hidden suite), run in E3's sandbox with only data crossing to the
candidate. Every task is checked before it is written: its reference fix must pass both suites
and the unsafe code must fail the security suite; tasks that fail the check, and tasks of the
languages not imported, are listed with the reason in IMPORT.md and import.json under --out.

--format cvefixes (the default for a file): each row (code_before, code_after,
programming_language, cve_id, cwe_id, filename) of a Python or Go file becomes a task in the
"static-only" mode: no tests exist, so it is scored by the static analysers, the API check and
the patch size only, and E3 reports those rows apart from tested tasks. Rows that cannot become
tasks are counted with their reasons.`,
		Example: "  svbench data import e3 ~/src/CWEval --out data/e3-cweval\n" +
			"  svbench eval --env e3 --dataset data/e3-cweval --model builtin:reference-fix\n" +
			"  svbench data import e3 cvefixes_file_change.csv --out data/e3-cvefixes",
		Flags: func(fs *pflag.FlagSet) env.DataRunner {
			out := fs.String("out", "", "output directory (one task directory per task)")
			format := fs.String("format", "", "cweval or cvefixes (default: cweval for a directory, cvefixes for a file)")
			// Each check already runs a task's two suites at once: on two
			// cores one task at a time was fastest (65 s for CWEval against
			// 79 s at -c 2).
			conc := fs.IntP("concurrency", "c", 1, "tasks checked at once (cweval)")
			timeout := fs.Int("test-timeout", 60, "seconds per test suite run (cweval)")
			return func(ctx context.Context, args []string, w env.DataIO) error {
				if *out == "" {
					return env.Usagef("--out is required: the directory to write task directories into")
				}
				st, err := os.Stat(args[0])
				if err != nil {
					return err
				}
				f := *format
				if f == "" {
					f = "cvefixes"
					if st.IsDir() {
						f = "cweval"
					}
				}
				switch f {
				case "cweval":
					if !st.IsDir() {
						return env.Usagef("--format cweval reads a checkout directory; %s is a file", args[0])
					}
					if *conc < 1 || *conc > 64 {
						return env.Usagef("-c must be in 1..64, got %d", *conc)
					}
					if *timeout < 1 || *timeout > 3600 {
						return env.Usagef("--test-timeout must be in 1..3600 seconds, got %d", *timeout)
					}
					return importCWEval(ctx, args[0], *out, cwevalOptions{Concurrency: *conc, TestTimeout: time.Duration(*timeout) * time.Second}, w)
				case "cvefixes":
					return importCVEfixes(args[0], *out, w)
				}
				return env.Usagef("--format %q: want cweval or cvefixes", f)
			}
		},
	}
}

func importCVEfixes(file, out string, w env.DataIO) error {
	res, err := cvefixes.ImportFile(file, cvefixes.Options{})
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
	fmt.Fprintf(w.Out, "wrote %d static-only tasks under %s (%s)\n", len(res.Tasks), out, countsLine(byCWE))
	if len(res.Skipped) > 0 {
		reasons := map[string]int{}
		for _, s := range res.Skipped {
			reasons[s.Reason]++
		}
		fmt.Fprintf(w.Out, "skipped %d rows: %s\n", len(res.Skipped), countsLine(reasons))
	}
	return nil
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
