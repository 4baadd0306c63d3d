package redteam

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/svbench/svbench/base/atomicfile"
	"github.com/svbench/svbench/env"
)

// importCommand is `svbench data import e5|e6`: public red-team corpora to
// scenario rows both E5 and E6 load (attack: E5, which needs harmful rows).
func importCommand(attack bool) env.DataCommand {
	return env.DataCommand{
		Kind:    env.DataImport,
		Args:    "FILE [BENIGN_FILE]",
		MinArgs: 1, MaxArgs: 2,
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
		Flags: func(fs *pflag.FlagSet) env.DataRunner {
			format := fs.String("format", "", "corpus format: "+strings.Join(ImportFormats, ", "))
			out := fs.String("out", "", "output JSONL file")
			return func(_ context.Context, args []string, w env.DataIO) error {
				if !slices.Contains(ImportFormats, *format) {
					return env.Usagef("--format must be one of %s, got %q", strings.Join(ImportFormats, ", "), *format)
				}
				if *out == "" {
					return env.Usagef("--out FILE.jsonl is required")
				}
				if len(args) == 2 && *format != FormatJBB {
					return env.Usagef("a second file (benign twins) is read only with --format jbb")
				}
				f, err := os.Open(args[0])
				if err != nil {
					return err
				}
				defer f.Close()
				var ss []Scenario
				switch *format {
				case FormatJBB:
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
					ss, err = ImportJBB(args[0], f, name, benign)
				case FormatHarmBench:
					ss, err = ImportHarmBench(args[0], f)
				case FormatXSTest:
					ss, err = ImportXSTest(args[0], f)
				}
				if err != nil {
					return err
				}
				if err := atomicfile.Write(*out, func(w io.Writer) error { return WriteJSONL(w, ss) }); err != nil {
					return err
				}
				harm, twins := 0, 0
				cats := map[string]int{}
				for _, s := range ss {
					if s.Kind == KindHarmful {
						harm++
						cats[s.Category]++
					} else if s.Pair != "" {
						twins++
					}
				}
				fmt.Fprintf(w.Out, "wrote %d rows to %s: %d harmful, %d benign (%d paired as twins)\n", len(ss), *out, harm, len(ss)-harm, twins)
				for _, k := range slices.Sorted(maps.Keys(cats)) {
					fmt.Fprintf(w.Out, "  %-24s %d\n", k, cats[k])
				}
				if attack && harm == 0 {
					return fmt.Errorf("%s has no harmful rows: E5 would have nothing to play", args[0])
				}
				return nil
			}
		},
	}
}
