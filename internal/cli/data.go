package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/dataset/integrity"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/importers/e1"
	_ "github.com/svbench/svbench/internal/envs" // registers every environment
)

// newDataCmd is the `svbench data` family: import public corpora, build and
// generate environment datasets, and check what was made.
func newDataCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "data",
		Short: "Import, build, generate, validate and commit datasets",
		Long: `Dataset pipelines. Every builder writes <split>.jsonl files plus card.json and a
README.md card (sources with sha256, seed, parameters, counts, de-duplication).`,
	}
	cmd.AddCommand(
		newDataImportCmd(),
		newDataBuildCmd(),
		newDataGenerateCmd(),
		newDataValidateCmd(),
		newDataOverlapCmd(),
		newDataCommitCmd(),
	)
	return cmd
}

// commandGroup is a parent command whose only job is to hold subcommands,
// one per environment.
func commandGroup(use, short string, subs ...*cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: use, Short: short}
	cmd.AddCommand(subs...)
	return cmd
}

// newDataImportCmd groups importers of public corpora.
func newDataImportCmd() *cobra.Command {
	return commandGroup("import", "Convert public corpora into environment datasets",
		newDataImportE1Cmd(), newDataImportE4Cmd())
}

// newDataBuildCmd groups builders that assemble released dataset versions.
func newDataBuildCmd() *cobra.Command {
	return commandGroup("build", "Build environment datasets (splits + card)",
		newDataBuildE1Cmd(), newDataBuildE2Cmd())
}

// newDataGenerateCmd groups generators of synthetic datasets.
func newDataGenerateCmd() *cobra.Command {
	return commandGroup("generate", "Generate synthetic environment datasets",
		newDataGenerateE2Cmd(), newDataGenerateE4Cmd())
}

func newDataImportE1Cmd() *cobra.Command {
	var (
		format, out, render, oodFormat, balance string
		n, maxBad, oodN                         int
		seed                                    uint64
		oodFrom                                 []string
	)
	cmd := &cobra.Command{
		Use:   "e1 --format FORMAT FILE|DIR... --out DIR",
		Short: "Import network-flow corpora (IoT-23, CIC-IDS-2017, UNSW-NB15, CIC-IoT-2023, NetFlow v2) for E1",
		Long: `Streams the sources once in constant memory (plain or gzip, detected by content),
normalises labels to Malicious/Benign plus an attack family, de-duplicates by 5-tuple (by
feature vector for sources without addresses), samples --n distinct flows at the requested
class balance, and splits 70/15/15 stratified by scenario and label. With --ood-from the
test split comes from other sources instead (out-of-distribution evaluation).

Formats: iot23 (Zeek conn.log.labeled), cicids2017 (CICFlowMeter CSV), unsw-nb15 (training/
testing CSVs or the four headerless raw CSVs), cic-iot2023 (CSV), netflow-v2 (NF-*-v2 CSV).
Directories are searched for conn.log.labeled (iot23) or *.csv files, optionally .gz.`,
		Example: `  svbench data import e1 --format iot23 ~/data/iot23/ --out data/e1-iot23 --n 20000
  svbench data import e1 --format iot23 iot23/ --ood-from UNSW-NB15_1.csv --ood-format unsw-nb15 --out data/e1-ood`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("give at least one input FILE or DIR")
			}
			if format == "" {
				return usagef("--format is required (one of %s)", strings.Join(e1.Formats(), ", "))
			}
			if out == "" {
				return usagef("--out DIR is required")
			}
			bal, err := parseBalance(balance)
			if err != nil {
				return err
			}
			if n <= 0 {
				return usagef("--n must be positive, got %d", n)
			}
			opts := e1.Options{Format: format, N: n, Balance: bal, Seed: seed, Render: render, MaxBadRows: maxBad,
				OODFormat: oodFormat, OODN: oodN}
			if _, ok := map[string]bool{"": true, "rich": true, "reference": true}[render]; !ok {
				return usagef("--render must be rich or reference, got %q", render)
			}
			if !slices.Contains(e1.Formats(), format) {
				return usagef("--format %q: want one of %s", format, strings.Join(e1.Formats(), ", "))
			}
			if oodFormat != "" && !slices.Contains(e1.Formats(), oodFormat) {
				return usagef("--ood-format %q: want one of %s", oodFormat, strings.Join(e1.Formats(), ", "))
			}
			files, err := e1.ExpandInputs(format, args)
			if err != nil {
				return err
			}
			if len(oodFrom) > 0 {
				of := oodFormat
				if of == "" {
					of = format
				}
				if opts.OODFrom, err = e1.ExpandInputs(of, oodFrom); err != nil {
					return err
				}
			}
			res, err := e1.Import(cmd.Context(), files, opts)
			if err != nil {
				return err
			}
			if err := dataset.WriteSplits(out, res.Splits, res.Card); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			for _, b := range res.BadRows {
				fmt.Fprintf(cmd.ErrOrStderr(), "skipped %s\n", b)
			}
			fmt.Fprintf(w, "wrote %s: train %d, dev %d, test %d rows (labels %v)\n", out,
				len(res.Splits["train"]), len(res.Splits["dev"]), len(res.Splits["test"]), res.Card.Counts.Labels)
			for _, s := range res.Card.Sources {
				fmt.Fprintf(w, "  %s: %d rows, %d skipped, sha256 %s\n", s.Path, s.Rows, s.BadRows, s.SHA256)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "", "source format: "+strings.Join(e1.Formats(), "|"))
	f.StringVar(&out, "out", "", "output directory")
	f.IntVar(&n, "n", 10000, "rows to sample (train+dev+test, or train+dev with --ood-from)")
	f.Uint64Var(&seed, "seed", 1, "seed for sampling, splits and file order")
	f.StringVar(&render, "render", "rich", "question text: rich (every Zeek field) or reference (the reference's one-liner)")
	f.StringVar(&balance, "balance", "0.5", `share of Malicious rows in [0,1], or "natural" to keep the sources' proportions`)
	f.IntVar(&maxBad, "max-bad-rows", 1000, "fail when more malformed rows than this are skipped")
	f.StringSliceVar(&oodFrom, "ood-from", nil, "take the test split from these FILEs/DIRs (repeat or comma-separate)")
	f.StringVar(&oodFormat, "ood-format", "", "format of --ood-from sources (default: --format)")
	f.IntVar(&oodN, "ood-n", 0, "test rows to draw from --ood-from (default: 15% of the total)")
	return cmd
}

func parseBalance(s string) (float64, error) {
	if s == "natural" {
		return -1, nil
	}
	var v float64
	if _, err := fmt.Sscanf(s, "%g", &v); err != nil || v < 0 || v > 1 {
		return 0, usagef("--balance %q: want a Malicious share in [0,1] or \"natural\"", s)
	}
	return v, nil
}

// envParser wraps an environment's ParseExample for integrity checks: the
// text compared is what the model is shown (user messages).
func envParser(name string) (integrity.ParseFunc, string, error) {
	if name == "" {
		return integrity.GenericParse, "", nil
	}
	e, err := env.Default.New(name, env.Options{})
	if err != nil {
		return nil, "", usagef("--env: %v", err)
	}
	return func(raw json.RawMessage) (integrity.Parsed, error) {
		ex, err := e.ParseExample(raw)
		if err != nil {
			return integrity.Parsed{}, err
		}
		var parts []string
		for _, m := range ex.Prompt {
			if m.Role == env.RoleUser {
				parts = append(parts, m.Content)
			}
		}
		if len(parts) == 0 {
			for _, m := range ex.Prompt {
				parts = append(parts, m.Content)
			}
		}
		return integrity.Parsed{Text: strings.Join(parts, "\n"), Label: string(dataset.Canonical(ex.Answer))}, nil
	}, e.Info().ID, nil
}

// envFromCard reads the env named by a dataset directory's card.json.
func envFromCard(dir string) string {
	b, err := os.ReadFile(dir + string(os.PathSeparator) + "card.json")
	if err != nil {
		return ""
	}
	var c dataset.Card
	if json.Unmarshal(b, &c) != nil {
		return ""
	}
	return c.Env
}

func newDataValidateCmd() *cobra.Command {
	var envName string
	var asJSON bool
	var maxNear float64
	cmd := &cobra.Command{
		Use:   "validate FILE|DIR",
		Short: "Check rows against an environment's schema, duplicates, label balance and leakage across splits",
		Long: `Validates a JSONL file, or a directory of split files (train/dev/test.jsonl). Rows are
parsed by the environment's own ParseExample (--env, or the env in the directory's card.json;
without either only JSON and the question/answer fields are checked). Problems (exit 1):
unparseable rows, duplicate prompts within a file, the same prompt with different answers,
a held-out row whose prompt is also in another split, and near-duplicate leakage (prompts
equal after lower-casing, collapsing digits and folding whitespace) above --max-near-leak.`,
		Example: `  svbench data validate data/e1-iot23 --env e1
  svbench data validate train.jsonl --env e2 --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if envName == "" {
				if st, err := os.Stat(args[0]); err == nil && st.IsDir() {
					envName = envFromCard(args[0])
				}
			}
			parse, envID, err := envParser(envName)
			if err != nil {
				return err
			}
			files, err := integrity.Expand(args[0])
			if err != nil {
				return fmt.Errorf("validate: %w", err)
			}
			if maxNear < 0 {
				// E1 prompts are mostly numbers (addresses, ports, byte
				// counts): with digits collapsed, distinct flows of one kind
				// look alike, so near leakage is reported but not failed.
				maxNear = 0.10
				if envID == "network-logs" {
					maxNear = 1
				}
			}
			rep, err := integrity.Validate(files, parse, integrity.Options{MaxNearLeak: maxNear})
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else {
				printValidation(w, rep, envID)
			}
			if !rep.OK() {
				return exitError{ExitFindings}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&envName, "env", "", "environment whose row schema applies (e1, e2, e4, …)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().Float64Var(&maxNear, "max-near-leak", -1, "share of a held-out split allowed to have near-duplicates in another split (default 0.10; E1: report only)")
	return cmd
}

func printValidation(w io.Writer, rep *integrity.Report, envID string) {
	schema := "generic (question/answer)"
	if envID != "" {
		schema = envID
	}
	fmt.Fprintf(w, "schema: %s\n", schema)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tSPLIT\tROWS\tINVALID\tDUP\tNEAR-DUP\tLABELS\tREVISION")
	for _, f := range rep.Files {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%v\t%s\n", f.Path, f.Split, f.Rows, f.Invalid, f.ExactDup, f.NearDup, f.Labels, f.Revision)
	}
	tw.Flush()
	for _, l := range rep.Leaks {
		fmt.Fprintf(w, "leakage %s→%s: %d exact, %d near of %d rows (%.1f%%)\n", l.From, l.Into, l.Exact, l.Near, l.Rows, 100*l.Share)
	}
	for _, f := range rep.Warnings {
		fmt.Fprintf(w, "warning: %s\n", f)
	}
	for _, f := range rep.Problems {
		fmt.Fprintf(w, "problem: %s\n", f)
	}
	if rep.OK() {
		fmt.Fprintln(w, "ok")
	} else {
		fmt.Fprintf(w, "%d problem(s)\n", len(rep.Problems))
	}
}

func newDataOverlapCmd() *cobra.Command {
	var envName string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "overlap A B",
		Short: "Report rows shared by two datasets, exactly or up to case, digits and spacing",
		Example: `  svbench data overlap data/e1-iot23/test.jsonl data/e1-public/train.jsonl --env e1
  svbench data overlap data/v1 data/v2`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			parse, _, err := envParser(envName)
			if err != nil {
				return err
			}
			a, err := integrity.Expand(args[0])
			if err != nil {
				return fmt.Errorf("overlap: %w", err)
			}
			b, err := integrity.Expand(args[1])
			if err != nil {
				return fmt.Errorf("overlap: %w", err)
			}
			r, err := integrity.Overlap(a, b, parse)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(w)
				enc.SetIndent("", "  ")
				return enc.Encode(r)
			}
			pct := func(n, d int) float64 {
				if d == 0 {
					return 0
				}
				return 100 * float64(n) / float64(d)
			}
			fmt.Fprintf(w, "A: %s (%d rows, %d invalid)\nB: %s (%d rows, %d invalid)\n", args[0], r.RowsA, r.InvalidA, args[1], r.RowsB, r.InvalidB)
			fmt.Fprintf(w, "rows of B in A: %d exact (%.1f%%, %d with the same answer), %d near (%.1f%%)\n",
				r.ExactInA, pct(r.ExactInA, r.RowsB), r.SameLabelB, r.NearInA, pct(r.NearInA, r.RowsB))
			fmt.Fprintf(w, "rows of A in B: %d exact (%.1f%%), %d near (%.1f%%)\n", r.ExactInB, pct(r.ExactInB, r.RowsA), r.NearInB, pct(r.NearInB, r.RowsA))
			return nil
		},
	}
	cmd.Flags().StringVar(&envName, "env", "", "compare the prompts the environment builds (default: question field)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newDataCommitCmd() *cobra.Command {
	var hashesOut string
	cmd := &cobra.Command{
		Use:   "commit FILE",
		Short: "Print a content commitment: sha256 over the sorted hashes of the rows",
		Long: `The commitment identifies a set of rows independently of order and JSON formatting, so a
gated evaluation set can be announced (and its results verified later) without publishing it.
--hashes writes the sorted row hashes, which let anyone check that a single disclosed row
belongs to the set.`,
		Example: `  svbench data commit data/e1-gated/test.jsonl`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			f, err := os.Open(args[0])
			if err != nil {
				return fmt.Errorf("commit: %w", err)
			}
			defer f.Close()
			var c dataset.Commitment
			if err := dataset.EachLine(f, args[0], func(_ int, raw []byte) error {
				c.Add(raw)
				return nil
			}); err != nil {
				return err
			}
			if hashesOut != "" {
				if err := dataset.WriteFileAtomic(hashesOut, func(w io.Writer) error {
					for _, h := range c.SortedHashes() {
						if _, err := fmt.Fprintf(w, "%x\n", h); err != nil {
							return err
						}
					}
					return nil
				}); err != nil {
					return err
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s  %s  %d rows\n", c.Sum(), args[0], c.Rows())
			return nil
		},
	}
	cmd.Flags().StringVar(&hashesOut, "hashes", "", "also write the sorted row hashes (hex, one per line) to this file")
	return cmd
}
