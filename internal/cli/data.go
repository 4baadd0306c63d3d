package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/base/clip"
	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/dataset/integrity"
	"github.com/svbench/svbench/env"
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
		registeredDataCmds(env.DataImport)...)
}

// newDataBuildCmd groups builders that assemble released dataset versions.
func newDataBuildCmd() *cobra.Command {
	return commandGroup("build", "Build environment datasets (splits + card)",
		registeredDataCmds(env.DataBuild)...)
}

// newDataGenerateCmd groups generators of synthetic datasets.
func newDataGenerateCmd() *cobra.Command {
	return commandGroup("generate", "Generate synthetic environment datasets",
		registeredDataCmds(env.DataGenerate)...)
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
		p := integrity.Parsed{Text: strings.Join(parts, "\n"), Label: string(dataset.Canonical(ex.Answer))}
		if fx, ok := e.(env.FieldExtractor); ok {
			p.Fields = fx.Fields(ex)
		}
		return p, nil
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
equal after lower-casing, collapsing digits and folding whitespace) above --max-near-leak.
Warnings do not fail: near-duplicates within a file, near leakage under the limit (templated
prompts, such as E1's flows, look alike once numbers are ignored), a label over 95% of rows,
and, for environments whose prompts are records (E1), a label shortcut: one field or a pair
whose values predict the label (leave-one-out) 25 points or more above the majority label.
The best one- and two-field rules are tabulated for such environments either way.

The report is a set of tables: files, label balance per split (labels over 60 characters, such
as E2's answer objects, are summarised by shape), leakage per pair of splits with its verdict,
problems and warnings, then a result line that says what the warnings mean.`,
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
				// The environment's registration may raise the limit
				// (prompts that are mostly numbers look alike once digits
				// are collapsed).
				maxNear = 0.10
				if spec, err := env.Default.Lookup(envID); err == nil && spec.NearLeakLimit > 0 {
					maxNear = spec.NearLeakLimit
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

// maxBalanceRows bounds the label balance table; the rest is one line.
const maxBalanceRows = 12

// printValidation writes the report as aligned tables: files, label balance
// per split, leakage between splits, problems and warnings, then a verdict
// that says what the warnings mean.
func printValidation(w io.Writer, rep *integrity.Report, envID string) {
	schema := "generic: JSON objects with a question (or prompt) and an answer; name --env for an environment's schema"
	if envID != "" {
		schema = envID + " (every row parsed by the environment, as an evaluation would)"
	}
	fmt.Fprintf(w, "schema: %s\n\n", schema)
	newTable := func() *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

	tw := newTable()
	fmt.Fprintln(tw, "FILE\tSPLIT\tROWS\tINVALID\tDUPLICATES\tNEAR-DUPLICATES\tLABELS\tREVISION")
	for _, f := range rep.Files {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%d\t%d distinct\t%s\n", f.Path, f.Split, f.Rows, f.Invalid, f.ExactDup, f.NearDup, len(f.Labels), f.Revision)
	}
	tw.Flush()

	printBalance(w, rep)
	printLeakage(w, rep)
	printShortcuts(w, rep.Shortcuts)

	detail := func(s string) string { return clip.Within(s, 160, clip.Ellipsis) }
	findings := func(title string, fs []integrity.Finding) {
		if len(fs) == 0 {
			return
		}
		fmt.Fprintf(w, "\n%s\n", title)
		tw := newTable()
		fmt.Fprintln(tw, "KIND\tFILE\tLINE\tDETAIL")
		for _, f := range fs {
			line := "-"
			if f.Line > 0 {
				line = strconv.Itoa(f.Line)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", f.Kind, f.File, line, detail(f.Msg))
		}
		tw.Flush()
	}
	findings(fmt.Sprintf("PROBLEMS (%d; each fails validation)", len(rep.Problems)), rep.Problems)
	// Near leakage is in the leakage table with its verdict already.
	var warns []integrity.Finding
	nearDup := false
	for _, f := range rep.Warnings {
		if f.Kind != "near-leakage" {
			warns = append(warns, f)
		}
		nearDup = nearDup || f.Kind == "near-duplicate"
	}
	findings(fmt.Sprintf("WARNINGS (%d; reported, not failed)", len(warns)), warns)
	if nearDup {
		fmt.Fprintln(w, "near-duplicates are rows equal once case, digits and whitespace are normalised: templated prompts\n(flows that differ only in ports and byte counts) look alike this way without being the same row.")
	}

	fmt.Fprintln(w)
	nearLeaks := 0
	for _, l := range rep.Leaks {
		nearLeaks += l.Near
	}
	switch {
	case !rep.OK():
		fmt.Fprintf(w, "result: FAILED, %d problem(s) listed above (exit %d)\n", len(rep.Problems), ExitFindings)
	case len(rep.Warnings) == 0:
		fmt.Fprintln(w, "result: ok, no problems and no warnings")
	case nearLeaks > 0:
		fmt.Fprintf(w, "result: ok, no problems; %s. %d held-out row(s) look like rows of another split once numbers, case\nand spacing are ignored, within the %s near-leakage limit; no prompt is shared exactly, which is what fails.\n",
			warningCount(len(warns), len(rep.Warnings)-len(warns)), nearLeaks, nearLimit(rep.MaxNearLeak))
	default:
		fmt.Fprintf(w, "result: ok, no problems; %s, which do not fail validation\n", warningCount(len(warns), len(rep.Warnings)-len(warns)))
	}
}

// warningCount names the warnings as the tables above listed them: the
// WARNINGS table's count, then near-leakage shown in the leakage table, so
// the verdict never gives a total no table shows.
func warningCount(listed, nearLeak int) string {
	s := fmt.Sprintf("%d warning(s) under WARNINGS", listed)
	if listed == 0 {
		s = "no other warning"
	}
	if nearLeak > 0 {
		s += fmt.Sprintf(" and %d near-leakage warning(s) in the leakage table", nearLeak)
	}
	return s
}

// printShortcuts tabulates the best one- and two-field label rules, when
// the environment reads its rows as records.
func printShortcuts(w io.Writer, s *integrity.Shortcuts) {
	if s == nil {
		return
	}
	fmt.Fprintf(w, "\nlabel shortcuts over %d rows (a rule answers each combination of field values with its majority label;\naccuracy leave-one-out; the majority label alone: %.1f%%)\n", s.Rows, 100*s.Majority)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FIELDS\tACCURACY\tIN-SAMPLE\tCELLS\tSTRONGEST CELL")
	for _, r := range append(append([]integrity.Rule{}, s.Top1...), s.Top2...) {
		fmt.Fprintf(tw, "%s\t%.1f%%\t%.1f%%\t%d\t%s\n", strings.Join(r.Fields, " + "), 100*r.Accuracy, 100*r.InSample, r.Cells, r.Strongest)
	}
	tw.Flush()
}

func nearLimit(max float64) string {
	if max >= 1 {
		return "report-only"
	}
	return fmt.Sprintf("%.1f%%", 100*max)
}

// printBalance tabulates labels per split. Labels over
// integrity.MaxLabelWidth characters are counted by their summary
// (integrity.LabelClass), so E2's per-row answer objects group by shape.
func printBalance(w io.Writer, rep *integrity.Report) {
	var splits []string
	seen := map[string]bool{}
	for _, f := range rep.Files {
		if !seen[f.Split] {
			seen[f.Split] = true
			splits = append(splits, f.Split)
		}
	}
	slices.SortStableFunc(splits, func(a, b string) int { return splitRank(a) - splitRank(b) })
	counts := map[string]map[string]int{}
	totals := map[string]int{}
	all, summarised := 0, false
	for _, f := range rep.Files {
		for l, n := range f.Labels {
			c := integrity.LabelClass(l)
			summarised = summarised || c != l
			if counts[c] == nil {
				counts[c] = map[string]int{}
			}
			counts[c][f.Split] += n
			totals[c] += n
			all += n
		}
	}
	if all == 0 {
		return
	}
	classes := make([]string, 0, len(totals))
	for c := range totals {
		classes = append(classes, c)
	}
	slices.SortFunc(classes, func(a, b string) int {
		if totals[a] != totals[b] {
			return totals[b] - totals[a]
		}
		return strings.Compare(a, b)
	})
	title := "\nLABEL BALANCE"
	if summarised {
		title += fmt.Sprintf(" (labels over %d characters are summarised: arrays by length, long strings left out)", integrity.MaxLabelWidth)
	}
	fmt.Fprintln(w, title)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "LABEL\t%s\tALL\tSHARE\n", strings.ToUpper(strings.Join(splits, "\t")))
	row := func(name string, per map[string]int, total int) {
		fmt.Fprintf(tw, "%s", name)
		for _, s := range splits {
			fmt.Fprintf(tw, "\t%d", per[s])
		}
		fmt.Fprintf(tw, "\t%d\t%.1f%%\n", total, 100*float64(total)/float64(all))
	}
	for i, c := range classes {
		if i == maxBalanceRows && len(classes) > maxBalanceRows+1 {
			rest, restTotal := map[string]int{}, 0
			for _, c := range classes[i:] {
				for s, n := range counts[c] {
					rest[s] += n
				}
				restTotal += totals[c]
			}
			row(fmt.Sprintf("(%d more labels)", len(classes)-i), rest, restTotal)
			break
		}
		row(c, counts[c], totals[c])
	}
	tw.Flush()
}

func splitRank(s string) int {
	switch s {
	case "train":
		return 0
	case "dev":
		return 1
	case "test":
		return 2
	}
	return 3
}

// printLeakage tabulates rows of held-out splits found in another split.
func printLeakage(w io.Writer, rep *integrity.Report) {
	if len(rep.Leaks) == 0 {
		if len(rep.Files) > 1 {
			fmt.Fprintln(w, "\nLEAKAGE: none (no held-out prompt appears in another split, exactly or once case, digits and whitespace are normalised)")
		}
		return
	}
	fmt.Fprintln(w, "\nLEAKAGE (rows of a held-out split whose prompt also appears in another split)")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "HELD-OUT\tALSO IN\tROWS\tEXACT\tNEAR\tNEAR SHARE\tNEAR LIMIT\tVERDICT")
	for _, l := range rep.Leaks {
		verdict := "ok"
		switch {
		case l.Exact > 0:
			verdict = "problem: exact leakage"
		case l.Share > rep.MaxNearLeak:
			verdict = "problem: near leakage over the limit"
		case l.Near > 0:
			verdict = "warning: near only"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%.1f%%\t%s\t%s\n", l.Into, l.From, l.Rows, l.Exact, l.Near, 100*l.Share, nearLimit(rep.MaxNearLeak), verdict)
	}
	tw.Flush()
	fmt.Fprintln(w, "exact: the same prompt; it always fails. near: equal once case, digits and whitespace are normalised;\ntemplated prompts (E1 flows differ mostly in numbers) look alike this way without being the same row,\nso near leakage fails only above the limit (--max-near-leak).")
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
