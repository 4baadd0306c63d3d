package cli

import (
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/envs/redteam"
	"github.com/svbench/svbench/internal/atomicfile"
	"github.com/svbench/svbench/runner"
)

// newDataImportRedteamCmd is `svbench data import e5|e6`: public red-team
// corpora to scenario rows both E5 and E6 load.
func newDataImportRedteamCmd(envName string) *cobra.Command {
	var format, out string
	cmd := &cobra.Command{
		Use:   envName + " FILE [BENIGN_FILE]",
		Short: "Import a red-team corpus (jbb, harmbench, xstest) as E5/E6 scenario rows",
		Long: `Reads a corpus you downloaded and writes one scenario row per behaviour; E5 plays the harmful
rows, E6 plays harmful rows and their benign twins. The file is the same for e5 and e6.

Formats:
  jbb        JailbreakBench JBB-Behaviors CSV (Behavior, Goal, Target, Category, Source); give the
             benign-behaviours CSV as BENIGN_FILE to pair benign twins row by row
  harmbench  HarmBench behaviours CSV (Behavior, FunctionalCategory, SemanticCategory,
             ContextString, BehaviorID); HarmBench has no benign twins
  xstest     XSTest-style prompt list (prompt, label = safe|unsafe, optional id, type, focus);
             contrast_<type> unsafe prompts pair with the safe prompt of the same type and focus

Categories map onto svbench's taxonomy (see envs/redteam/README.md); the source's own category
is kept as source_category. Real corpora hold operational harmful text: keep the output out of
version control, and note that transcripts judged unsafe are redacted in every run artifact.`,
		Example: `  svbench data import e5 --format jbb harmful-behaviors.csv benign-behaviors.csv --out data/jbb.jsonl
  svbench data import e6 --format xstest xstest_prompts.csv --out data/xstest.jsonl`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !slices.Contains(redteam.ImportFormats, format) {
				return usagef("--format must be one of %s, got %q", strings.Join(redteam.ImportFormats, ", "), format)
			}
			if out == "" {
				return usagef("--out FILE.jsonl is required")
			}
			if len(args) == 2 && format != redteam.FormatJBB {
				return usagef("a second file (benign twins) is read only with --format jbb")
			}
			f, err := os.Open(args[0])
			if err != nil {
				return err
			}
			defer f.Close()
			var ss []redteam.Scenario
			switch format {
			case redteam.FormatJBB:
				var benign io.Reader
				name := ""
				if len(args) == 2 {
					b, err := os.Open(args[1])
					if err != nil {
						return err
					}
					defer b.Close()
					benign, name = b, args[1]
				}
				ss, err = redteam.ImportJBB(args[0], f, name, benign)
			case redteam.FormatHarmBench:
				ss, err = redteam.ImportHarmBench(args[0], f)
			case redteam.FormatXSTest:
				ss, err = redteam.ImportXSTest(args[0], f)
			}
			if err != nil {
				return err
			}
			if err := atomicfile.Write(out, func(w io.Writer) error { return redteam.WriteJSONL(w, ss) }); err != nil {
				return err
			}
			harm, twins := 0, 0
			cats := map[string]int{}
			for _, s := range ss {
				if s.Kind == redteam.KindHarmful {
					harm++
					cats[s.Category]++
				} else if s.Pair != "" {
					twins++
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %d rows to %s: %d harmful, %d benign (%d paired as twins)\n", len(ss), out, harm, len(ss)-harm, twins)
			for _, k := range runner.SortedKeys(cats) {
				fmt.Fprintf(cmd.OutOrStdout(), "  %-24s %d\n", k, cats[k])
			}
			if envName == "e5" && harm == 0 {
				return fmt.Errorf("%s has no harmful rows: E5 would have nothing to play", args[0])
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&format, "format", "", "corpus format: "+strings.Join(redteam.ImportFormats, ", "))
	cmd.Flags().StringVar(&out, "out", "", "output JSONL file")
	return cmd
}
