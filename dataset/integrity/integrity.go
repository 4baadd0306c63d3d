// Package integrity checks dataset files before they are trusted: rows
// parse, prompts are not duplicated, labels are not degenerate, and no
// evaluation row (or a trivially edited copy of it) also sits in training.
package integrity

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/svbench/svbench/dataset"

	"github.com/svbench/svbench/base/clip"
)

// Parsed is what integrity checks need from a row: the text a model sees
// and the gold label (canonical JSON).
type Parsed struct {
	Text  string
	Label string
	// Fields, when the environment reads its prompts as structured records
	// (env.FieldExtractor), are the record's fields: Validate looks for one
	// or two of them that predict the label on their own.
	Fields map[string]string
}

// ParseFunc reads one row; an error marks the row invalid.
type ParseFunc func(raw json.RawMessage) (Parsed, error)

// GenericParse is used when no environment is named: the "question" (or
// "prompt") field, else the whole row without id and meta; the label is the
// "answer" field.
func GenericParse(raw json.RawMessage) (Parsed, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return Parsed{}, fmt.Errorf("row is not a JSON object: %w", err)
	}
	var p Parsed
	for _, k := range []string{"question", "prompt"} {
		if v, ok := m[k]; ok {
			var s string
			if json.Unmarshal(v, &s) == nil {
				p.Text = s
			} else {
				p.Text = string(dataset.Canonical(v))
			}
			break
		}
	}
	if p.Text == "" {
		delete(m, "id")
		delete(m, "meta")
		b, _ := json.Marshal(m)
		p.Text = string(b)
	}
	if v, ok := m["answer"]; ok {
		p.Label = string(dataset.Canonical(v))
	}
	return p, nil
}

// Normalise is the near-duplicate form of a text: lower-case, every run of
// digits collapsed to one "0", whitespace runs folded to one space. Two
// prompts that differ only in numbers, case or spacing collide.
func Normalise(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	space, digit := false, false
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			space, digit = true, false
			continue
		case unicode.IsDigit(r):
			if digit {
				continue
			}
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space, digit = false, true
			b.WriteByte('0')
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space, digit = false, false
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

type digest [16]byte

func hashText(s string) digest {
	sum := sha256.Sum256([]byte(s))
	var d digest
	copy(d[:], sum[:16])
	return d
}

// Finding is one problem or warning, located.
type Finding struct {
	Kind string `json:"kind"`
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	Msg  string `json:"msg"`
}

func (f Finding) String() string {
	if f.Line > 0 {
		return fmt.Sprintf("%s: line %d: %s: %s", f.File, f.Line, f.Kind, f.Msg)
	}
	return fmt.Sprintf("%s: %s: %s", f.File, f.Kind, f.Msg)
}

// FileStats summarises one file.
type FileStats struct {
	Path       string         `json:"path"`
	Split      string         `json:"split"`
	Rows       int            `json:"rows"`
	Invalid    int            `json:"invalid"`
	Labels     map[string]int `json:"labels"`
	ExactDup   int            `json:"exact_duplicates"`
	NearDup    int            `json:"near_duplicates"`
	Conflicts  int            `json:"conflicting_labels"`
	Revision   string         `json:"revision"`
	Commitment string         `json:"commitment"`
}

// Leak counts held-out rows (dev, test, …) whose prompt also appears in
// another split.
type Leak struct {
	From  string  `json:"from"`
	Into  string  `json:"into"`
	Exact int     `json:"exact"`
	Near  int     `json:"near"`
	Rows  int     `json:"rows"`
	Share float64 `json:"near_share"`
}

// Report is the result of Validate.
type Report struct {
	Files    []FileStats `json:"files"`
	Leaks    []Leak      `json:"leaks,omitempty"`
	Problems []Finding   `json:"problems"`
	Warnings []Finding   `json:"warnings"`
	// MaxNearLeak is the near-leakage share allowed (Options.MaxNearLeak).
	MaxNearLeak float64 `json:"max_near_leak"`
	// Shortcuts are the best one- and two-field rules over every file's
	// rows, when the rows have fields (Parsed.Fields).
	Shortcuts *Shortcuts `json:"shortcuts,omitempty"`
}

// OK is true when nothing must be fixed.
func (r *Report) OK() bool { return len(r.Problems) == 0 }

// Options tune Validate.
type Options struct {
	// MaxNearLeak is the share of a held-out split's rows that may have a
	// near-duplicate (digits collapsed) in another split before it counts
	// as a problem. Exact leakage is always a problem. Templated sources
	// (E1 flows differing only in ports and byte counts) legitimately
	// produce some near twins, hence a threshold rather than zero.
	MaxNearLeak float64
	// MaxFindings bounds listed findings per kind and file.
	MaxFindings int
}

// maxListed stops a broken file from producing a million lines of output.
const defaultMaxFindings = 20

type fileHashes struct {
	stats FileStats
	exact map[digest]int // → first line
	near  map[digest]int
	// rowNear is every valid row's normalised digest, so near leakage
	// counts rows, not distinct forms.
	rowNear []digest
	fields  []FieldRow
}

// Expand turns a FILE or DIR argument into JSONL files (a directory's
// *.jsonl, sorted).
func Expand(arg string) ([]string, error) {
	st, err := os.Stat(arg)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{arg}, nil
	}
	files, err := filepath.Glob(filepath.Join(arg, "*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no *.jsonl files", arg)
	}
	slices.Sort(files)
	return files, nil
}

// SplitName is a file's split: its base name without extensions.
func SplitName(path string) string {
	b := filepath.Base(path)
	if i := strings.IndexByte(b, '.'); i > 0 {
		b = b[:i]
	}
	return b
}

// Validate checks the files. Files whose names share a split (train.jsonl,
// dev.jsonl, test.jsonl) are checked for leakage between splits: a row in a
// later split (dev, test, or any non-train split) whose prompt exactly or
// nearly equals a row in another split.
func Validate(paths []string, parse ParseFunc, opts Options) (*Report, error) {
	if opts.MaxFindings <= 0 {
		opts.MaxFindings = defaultMaxFindings
	}
	rep := &Report{Problems: []Finding{}, Warnings: []Finding{}, MaxNearLeak: opts.MaxNearLeak}
	var all []*fileHashes
	for _, p := range paths {
		fh, err := scanFile(p, parse, rep, opts)
		if err != nil {
			return nil, err
		}
		all = append(all, fh)
		rep.Files = append(rep.Files, fh.stats)
	}
	// Leakage: every ordered pair of different splits, reporting rows of
	// the held-out one (not train) found in the other.
	for _, into := range all {
		if into.stats.Split == "train" {
			continue
		}
		for _, from := range all {
			if from == into || from.stats.Split == into.stats.Split {
				continue
			}
			if into.stats.Split > from.stats.Split && from.stats.Split != "train" {
				continue // dev/test reported once
			}
			lk := Leak{From: from.stats.Split, Into: into.stats.Split, Rows: into.stats.Rows}
			var examples []int
			for d, line := range into.exact {
				if _, ok := from.exact[d]; ok {
					lk.Exact++
					examples = append(examples, line)
				}
			}
			for _, d := range into.rowNear {
				if _, ok := from.near[d]; ok {
					lk.Near++
				}
			}
			if lk.Rows > 0 {
				lk.Share = float64(lk.Near) / float64(lk.Rows)
			}
			if lk.Exact == 0 && lk.Near == 0 {
				continue
			}
			rep.Leaks = append(rep.Leaks, lk)
			slices.Sort(examples)
			if len(examples) > opts.MaxFindings {
				examples = examples[:opts.MaxFindings]
			}
			if lk.Exact > 0 {
				rep.Problems = append(rep.Problems, Finding{Kind: "leakage", File: into.stats.Path,
					Msg: fmt.Sprintf("%d row(s) have the same prompt as a row in %s (lines %s); remove them from one split", lk.Exact, from.stats.Path, joinInts(examples, lk.Exact))})
			}
			f := Finding{Kind: "near-leakage", File: into.stats.Path,
				Msg: fmt.Sprintf("%d of %d rows (%.1f%%) equal a %s prompt once case, digits and spacing are normalised", lk.Near, lk.Rows, 100*lk.Share, from.stats.Split)}
			if lk.Share > opts.MaxNearLeak {
				f.Msg += fmt.Sprintf(" (over the %.1f%% allowed)", 100*opts.MaxNearLeak)
				rep.Problems = append(rep.Problems, f)
			} else if lk.Near > 0 {
				rep.Warnings = append(rep.Warnings, f)
			}
		}
	}
	// Label shortcuts over every file's rows together.
	var fieldRows []FieldRow
	for _, fh := range all {
		fieldRows = append(fieldRows, fh.fields...)
	}
	rep.Shortcuts = FindShortcuts(fieldRows)
	// The rule is fitted on every file together: name them by their base
	// names, as the files table does, so the warning stays one readable row.
	where := strings.Join(paths, ",")
	if len(paths) > 1 {
		names := make([]string, len(paths))
		for i, p := range paths {
			names[i] = filepath.Base(p)
		}
		where = strings.Join(names, ",")
	}
	rep.Warnings = append(rep.Warnings, rep.Shortcuts.findings(where)...)
	// Label balance over everything.
	labels := map[string]int{}
	total := 0
	for _, f := range rep.Files {
		for l, n := range f.Labels {
			labels[l] += n
			total += n
		}
	}
	if total > 0 {
		for l, n := range labels {
			if share := float64(n) / float64(total); share > 0.95 {
				rep.Warnings = append(rep.Warnings, Finding{Kind: "label-balance", File: strings.Join(paths, ","),
					Msg: fmt.Sprintf("label %s is %.1f%% of %d rows: a constant answer scores well", AbbrevLabel(l), 100*share, total)})
			}
		}
	}
	return rep, nil
}

func scanFile(path string, parse ParseFunc, rep *Report, opts Options) (*fileHashes, error) {
	fh := &fileHashes{
		stats: FileStats{Path: path, Split: SplitName(path), Labels: map[string]int{}},
		exact: map[digest]int{},
		near:  map[digest]int{},
	}
	labelOf := map[digest]string{}
	var nearExamples []string
	var commit dataset.Commitment
	counts := map[string]int{}
	add := func(list *[]Finding, f Finding) {
		counts[f.Kind]++
		if counts[f.Kind] <= opts.MaxFindings {
			*list = append(*list, f)
		}
	}
	rev, err := dataset.ReadFile(path, func(line int, raw []byte) error {
		fh.stats.Rows++
		commit.Add(raw)
		if !utf8.Valid(raw) {
			add(&rep.Problems, Finding{"invalid-utf8", path, line, "row is not valid UTF-8"})
		}
		p, err := parse(json.RawMessage(bytes.Clone(raw)))
		if err != nil {
			fh.stats.Invalid++
			add(&rep.Problems, Finding{"schema", path, line, err.Error()})
			return nil
		}
		fh.stats.Labels[p.Label]++
		if len(p.Fields) > 0 {
			fh.fields = append(fh.fields, FieldRow{Fields: p.Fields, Label: p.Label})
		}
		d, n := hashText(p.Text), hashText(Normalise(p.Text))
		fh.rowNear = append(fh.rowNear, n)
		if first, ok := fh.exact[d]; ok {
			fh.stats.ExactDup++
			add(&rep.Problems, Finding{"duplicate", path, line, fmt.Sprintf("same prompt as line %d", first)})
			if labelOf[d] != p.Label {
				fh.stats.Conflicts++
				add(&rep.Problems, Finding{"conflicting-label", path, line, fmt.Sprintf("same prompt as line %d but answer %s instead of %s", first, AbbrevLabel(p.Label), AbbrevLabel(labelOf[d]))})
			}
			return nil
		}
		fh.exact[d] = line
		labelOf[d] = p.Label
		if first, ok := fh.near[n]; ok {
			fh.stats.NearDup++
			if len(nearExamples) < 5 {
				nearExamples = append(nearExamples, fmt.Sprintf("%d~%d", line, first))
			}
			return nil
		}
		fh.near[n] = line
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, kind := range slices.Sorted(maps.Keys(counts)) {
		if n := counts[kind]; n > opts.MaxFindings {
			rep.Problems = append(rep.Problems, Finding{Kind: kind, File: path, Msg: fmt.Sprintf("%d more not listed", n-opts.MaxFindings)})
		}
	}
	if fh.stats.NearDup > 0 {
		// Templated sources make near twins common; one summary line says
		// how common without drowning the report.
		rep.Warnings = append(rep.Warnings, Finding{Kind: "near-duplicate", File: path,
			Msg: fmt.Sprintf("%d of %d rows equal an earlier row up to case, digits and spacing (e.g. lines %s)",
				fh.stats.NearDup, fh.stats.Rows, strings.Join(nearExamples, ", "))})
	}
	if fh.stats.Rows == 0 {
		rep.Problems = append(rep.Problems, Finding{Kind: "empty", File: path, Msg: "no rows"})
	}
	fh.stats.Revision = rev
	fh.stats.Commitment = commit.Sum()
	return fh, nil
}

// joinInts lists line numbers as "3, 17, 40", noting how many more there
// are than listed.
func joinInts(xs []int, total int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = strconv.Itoa(x)
	}
	s := strings.Join(parts, ", ")
	if total > len(xs) {
		s += fmt.Sprintf(" and %d more", total-len(xs))
	}
	return s
}

// MaxLabelWidth is the longest label printed verbatim; longer labels (E2's
// answer is a JSON object listing every expected finding) are summarised.
const MaxLabelWidth = 60

// LabelClass is a short, readable stand-in for a label. Labels up to
// MaxLabelWidth characters are themselves. A longer JSON object becomes its
// shape: arrays by their length, short scalars by value, long strings left
// out ({"oracle":[…3…],"fixture_type":"tf",…} → "{fixture_type: tf,
// mutations: 2, oracle: 3}"), so labels of the same shape count together in
// a balance table. Anything else is cut to its first characters.
func LabelClass(label string) string {
	if utf8.RuneCountInString(label) <= MaxLabelWidth {
		return label
	}
	var v any
	if json.Unmarshal([]byte(label), &v) == nil {
		switch x := v.(type) {
		case map[string]any:
			keys := slices.Sorted(maps.Keys(x))
			var parts []string
			for _, k := range keys {
				switch e := x[k].(type) {
				case []any:
					parts = append(parts, fmt.Sprintf("%s: %d", k, len(e)))
				case map[string]any:
					parts = append(parts, fmt.Sprintf("%s: {%d keys}", k, len(e)))
				case string:
					if utf8.RuneCountInString(e) <= 16 {
						parts = append(parts, k+": "+e)
					}
				case nil:
				default:
					parts = append(parts, fmt.Sprintf("%s: %v", k, e))
				}
			}
			if c := "{" + strings.Join(parts, ", ") + "}"; utf8.RuneCountInString(c) <= MaxLabelWidth {
				return c
			}
		case []any:
			return fmt.Sprintf("[%d items]", len(x))
		}
	}
	return clip.Runes(label, MaxLabelWidth-12, "") + "…"
}

// AbbrevLabel is LabelClass plus, for a summarised label, a hash and length
// that tell two labels of one shape apart.
func AbbrevLabel(label string) string {
	c := LabelClass(label)
	if c == label {
		return label
	}
	sum := sha256.Sum256([]byte(label))
	return fmt.Sprintf("%s (sha256 %x, %d chars)", c, sum[:4], len(label))
}

// OverlapReport compares two datasets.
type OverlapReport struct {
	A, B       string
	RowsA      int `json:"rows_a"`
	RowsB      int `json:"rows_b"`
	ExactInA   int `json:"exact_b_in_a"` // rows of B whose prompt is in A
	NearInA    int `json:"near_b_in_a"`
	ExactInB   int `json:"exact_a_in_b"`
	NearInB    int `json:"near_a_in_b"`
	InvalidA   int `json:"invalid_a"`
	InvalidB   int `json:"invalid_b"`
	SameLabelB int `json:"exact_b_in_a_same_label"`
}

type side struct {
	rows, invalid int
	exact         map[digest]string // → label
	near          map[digest]bool
	order         []digest
	nearOrder     []digest
}

func load(paths []string, parse ParseFunc) (*side, error) {
	s := &side{exact: map[digest]string{}, near: map[digest]bool{}}
	for _, p := range paths {
		_, err := dataset.ReadFile(p, func(_ int, raw []byte) error {
			pr, err := parse(json.RawMessage(bytes.Clone(raw)))
			if err != nil {
				s.invalid++
				return nil
			}
			s.rows++
			d, n := hashText(pr.Text), hashText(Normalise(pr.Text))
			s.exact[d] = pr.Label
			s.near[n] = true
			s.order = append(s.order, d)
			s.nearOrder = append(s.nearOrder, n)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Overlap counts rows of each dataset whose prompt (exactly, or after
// normalisation) appears in the other.
func Overlap(a, b []string, parse ParseFunc) (*OverlapReport, error) {
	sa, err := load(a, parse)
	if err != nil {
		return nil, err
	}
	sb, err := load(b, parse)
	if err != nil {
		return nil, err
	}
	r := &OverlapReport{A: strings.Join(a, ","), B: strings.Join(b, ","), RowsA: sa.rows, RowsB: sb.rows, InvalidA: sa.invalid, InvalidB: sb.invalid}
	for i, d := range sb.order {
		if l, ok := sa.exact[d]; ok {
			r.ExactInA++
			if l == sb.exact[d] {
				r.SameLabelB++
			}
		}
		if sa.near[sb.nearOrder[i]] {
			r.NearInA++
		}
	}
	for i, d := range sa.order {
		if _, ok := sb.exact[d]; ok {
			r.ExactInB++
		}
		if sb.near[sa.nearOrder[i]] {
			r.NearInB++
		}
	}
	return r, nil
}
