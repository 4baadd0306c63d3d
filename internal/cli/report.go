package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/ingest"
	_ "github.com/svbench/svbench/internal/envs" // registers every environment
	"github.com/svbench/svbench/report"
)

func newReportCmd() *cobra.Command {
	var (
		envName, input, out, rubric string
		dataset, idColumn           string
		strict                      bool
		reps, maxTableMiB           int
		seed                        uint64
	)
	cmd := &cobra.Command{
		Use:   "report [RUN_DIR]",
		Short: "Compute summary.json, report.md and charts for a run",
		Long: `Reads a run directory (results.jsonl + metadata.json) or a bare results file, in
svbench's format or the reference harness's, and writes summary.json, report.md and
SVG charts (default: next to the results). --env may be omitted when metadata.json
names the environment. --strict fails (exit 1) when any row is an API error or
could not be parsed, listing the lines.

A trainer's run (rows in the verifiers / prime-rl format, e.g. a hosted-training export) is
re-scored on the text its environment saw, and when metrics_raw.json is beside
the rows (one object per step: reward/<env>/mean|min|max,
metrics/<env>/<component>, eval/<env>/avg@1, decode_len/…) its learning curves are drawn
and summarised in summary.json "training". Rows with a step column (prime-rl, verifiers,
svbench) get per-step curves from the rows themselves.`,
		Example: "  svbench report --input outputs/evals/network-logs--gpt-5-mini/20250101-120000\n" +
			"  svbench report ../shared/reference-data/real-runs/e1-hybrid --out /tmp/e1-hybrid   # a trainer's run: re-scored rows + curves from metrics_raw.json\n" +
			"  svbench report --env e1 --input results.jsonl --strict --out /tmp/report",
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if input != "" && input != args[0] {
					return usagef("give the run either as an argument or with --input, not both")
				}
				input = args[0]
			}
			if input == "" {
				return usagef("--input is required: a run directory or a results.jsonl file")
			}
			path := ingest.ResultsPath(input)
			if _, err := os.Stat(path); err != nil {
				return usagef("--input %s: %v", input, err)
			}
			if trainer, err := ingest.IsTrainerFile(path); err == nil && trainer {
				limit, err := tableLimit(maxTableMiB)
				if err != nil {
					return err
				}
				// Only what the report reads of each re-scored row is kept
				// (report.Slim): a trainer's rows carry whole transcripts.
				in := ingest.Options{Rubric: rubric, Dataset: dataset, IDColumn: idColumn, MaxTableBytes: limit, Keep: report.Slim}
				return reportTrainerRun(cmd, input, envName, in, out, report.Options{Strict: strict, BootstrapReps: reps, Seed: seed})
			}
			if dataset != "" || idColumn != "" {
				return usagef("--dataset and --id-column join a trainer's rows to the dataset; %s holds svbench results", path)
			}
			if rubric != "" {
				return usagef("--rubric applies to a trainer's rollouts, which are re-scored; %s holds svbench results, scored when the run was made (re-score with svbench score)", path)
			}
			id := ""
			if envName != "" {
				var err error
				if id, err = resolveReportEnv(envName); err != nil {
					return usagef("--env: %v", err)
				}
			} else if meta, err := artifact.ReadMetadata(filepath.Dir(path)); err == nil && meta.Environment != "" {
				if id, err = resolveReportEnv(meta.Environment); err != nil {
					return fmt.Errorf("metadata.json: %w", err)
				}
			} else {
				return usagef("--env is required: %s has no metadata.json naming the environment", filepath.Dir(path))
			}
			rep, err := report.FromRun(input, id, report.Options{Strict: strict, BootstrapReps: reps, Seed: seed})
			var se *report.StrictError
			if errors.As(err, &se) {
				return fmt.Errorf("%s: %w", path, err)
			}
			if err != nil {
				return err
			}
			dir := out
			if dir == "" {
				dir = filepath.Dir(path)
			}
			if err := report.WriteDir(dir, rep); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprintf(w, "%s report for %s\n", rep.EnvID, path)
			tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
			for _, s := range rep.Headline {
				fmt.Fprintf(tw, "  %s\t%s\n", s.Name, s.Value)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			printProblems(w, rep.Problems)
			fmt.Fprintf(w, "wrote %s, %s and %d chart(s) to %s\n", artifact.SummaryFile, artifact.ReportFile, len(rep.Charts), dir)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&envName, "env", "", "environment (e1, network-logs, sv-env-network-logs, …); default: from metadata.json")
	f.StringVar(&input, "input", "", "run directory or results.jsonl (required)")
	f.StringVar(&out, "out", "", "output directory (default: the run directory / the results file's directory)")
	f.StringVar(&rubric, "rubric", "", "rubric for re-scoring a trainer's rollouts (default: the one the rows record; svbench's default for rows svbench scored; else reference, which reproduces the reference's rewards)")
	f.StringVar(&dataset, "dataset", "", "dataset file a trainer's rows are joined to by example id (TRL tables, NeMo Gym rows naming example_id; default: the environment's embedded splits)")
	f.StringVar(&idColumn, "id-column", "", "a TRL completions table's example-id column (default "+ingest.DefaultIDColumn+")")
	maxTableFlag(f, &maxTableMiB)
	f.BoolVar(&strict, "strict", false, "fail when any row is an API error or unparsed instead of reporting")
	f.IntVar(&reps, "bootstrap", 0, "bootstrap resamples for 95% CIs (0 = 1000, negative = none)")
	f.Uint64Var(&seed, "seed", 0, "bootstrap seed (0 = the run's seed)")
	return cmd
}

// resolveReportEnv maps a user's env name to a canonical id with a report
// builder. The environment registry is the authority on names; report.Resolve
// knows the names each environment registered with its builder.
func resolveReportEnv(name string) (string, error) {
	if id, err := env.Default.Resolve(name); err == nil {
		if rid, err := report.Resolve(id); err == nil {
			return rid, nil
		}
	}
	return report.Resolve(name)
}

// reportTrainerRun re-scores a trainer's rollouts (the verifiers / prime-rl
// row format, string-encoded JSON fields and all) and writes their report,
// with how well the re-scored rewards reproduce the recorded ones.
func reportTrainerRun(cmd *cobra.Command, input, envName string, in ingest.Options, out string, opts report.Options) error {
	path := ingest.ResultsPath(input)
	tr, err := loadTrainerRunWith(cmd.Context(), input, envName, in, opts)
	var se *report.StrictError
	if errors.As(err, &se) {
		for i := range se.Problems {
			if p := se.Problems[i].Row; p >= 0 && p < len(tr.Lines) {
				se.Problems[i].Line = tr.Lines[p]
			}
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	if err != nil {
		return err
	}
	dir := out
	if dir == "" {
		dir = filepath.Dir(path)
		if st, err := os.Stat(path); err == nil && st.IsDir() {
			dir = path // a directory of TRL tables
		}
	}
	if err := report.WriteDir(dir, tr.Report); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	ag := agreement(tr.Rows)
	from := ""
	if ti, ok := tr.Report.Summary["trainer_input"].(trainerInput); ok {
		from = ": " + ti.RubricFrom
	}
	fmt.Fprintf(w, "%s report for %s (trainer rollouts re-scored with the %s rubric%s)\n", tr.Report.EnvID, path, tr.Meta.Rubric, from)
	fmt.Fprintf(w, "  %s\n", ag)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, s := range tr.Report.Headline {
		fmt.Fprintf(tw, "  %s\t%s\n", s.Name, s.Value)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for i := range tr.Report.Problems {
		if p := tr.Report.Problems[i].Row; p >= 0 && p < len(tr.Lines) {
			tr.Report.Problems[i].Line = tr.Lines[p]
		}
	}
	printProblems(w, tr.Report.Problems)
	fmt.Fprintf(w, "wrote %s, %s and %d chart(s) to %s\n", artifact.SummaryFile, artifact.ReportFile, len(tr.Report.Charts), dir)
	return nil
}

// shownProblems is how many problem rows a report prints without --strict.
const shownProblems = 3

// printProblems says how many rows have problems, of which kinds, and the
// first few reasons: a count alone ("32 score errors excluded") leaves
// the user to guess whether the run or svbench is wrong.
func printProblems(w io.Writer, ps []report.Problem) {
	if len(ps) == 0 {
		return
	}
	kinds := map[string]int{}
	var order []string
	for _, p := range ps {
		if kinds[p.Kind] == 0 {
			order = append(order, p.Kind)
		}
		kinds[p.Kind]++
	}
	var parts []string
	for _, k := range order {
		parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
	}
	fmt.Fprintf(w, "  %d row(s) with problems (%s); the first %d (--strict lists every one and fails):\n", len(ps), strings.Join(parts, ", "), min(len(ps), shownProblems))
	for _, p := range ps[:min(len(ps), shownProblems)] {
		where := fmt.Sprintf("row %d", p.Row+1)
		if p.Line > 0 {
			where = fmt.Sprintf("line %d", p.Line)
		}
		fmt.Fprintf(w, "    %s: %s: %s\n", where, p.Kind, report.Clip(p.Detail, 300))
	}
}

// maxTableFlag adds --max-table-mib, the limit ingest.ReadParquet puts on
// what one TRL completions table may decode to.
func maxTableFlag(f *pflag.FlagSet, mib *int) {
	f.IntVar(mib, "max-table-mib", int(ingest.DefaultMaxTableBytes>>20), "MiB of decoded values one TRL completions table may hold (a value repeated on many rows counts each time); a table over it is refused")
}

func tableLimit(mib int) (int64, error) {
	if mib <= 0 {
		return 0, usagef("--max-table-mib %d: want a positive number of MiB", mib)
	}
	return int64(mib) << 20, nil
}
