package netlogs

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
)

// importCommand is `svbench data import e1`: public flow corpora to E1
// splits with a card.
func importCommand() env.DataCommand {
	return env.DataCommand{
		Kind:    env.DataImport,
		Args:    "--format FORMAT FILE|DIR... --out DIR",
		MaxArgs: -1,
		Short:   "Import network-flow corpora (IoT-23, CIC-IDS-2017, UNSW-NB15, CIC-IoT-2023, NetFlow v2) for E1",
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
		Flags: func(f *pflag.FlagSet) env.DataRunner {
			format := f.String("format", "", "source format: "+strings.Join(ImportFormats(), "|"))
			out := f.String("out", "", "output directory")
			n := f.Int("n", 10000, "rows to sample (train+dev+test, or train+dev with --ood-from)")
			seed := f.Uint64("seed", 1, "seed for sampling, splits and file order")
			render := f.String("render", "rich", "question text: rich (every Zeek field) or reference (the reference's one-liner)")
			balance := f.String("balance", "0.5", `share of Malicious rows in [0,1], or "natural" to keep the sources' proportions`)
			maxBad := f.Int("max-bad-rows", 1000, "fail when more malformed rows than this are skipped")
			oodFrom := f.StringSlice("ood-from", nil, "take the test split from these FILEs/DIRs (repeat or comma-separate)")
			oodFormat := f.String("ood-format", "", "format of --ood-from sources (default: --format)")
			oodN := f.Int("ood-n", 0, "test rows to draw from --ood-from (default: 15% of the total)")
			return func(ctx context.Context, args []string, dw env.DataIO) error {
				if len(args) == 0 {
					return env.Usagef("give at least one input FILE or DIR")
				}
				if *format == "" {
					return env.Usagef("--format is required (one of %s)", strings.Join(ImportFormats(), ", "))
				}
				if *out == "" {
					return env.Usagef("--out DIR is required")
				}
				bal, err := parseBalance(*balance)
				if err != nil {
					return err
				}
				if *n <= 0 {
					return env.Usagef("--n must be positive, got %d", *n)
				}
				opts := ImportOptions{Format: *format, N: *n, Balance: bal, Seed: *seed, Render: *render, MaxBadRows: *maxBad,
					OODFormat: *oodFormat, OODN: *oodN}
				if _, ok := map[string]bool{"": true, "rich": true, "reference": true}[*render]; !ok {
					return env.Usagef("--render must be rich or reference, got %q", *render)
				}
				if !slices.Contains(ImportFormats(), *format) {
					return env.Usagef("--format %q: want one of %s", *format, strings.Join(ImportFormats(), ", "))
				}
				if *oodFormat != "" && !slices.Contains(ImportFormats(), *oodFormat) {
					return env.Usagef("--ood-format %q: want one of %s", *oodFormat, strings.Join(ImportFormats(), ", "))
				}
				files, err := ExpandInputs(*format, args)
				if err != nil {
					return err
				}
				if len(*oodFrom) > 0 {
					of := *oodFormat
					if of == "" {
						of = *format
					}
					if opts.OODFrom, err = ExpandInputs(of, *oodFrom); err != nil {
						return err
					}
				}
				res, err := Import(ctx, files, opts)
				if err != nil {
					return err
				}
				if err := dataset.WriteSplits(*out, res.Splits, res.Card); err != nil {
					return err
				}
				w := dw.Out
				for _, b := range res.BadRows {
					fmt.Fprintf(dw.Err, "skipped %s\n", b)
				}
				fmt.Fprintf(w, "wrote %s: train %d, dev %d, test %d rows (labels %v)\n", *out,
					len(res.Splits["train"]), len(res.Splits["dev"]), len(res.Splits["test"]), res.Card.Counts.Labels)
				for _, s := range res.Card.Sources {
					fmt.Fprintf(w, "  %s: %d rows, %d skipped, sha256 %s\n", s.Path, s.Rows, s.BadRows, s.SHA256)
				}
				return nil
			}
		},
	}
}

func parseBalance(s string) (float64, error) {
	if s == "natural" {
		return -1, nil
	}
	var v float64
	if _, err := fmt.Sscanf(s, "%g", &v); err != nil || v < 0 || v > 1 {
		return 0, env.Usagef("--balance %q: want a Malicious share in [0,1] or \"natural\"", s)
	}
	return v, nil
}
