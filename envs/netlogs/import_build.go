// `svbench data import e1` imports public network-flow corpora (IoT-23,
// CIC-IDS-2017, UNSW-NB15, CIC-IoT-2023, NetFlow v2) into E1 dataset splits
// (the import_*.go files).
//
// Every source is streamed once, in constant memory: rows are parsed in a
// reused buffer and offered to one bottom-K sampler per label (K = the
// target size), keyed by a hash of the row's dedup identity. That yields a
// uniform, exactly de-duplicated sample of distinct flows without holding
// the input; per-scenario row counts (exact) then allocate the sample across
// scenarios, and the result is split 70/15/15 stratified by scenario and
// label. Memory is O(K), independent of input size.

package netlogs

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/svbench/svbench/base/version"
	"github.com/svbench/svbench/dataset"
)

// ImportOptions configure an import.
type ImportOptions struct {
	Format string
	// N is the target number of rows (before the OOD test split).
	N int
	// Balance is the Malicious share of the sample; negative keeps the
	// source's natural proportions.
	Balance float64
	Seed    uint64
	// Render is "rich" (default) or "reference".
	Render     string
	MaxBadRows int
	// OODFrom, when set, supplies the test split from other sources
	// (OODFormat, default Format); the main sources then fill train and dev
	// only. OODN is the test size (0: 15% of the total).
	OODFrom   []string
	OODFormat string
	OODN      int
	// Now stamps the card (tests fix it).
	Now func() time.Time
}

// ImportResult is what an import produced.
type ImportResult struct {
	Splits  map[string][]any
	Card    *dataset.Card
	BadRows []BadRow
}

func (o *ImportOptions) check() error {
	if !slices.Contains(ImportFormats(), o.Format) {
		return fmt.Errorf("unknown format %q (want one of %s)", o.Format, strings.Join(ImportFormats(), ", "))
	}
	if o.OODFormat == "" {
		o.OODFormat = o.Format
	}
	if !slices.Contains(ImportFormats(), o.OODFormat) {
		return fmt.Errorf("unknown OOD format %q (want one of %s)", o.OODFormat, strings.Join(ImportFormats(), ", "))
	}
	if o.N <= 0 {
		return fmt.Errorf("target size must be positive, got %d", o.N)
	}
	if o.Balance > 1 {
		return fmt.Errorf("balance is the Malicious share in [0,1], got %g", o.Balance)
	}
	if _, ok := Render(Flow{}, o.Render); !ok {
		return fmt.Errorf("unknown rendering %q (want rich or reference)", o.Render)
	}
	if o.MaxBadRows < 0 {
		o.MaxBadRows = 0
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return nil
}

// ExpandInputs turns FILE|DIR arguments into files: directories are walked
// for the files the format publishes (conn.log.labeled for IoT-23, CSVs
// otherwise, optionally gzip-compressed), in lexical order.
func ExpandInputs(format string, args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		st, err := os.Stat(a)
		if err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		if !st.IsDir() {
			out = append(out, a)
			continue
		}
		var found []string
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			name := strings.TrimSuffix(d.Name(), ".gz")
			match := strings.HasSuffix(name, ".csv")
			if format == FormatIoT23 {
				match = strings.HasSuffix(name, ".labeled")
			}
			if match {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("input %s: %w", a, err)
		}
		if len(found) == 0 {
			want := "*.csv"
			if format == FormatIoT23 {
				want = "*.labeled (conn.log.labeled)"
			}
			return nil, fmt.Errorf("input %s: no %s files found for --format %s", a, want, format)
		}
		slices.Sort(found)
		out = append(out, found...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no input files")
	}
	return out, nil
}

// Opener is how sources are read; tests and benchmarks substitute generated
// streams.
type Opener func(path string) (io.ReadCloser, error)

func openFile(path string) (io.ReadCloser, error) { return os.Open(path) }

// Import reads the files and builds the splits and card. It does not write.
func Import(ctx context.Context, files []string, opts ImportOptions) (*ImportResult, error) {
	return ImportFrom(ctx, files, opts, openFile)
}

// ImportFrom is Import with a custom opener.
func ImportFrom(ctx context.Context, files []string, opts ImportOptions, open Opener) (*ImportResult, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	main := newCollector(opts.Format, opts.N, opts.Seed, opts.MaxBadRows)
	if err := collect(ctx, main, opts.Format, files, open); err != nil {
		return nil, err
	}
	mainSel, conflicts := main.selection(opts.N, opts.Balance, opts.Seed)
	if len(mainSel) == 0 {
		return nil, fmt.Errorf("no usable rows in %s", strings.Join(files, ", "))
	}

	ratios := [3]float64{0.70, 0.15, 0.15}
	var ood *collector
	var oodSel []sampledFlow
	if len(opts.OODFrom) > 0 {
		ratios = [3]float64{0.70, 0.15, 0}
		t := opts.OODN
		if t <= 0 {
			t = int(float64(len(mainSel))*0.15/0.85 + 0.5)
		}
		ood = newCollector(opts.OODFormat, t, opts.Seed, opts.MaxBadRows)
		if err := collect(ctx, ood, opts.OODFormat, opts.OODFrom, open); err != nil {
			return nil, fmt.Errorf("OOD sources: %w", err)
		}
		var oc int
		oodSel, oc = ood.selection(t, opts.Balance, opts.Seed)
		conflicts += oc
		// An OOD row identical to a training row would be leakage.
		inMain := map[string]bool{}
		for _, r := range mainSel {
			inMain[r.Key] = true
		}
		oodSel = slices.DeleteFunc(oodSel, func(r sampledFlow) bool { return inMain[r.Key] })
	}

	keys := make([]string, len(mainSel))
	for i, r := range mainSel {
		keys[i] = r.Scenario + "|" + r.Label.Answer
	}
	sp := dataset.StratifiedSplit(keys, ratios, opts.Seed)
	source := opts.Format
	card := &dataset.Card{
		Name:    "e1-" + source,
		Env:     "e1",
		Version: "1",
		Created: opts.Now().UTC(),
		Importer: &dataset.Producer{Name: "svbench data import e1", Version: version.Version, Params: map[string]any{
			"format": opts.Format, "n": opts.N, "balance": opts.Balance, "seed": opts.Seed, "render": renderName(opts.Render),
			"max_bad_rows": opts.MaxBadRows,
		}},
		Seed:    opts.Seed,
		Sources: main.sources,
		Licence: licence(opts.Format),
		Counts:  dataset.Counts{Labels: map[string]int{}, Families: map[string]int{}, LabelsBySplit: map[string]map[string]int{}},
		Dedup: &dataset.Dedup{
			Key: main.keyDescription(), Seen: main.seen(), Dropped: main.dropped() + int64(conflicts),
			Note: "Sampling keeps the K lowest hash priorities per label (a bottom-K sketch), so duplicates are removed exactly from the sample, which is uniform over distinct flows; duplicates never reaching the sample are not counted. Flows seen with both labels are dropped.",
		},
	}
	if ood != nil {
		card.Name += "-ood-" + opts.OODFormat
		card.Importer.Params["ood_format"] = opts.OODFormat
		card.Importer.Params["ood_n"] = len(oodSel)
		card.Sources = append(card.Sources, ood.sources...)
		card.Notes = append(card.Notes, fmt.Sprintf("Out-of-distribution build: train/dev from %s, test from %s.", opts.Format, opts.OODFormat))
		if l := licence(opts.OODFormat); l != card.Licence {
			card.Licence += "; test split: " + l
		}
	}
	if main.blank > 0 {
		card.Notes = append(card.Notes, fmt.Sprintf("%d rows with every field empty were skipped.", main.blank))
	}
	if conflicts > 0 {
		card.Notes = append(card.Notes, fmt.Sprintf("%d flows carried both labels in the sources and were dropped.", conflicts))
	}
	card.Notes = append(card.Notes, main.notes...)
	if ood != nil {
		card.Notes = append(card.Notes, ood.notes...)
	}

	splits := map[string][]any{}
	add := func(split string, r sampledFlow, src string) {
		row := toRow(r, split, src, opts.Render)
		splits[split] = append(splits[split], row)
		card.Counts.Labels[r.Label.Answer]++
		card.Counts.Families[r.Label.Family]++
		if card.Counts.LabelsBySplit[split] == nil {
			card.Counts.LabelsBySplit[split] = map[string]int{}
		}
		card.Counts.LabelsBySplit[split][r.Label.Answer]++
	}
	for name, idx := range map[string][]int{"train": sp.Train, "dev": sp.Dev, "test": sp.Test} {
		for _, i := range idx {
			add(name, mainSel[i], opts.Format)
		}
	}
	for _, r := range oodSel {
		add("test", r, opts.OODFormat)
	}
	for _, name := range dataset.SplitNames {
		if _, ok := splits[name]; !ok {
			splits[name] = []any{}
		}
		// Shuffle file order so a split is not grouped by source file.
		rows := splits[name]
		perm := dataset.Permutation(len(rows), dataset.HashKey64("order", name, fmt.Sprint(opts.Seed)))
		shuffled := make([]any, len(rows))
		for i, p := range perm {
			shuffled[i] = rows[p]
		}
		splits[name] = shuffled
	}
	bad := main.badRows
	if ood != nil {
		bad = append(bad, ood.badRows...)
	}
	return &ImportResult{Splits: splits, Card: card, BadRows: bad}, nil
}

func collect(ctx context.Context, c *collector, format string, files []string, open Opener) error {
	for _, f := range files {
		r, err := open(f)
		if err != nil {
			return fmt.Errorf("open source: %w", err)
		}
		err = c.readSource(ctx, r, f, ImportScenario(format, f))
		r.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

func renderName(s string) string {
	if s == "" {
		return "rich"
	}
	return s
}

func toRow(r sampledFlow, split, source, render string) Row {
	q, _ := Render(r.Flow, render)
	return Row{
		ID:       "e1-" + source + "-" + r.Key,
		Question: q,
		Answer:   r.Label.Answer,
		Meta: map[string]any{
			"source":        source,
			"scenario":      r.Scenario,
			"attack_family": r.Label.Family,
			"hash":          r.Flow.Hash(),
			"dedup_key":     r.Key,
			"split":         split,
			"source_file":   filepath.Base(r.File),
			"source_line":   r.Line,
			"render":        renderName(render),
			"flow":          r.Flow,
		},
	}
}

func licence(format string) string {
	switch format {
	case FormatIoT23:
		return "IoT-23 (Stratosphere Laboratory, CTU): CC BY 4.0 as published; cite Garcia, Parmisano & Erquiaga 2020"
	case FormatCICIDS2017:
		return "CIC-IDS-2017 (Canadian Institute for Cybersecurity): publisher's terms; cite Sharafaldin et al. 2018; check before redistributing"
	case FormatUNSWNB15:
		return "UNSW-NB15 (UNSW Canberra): free for academic research; cite Moustafa & Slay 2015; check before redistributing"
	case FormatCICIoT2023:
		return "CIC-IoT-2023 (Canadian Institute for Cybersecurity): publisher's terms; cite Neto et al. 2023; check before redistributing"
	case FormatNetFlowV2:
		return "NetFlow v2 datasets (University of Queensland): publisher's terms; cite Sarhan et al. 2021; check before redistributing"
	}
	return ""
}

func (c *collector) seen() int64 {
	var n int64
	for _, s := range c.samplers {
		n += s.Seen
	}
	return n
}

func (c *collector) dropped() int64 {
	var n int64
	for _, s := range c.samplers {
		n += s.Dropped
	}
	return n
}

func (c *collector) keyDescription() string {
	if c.keyDesc != "" {
		return c.keyDesc
	}
	return "5-tuple where the source has addresses, else the feature vector"
}

// selection draws up to n records: label quotas by balance (shortfall
// filled from the other label), then within a label, scenarios in
// proportion to their exact row counts, each taking a prefix of its
// priority-ordered sample (itself uniform). Keys held under both labels are
// dropped and counted as conflicts.
func (c *collector) selection(n int, balance float64, seed uint64) ([]sampledFlow, int) {
	labels := []string{LabelBenign, LabelMalicious}
	items := map[string][]sampledFlow{}
	for _, l := range labels {
		items[l] = c.samplers[l].Items()
	}
	both := map[string]int{}
	for _, l := range labels {
		for _, r := range items[l] {
			both[r.Key]++
		}
	}
	conflicts := 0
	for _, l := range labels {
		items[l] = slices.DeleteFunc(items[l], func(r sampledFlow) bool {
			if both[r.Key] > 1 {
				conflicts++
				return true
			}
			return false
		})
	}
	sizes := []int{len(items[LabelBenign]), len(items[LabelMalicious])}
	var weights []float64
	if balance < 0 {
		var tb, tm int64
		for _, v := range c.strata[LabelBenign] {
			tb += v
		}
		for _, v := range c.strata[LabelMalicious] {
			tm += v
		}
		weights = []float64{float64(tb), float64(tm)}
	} else {
		weights = []float64{1 - balance, balance}
	}
	quota := dataset.Allocate(sizes, weights, n)
	var out []sampledFlow
	for li, l := range labels {
		byScen := map[string][]sampledFlow{}
		for _, r := range items[l] {
			byScen[r.Scenario] = append(byScen[r.Scenario], r)
		}
		scen := slices.Sorted(maps.Keys(byScen))
		ss := make([]int, len(scen))
		sw := make([]float64, len(scen))
		for i, s := range scen {
			ss[i] = len(byScen[s])
			sw[i] = float64(c.strata[l][s])
		}
		per := dataset.Allocate(ss, sw, quota[li])
		for i, s := range scen {
			out = append(out, byScen[s][:per[i]]...)
		}
	}
	return out, conflicts / 2 // each conflicting flow removed one record per label
}
