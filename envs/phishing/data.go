package phishing

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/svbench/svbench/base/atomicfile"
	"github.com/svbench/svbench/env"
)

// dataCommands are E4's dataset pipelines: `svbench data import e4` (public
// phishing corpora: zefang-liu CSV, generic CSV/JSONL, .eml folders, mbox,
// Enron maildir, to E4 JSONL rows) and `svbench data generate e4` (the
// seeded campaign generator behind the embedded mini set).
func dataCommands() []env.DataCommand {
	return []env.DataCommand{importCommand(), generateCommand()}
}

func importCommand() env.DataCommand {
	return env.DataCommand{
		Kind:    env.DataImport,
		Args:    "FILE|DIR",
		MinArgs: 1, MaxArgs: 1,
		Short: "Import a phishing corpus (zefang, csv, jsonl, eml, mbox, maildir) as E4 JSONL rows",
		Long: `Streams the input and writes one E4 row per message: {"id", "email", "answer", "meta"}.

Formats:
  zefang   the zefang-liu phishing-email CSV ("Email Text", "Email Type" = Phishing Email / Safe Email)
  csv      any CSV: --text-col, --label-col, --label-map
  jsonl    one JSON object per line: --text-col, --label-col, --label-map
  eml      a directory (searched recursively) of .eml files, all labelled --label
  mbox     an mbox file (mboxrd quoting), all labelled --label
  maildir  a maildir tree such as the Enron corpus (every file is one message), labelled
           --label, default Legitimate

Labels: a raw label value (compared case-insensitively, spaces trimmed) is looked up in
--label-map first, then in the default table below; any other value makes the row bad. At the
end the import prints which raw labels became which gold label, how many rows each, and whether
--label-map or the default table decided.

Default label table (override any entry with --label-map RAW=Label):
` + DefaultLabelTable() + `"spam" is Phishing by default because the public corpora use it for fraud mail; if your
corpus's spam is marketing, pass --label-map spam=Legitimate (or spam=Abstain).

Bad rows (unknown label, empty text, malformed CSV, non-RFC 5322 files) are skipped and reported
with their line numbers; the import fails once more than --max-bad-rows are bad.`,
		Example: `  svbench data import e4 --format zefang Phishing_Email.csv --out data/e4-zefang.jsonl
  svbench data import e4 --format csv --text-col body --label-col cls --label-map spam=Phishing,ham=Legitimate x.csv --out x.jsonl
  svbench data import e4 --format maildir enron/maildir --out data/e4-enron.jsonl`,
		Flags: func(f *pflag.FlagSet) env.DataRunner {
			format := f.String("format", "", "input format: "+strings.Join(ImportFormats, ", "))
			out := f.String("out", "", "output JSONL file")
			textCol := f.String("text-col", "", `text column/key (csv, jsonl; default "text"; zefang "Email Text")`)
			labelCol := f.String("label-col", "", `label column/key (csv, jsonl; default "label"; zefang "Email Type")`)
			labelMap := f.String("label-map", "", "raw=Label pairs, comma-separated (Label: Phishing, Legitimate, Abstain); override the default table above")
			label := f.String("label", "", "label of every message for eml, mbox, maildir")
			maxBad := f.Int("max-bad-rows", 100, "fail when more rows are bad (-1: no limit)")
			maxBytes := f.Int("max-message-bytes", 4<<20, "largest message or text accepted")
			return func(ctx context.Context, args []string, w env.DataIO) error {
				if !slices.Contains(ImportFormats, *format) {
					return env.Usagef("--format must be one of %s, got %q", strings.Join(ImportFormats, ", "), *format)
				}
				if *out == "" {
					return env.Usagef("--out is required: the JSONL file to write")
				}
				lm, err := ParseLabelMap(*labelMap)
				if err != nil {
					return env.Usagef("--label-map: %v", err)
				}
				if (*format == FormatEML || *format == FormatMbox) && *label == "" {
					return env.Usagef("--format %s needs --label Phishing|Legitimate: those files carry no labels", *format)
				}
				opts := ImportOptions{
					Format: *format, TextCol: *textCol, LabelCol: *labelCol, LabelMap: lm,
					Label: *label, MaxBadRows: *maxBad, MaxMessageBytes: *maxBytes,
				}
				st, err := importFile(ctx, args[0], *out, opts)
				for i, b := range st.Bad {
					if i == 10 {
						fmt.Fprintf(w.Err, "… %d more bad rows\n", st.BadRows-10)
						break
					}
					fmt.Fprintf(w.Err, "skipped %s\n", b)
				}
				if err != nil {
					return err
				}
				fmt.Fprintf(w.Out, "wrote %s: %d rows (%s), %d bad rows skipped\n", *out, st.Rows, labelSummary(st.Labels), st.BadRows)
				printLabelMapping(w.Out, st.Mapped)
				return nil
			}
		},
	}
}

// importFile writes atomically, so a failed import never leaves a
// half-written dataset behind.
func importFile(ctx context.Context, src, out string, opts ImportOptions) (ImportStats, error) {
	if dir := filepath.Dir(out); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return ImportStats{}, fmt.Errorf("create %s: %w", dir, err)
		}
	}
	var st ImportStats
	err := atomicfile.Write(out, func(w io.Writer) error {
		var err error
		st, err = Import(ctx, src, opts, w)
		if err == nil && st.Rows == 0 {
			err = errors.New("no rows imported: check --format and the column flags")
		}
		return err
	})
	return st, err
}

// printLabelMapping lists what every raw label became, so a default
// decision ("spam" → Phishing) is never silent.
func printLabelMapping(w io.Writer, mapped []MappedLabel) {
	if len(mapped) == 0 {
		return
	}
	fmt.Fprintln(w, "labels (raw value → gold label):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "  RAW\tLABEL\tDECIDED BY\tROWS")
	byDefault := false
	for _, m := range mapped {
		raw := m.Raw
		if m.Rule != RuleFixed {
			raw = fmt.Sprintf("%q", raw)
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%d\n", raw, m.Label, m.Rule, m.Rows)
		byDefault = byDefault || m.Rule == RuleDefault
	}
	tw.Flush()
	if byDefault {
		fmt.Fprintln(w, "override a default-table mapping with --label-map RAW=Label (see svbench data import e4 --help)")
	}
}

func labelSummary(m map[string]int) string {
	keys := slices.Sorted(maps.Keys(m))
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func generateCommand() env.DataCommand {
	return env.DataCommand{
		Kind:  env.DataGenerate,
		Short: "Generate E4 phishing and legitimate emails (raw MIME, en/es/de) as JSONL",
		Long: `Generates raw RFC 5322 messages: credential harvest, invoice/BEC, delivery notice, MFA
fatigue, gift-card and payroll-change campaigns, and legitimate receipts and parcel notices,
password resets, newsletters and internal mail, including hard negatives (urgent internal mail,
a colleague's request about gift cards or bank details, real security alerts, click-tracked
newsletters). Phishing copies the legitimate mail of its theme. Half are phishing. The same
--seed, --n and --split give the same bytes.

The prose of every message comes from a template family (meta.template), and each family
belongs to one split: --split train (the default) draws only on the families of the train
split E4 serves, so generated training data shares no template with the test set every E4
score is computed on; --split test reproduces the test set's families (for studies, never for
training).`,
		Example: "  svbench data generate e4 --n 5000 --seed 7 --out data/e4-gen.jsonl",
		Flags: func(f *pflag.FlagSet) env.DataRunner {
			n := f.Int("n", 1000, "rows to generate (half phishing)")
			seed := f.Uint64("seed", 1, "generator seed")
			split := f.String("split", env.SplitTrain, "whose template families to use: "+strings.Join(generatorSplits, ", "))
			out := f.String("out", "", "output JSONL file")
			return func(_ context.Context, _ []string, dw env.DataIO) error {
				if *out == "" {
					return env.Usagef("--out is required: the JSONL file to write")
				}
				if *n <= 0 {
					return env.Usagef("--n must be positive, got %d", *n)
				}
				rows, err := GenerateSplit(*split, *seed, *n)
				if err != nil {
					return env.Usagef("--split: %v", err)
				}
				f, err := os.Create(*out)
				if err != nil {
					return fmt.Errorf("create %s: %w", *out, err)
				}
				w := bufio.NewWriter(f)
				enc := json.NewEncoder(w)
				enc.SetEscapeHTML(false)
				for _, r := range rows {
					if err := enc.Encode(r); err != nil {
						f.Close()
						return err
					}
				}
				if err := w.Flush(); err != nil {
					f.Close()
					return fmt.Errorf("write %s: %w", *out, err)
				}
				if err := f.Close(); err != nil {
					return fmt.Errorf("write %s: %w", *out, err)
				}
				fmt.Fprintf(dw.Out, "wrote %s: %d rows (%s template families)\n", *out, *n, *split)
				return nil
			}
		},
	}
}
