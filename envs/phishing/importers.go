package phishing

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/svbench/svbench/base/clip"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/svbench/svbench/envs/phishing/mail"
)

// Import formats.
const (
	FormatZefang  = "zefang"
	FormatCSV     = "csv"
	FormatJSONL   = "jsonl"
	FormatEML     = "eml"
	FormatMbox    = "mbox"
	FormatMaildir = "maildir"
)

// ImportFormats lists the formats Import reads.
var ImportFormats = []string{FormatZefang, FormatCSV, FormatJSONL, FormatEML, FormatMbox, FormatMaildir}

// ImportOptions configure an import. Zero values mean the defaults noted.
type ImportOptions struct {
	Format string
	// TextCol and LabelCol name the columns/keys of csv and jsonl input
	// (defaults "text" and "label"; zefang uses "Email Text"/"Email Type").
	TextCol, LabelCol string
	// LabelMap maps raw label values (case-insensitive) to Phishing,
	// Legitimate or Abstain; unmapped values go through
	// DefaultLabelAliases (phishing/spam/1 …, legitimate/ham/safe/0 …).
	// ImportStats.Mapped reports which decided each raw value.
	LabelMap map[string]string
	// Label is the label of every message of eml, mbox and maildir input
	// (maildir defaults to Legitimate: the Enron corpus is ham).
	Label string
	// MaxBadRows aborts the import when more rows are bad; negative means
	// no limit.
	MaxBadRows int
	// MaxMessageBytes bounds one message or text (default 4 MiB).
	MaxMessageBytes int
}

// BadRow is a skipped input row.
type BadRow struct {
	Where string `json:"where"` // file name
	Line  int    `json:"line,omitempty"`
	Msg   string `json:"msg"`
}

func (b BadRow) String() string {
	if b.Line > 0 {
		return fmt.Sprintf("%s: line %d: %s", b.Where, b.Line, b.Msg)
	}
	return fmt.Sprintf("%s: %s", b.Where, b.Msg)
}

// ImportStats summarises an import. Bad lists the first 50 bad rows.
type ImportStats struct {
	Rows    int            `json:"rows"`
	BadRows int            `json:"bad_rows"`
	Bad     []BadRow       `json:"bad,omitempty"`
	Labels  map[string]int `json:"labels"`
	// Mapped says which raw label became which gold label for the rows
	// written, and what decided it; most rows first.
	Mapped []MappedLabel `json:"mapped_labels,omitempty"`
}

// Label rules: what decided a row's gold label.
const (
	RuleLabelMap = "--label-map"
	RuleDefault  = "default table"
	RuleFixed    = "--label"
)

// MappedLabel counts the rows whose raw label (lower-cased and trimmed)
// became Label under Rule.
type MappedLabel struct {
	Raw   string `json:"raw"`
	Label string `json:"label"`
	Rule  string `json:"rule"`
	Rows  int    `json:"rows"`
}

// LabelAlias is one entry of the default label table.
type LabelAlias struct {
	Raw   string // lower-case
	Label string
}

// DefaultLabelAliases is how raw labels become gold labels when --label-map
// does not name them (compared case-insensitively, spaces trimmed). "spam"
// is Phishing because the public corpora this importer reads use it for
// unsolicited fraud mail; when a corpus's spam is marketing, map it
// explicitly (--label-map spam=Legitimate, or spam=Abstain).
var DefaultLabelAliases = []LabelAlias{
	{"phishing", LabelPhishing}, {"phishing email", LabelPhishing}, {"phish", LabelPhishing},
	{"spam", LabelPhishing}, {"malicious", LabelPhishing}, {"fraud", LabelPhishing},
	{"1", LabelPhishing}, {"true", LabelPhishing},
	{"legitimate", LabelLegitimate}, {"safe email", LabelLegitimate}, {"safe", LabelLegitimate},
	{"ham", LabelLegitimate}, {"benign", LabelLegitimate}, {"legit", LabelLegitimate},
	{"0", LabelLegitimate}, {"false", LabelLegitimate},
	{"abstain", LabelAbstain},
}

// DefaultLabelTable renders DefaultLabelAliases one gold label per line,
// for help texts.
func DefaultLabelTable() string {
	var b strings.Builder
	for _, gold := range []string{LabelPhishing, LabelLegitimate, LabelAbstain} {
		var raws []string
		for _, a := range DefaultLabelAliases {
			if a.Label == gold {
				raws = append(raws, fmt.Sprintf("%q", a.Raw))
			}
		}
		fmt.Fprintf(&b, "  %-10s  %s\n", gold, strings.Join(raws, ", "))
	}
	return b.String()
}

const keepBad = 50

type importer struct {
	ctx    context.Context
	opts   ImportOptions
	enc    *json.Encoder
	stats  ImportStats
	src    string
	mapped map[MappedLabel]int // Rows unset
}

// Import converts src (a file or, for eml and maildir, a directory) to E4
// JSONL rows on w, streaming: memory stays bounded by one message.
func Import(ctx context.Context, src string, opts ImportOptions, w io.Writer) (ImportStats, error) {
	if opts.MaxMessageBytes <= 0 {
		opts.MaxMessageBytes = 4 << 20
	}
	im := &importer{ctx: ctx, opts: opts, enc: json.NewEncoder(w), src: src, mapped: map[MappedLabel]int{}}
	im.enc.SetEscapeHTML(false)
	im.stats.Labels = map[string]int{}
	var err error
	switch opts.Format {
	case FormatZefang:
		if im.opts.TextCol == "" {
			im.opts.TextCol = "Email Text"
		}
		if im.opts.LabelCol == "" {
			im.opts.LabelCol = "Email Type"
		}
		err = im.csv()
	case FormatCSV:
		err = im.csv()
	case FormatJSONL:
		err = im.jsonl()
	case FormatEML:
		err = im.eml()
	case FormatMbox:
		err = im.mbox()
	case FormatMaildir:
		if im.opts.Label == "" {
			im.opts.Label = LabelLegitimate
		}
		err = im.maildir()
	default:
		return im.stats, fmt.Errorf("unknown import format %q (known: %s)", opts.Format, strings.Join(ImportFormats, ", "))
	}
	im.finishMapping()
	return im.stats, err
}

// finishMapping turns the mapping counts into ImportStats.Mapped.
func (im *importer) finishMapping() {
	im.stats.Mapped = nil
	for m, n := range im.mapped {
		m.Rows = n
		im.stats.Mapped = append(im.stats.Mapped, m)
	}
	sort.Slice(im.stats.Mapped, func(i, j int) bool {
		a, b := im.stats.Mapped[i], im.stats.Mapped[j]
		if a.Rows != b.Rows {
			return a.Rows > b.Rows
		}
		return a.Raw < b.Raw
	})
}

var errTooManyBad = errors.New("too many bad rows")

func (im *importer) bad(where string, line int, format string, args ...any) error {
	im.stats.BadRows++
	if len(im.stats.Bad) < keepBad {
		im.stats.Bad = append(im.stats.Bad, BadRow{Where: where, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	if im.opts.MaxBadRows >= 0 && im.stats.BadRows > im.opts.MaxBadRows {
		return fmt.Errorf("%w: %d bad rows exceed --max-bad-rows %d; first: %s", errTooManyBad, im.stats.BadRows, im.opts.MaxBadRows, im.stats.Bad[0])
	}
	return nil
}

func (im *importer) emit(email, label string) error {
	im.stats.Rows++
	im.stats.Labels[label]++
	return im.enc.Encode(Row{
		ID:     fmt.Sprintf("%s-%07d", im.opts.Format, im.stats.Rows),
		Email:  email,
		Answer: label,
		Meta:   RowMeta{Campaign: "imported", Source: im.opts.Format + ":" + filepath.Base(im.src)},
	})
}

// label resolves a raw label value: --label-map first, then
// DefaultLabelAliases. rule says which decided.
func (im *importer) label(raw string) (label, rule string, ok bool) {
	k := strings.ToLower(strings.TrimSpace(raw))
	for from, to := range im.opts.LabelMap {
		if strings.ToLower(strings.TrimSpace(from)) == k {
			l, ok := canonicalLabel(to)
			return l, RuleLabelMap, ok
		}
	}
	for _, a := range DefaultLabelAliases {
		if a.Raw == k {
			return a.Label, RuleDefault, true
		}
	}
	return "", "", false
}

func canonicalLabel(s string) (string, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "phishing":
		return LabelPhishing, true
	case "legitimate":
		return LabelLegitimate, true
	case "abstain":
		return LabelAbstain, true
	}
	return "", false
}

// ParseLabelMap reads "raw=Label,raw2=Label2".
func ParseLabelMap(s string) (map[string]string, error) {
	m := map[string]string{}
	if strings.TrimSpace(s) == "" {
		return m, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("label map entry %q: want raw=Label", kv)
		}
		if _, ok := canonicalLabel(v); !ok {
			return nil, fmt.Errorf("label map entry %q: target must be Phishing, Legitimate or Abstain", kv)
		}
		m[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return m, nil
}

func (im *importer) fixedLabel() (string, error) {
	l, ok := canonicalLabel(im.opts.Label)
	if !ok {
		return "", fmt.Errorf("%s input carries no labels: pass --label Phishing|Legitimate", im.opts.Format)
	}
	return l, nil
}

func (im *importer) csv() error {
	f, err := os.Open(im.src)
	if err != nil {
		return fmt.Errorf("open %s: %w", im.src, err)
	}
	defer f.Close()
	textCol, labelCol := orDefault(im.opts.TextCol, "text"), orDefault(im.opts.LabelCol, "label")
	r := csv.NewReader(bufio.NewReaderSize(f, 1<<20))
	r.FieldsPerRecord = -1
	r.LazyQuotes = true
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		return fmt.Errorf("%s: line 1: cannot read the CSV header: %w", im.src, err)
	}
	ti, li := -1, -1
	for i, h := range header {
		h = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		switch h {
		case textCol:
			ti = i
		case labelCol:
			li = i
		}
	}
	if ti < 0 || li < 0 {
		return fmt.Errorf("%s: line 1: header %q lacks column %q or %q (set --text-col/--label-col)", im.src, strings.Join(header, ","), textCol, labelCol)
	}
	for {
		if err := im.ctx.Err(); err != nil {
			return err
		}
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		line, _ := r.FieldPos(0)
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				if e := im.bad(im.src, pe.StartLine, "malformed CSV: %v", pe.Err); e != nil {
					return e
				}
				continue
			}
			return fmt.Errorf("%s: line %d: %w", im.src, line, err)
		}
		if len(rec) <= ti || len(rec) <= li {
			if e := im.bad(im.src, line, "has %d fields, needs columns %d and %d", len(rec), ti+1, li+1); e != nil {
				return e
			}
			continue
		}
		if e := im.textRow(im.src, line, rec[ti], rec[li]); e != nil {
			return e
		}
	}
}

func (im *importer) textRow(where string, line int, text, rawLabel string) error {
	label, rule, ok := im.label(rawLabel)
	switch {
	case !ok:
		return im.bad(where, line, "label %q is not recognised (map it with --label-map %q)", clip.Bytes(rawLabel, 40, clip.Ellipsis), clip.Bytes(rawLabel, 20, clip.Ellipsis)+"=Phishing")
	case strings.TrimSpace(text) == "":
		return im.bad(where, line, "email text is empty")
	case len(text) > im.opts.MaxMessageBytes:
		return im.bad(where, line, "email text is %d bytes (limit %d)", len(text), im.opts.MaxMessageBytes)
	}
	im.mapped[MappedLabel{Raw: strings.ToLower(strings.TrimSpace(rawLabel)), Label: label, Rule: rule}]++
	return im.emit(text, label)
}

func (im *importer) jsonl() error {
	f, err := os.Open(im.src)
	if err != nil {
		return fmt.Errorf("open %s: %w", im.src, err)
	}
	defer f.Close()
	textCol, labelCol := orDefault(im.opts.TextCol, "text"), orDefault(im.opts.LabelCol, "label")
	br := bufio.NewReaderSize(f, 1<<20)
	for line := 1; ; line++ {
		if err := im.ctx.Err(); err != nil {
			return err
		}
		b, tooLong, err := readLine(br, im.opts.MaxMessageBytes+4096)
		if err == io.EOF && len(b) == 0 && !tooLong {
			return nil
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("%s: line %d: %w", im.src, line, err)
		}
		if tooLong {
			if e := im.bad(im.src, line, "line longer than %d bytes", im.opts.MaxMessageBytes+4096); e != nil {
				return e
			}
			continue
		}
		if len(bytes.TrimSpace(b)) == 0 {
			if err == io.EOF {
				return nil
			}
			continue
		}
		var obj map[string]any
		if uerr := json.Unmarshal(b, &obj); uerr != nil {
			if e := im.bad(im.src, line, "not a JSON object: %v", uerr); e != nil {
				return e
			}
		} else {
			text, _ := obj[textCol].(string)
			var rawLabel string
			switch v := obj[labelCol].(type) {
			case string:
				rawLabel = v
			case float64:
				rawLabel = fmt.Sprint(v)
			case bool:
				rawLabel = fmt.Sprint(v)
			}
			if e := im.textRow(im.src, line, text, rawLabel); e != nil {
				return e
			}
		}
		if err == io.EOF {
			return nil
		}
	}
}

// readLine returns one line without its newline; a line longer than max
// is consumed and reported tooLong without being kept.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > max {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimRight(buf, "\r\n"), tooLong, err
	}
}

// message checks and emits one raw message.
func (im *importer) message(where string, line int, raw []byte, label string) error {
	if len(raw) > im.opts.MaxMessageBytes {
		return im.bad(where, line, "message is larger than %d bytes", im.opts.MaxMessageBytes)
	}
	m := mail.ParseLimits(string(raw), mail.Limits{MaxBytes: 64 << 10, MaxParts: 1, MaxDepth: 0, MaxTextBytes: 1, MaxPartBytes: 1, MaxLinks: 0})
	if !m.HeaderOK {
		return im.bad(where, line, "not an RFC 5322 message (no header block)")
	}
	im.mapped[MappedLabel{Raw: "(" + im.opts.Format + " input has no labels)", Label: label, Rule: RuleFixed}]++
	return im.emit(string(raw), label)
}

func (im *importer) readFile(path string) ([]byte, bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(im.opts.MaxMessageBytes)+1))
	return b, len(b) > im.opts.MaxMessageBytes, err
}

func (im *importer) files(root string, keep func(path string, d fs.DirEntry) bool) ([]string, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", root, err)
	}
	if !st.IsDir() {
		return []string{root}, nil
	}
	var out []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "tmp") {
				return filepath.SkipDir
			}
			return nil
		}
		if d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".") && keep(p, d) {
			out = append(out, p)
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}

func (im *importer) eachFile(root string, keep func(string, fs.DirEntry) bool) error {
	label, err := im.fixedLabel()
	if err != nil {
		return err
	}
	paths, err := im.files(root, keep)
	if err != nil {
		return err
	}
	if len(paths) == 0 {
		return fmt.Errorf("%s: no message files found", root)
	}
	for _, p := range paths {
		if err := im.ctx.Err(); err != nil {
			return err
		}
		b, tooBig, err := im.readFile(p)
		switch {
		case err != nil:
			err = im.bad(p, 0, "unreadable: %v", err)
		case tooBig:
			err = im.bad(p, 0, "message is larger than %d bytes", im.opts.MaxMessageBytes)
		default:
			err = im.message(p, 0, b, label)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func (im *importer) eml() error {
	return im.eachFile(im.src, func(p string, _ fs.DirEntry) bool {
		return strings.EqualFold(filepath.Ext(p), ".eml")
	})
}

func (im *importer) maildir() error {
	return im.eachFile(im.src, func(string, fs.DirEntry) bool { return true })
}

// mbox splits an mbox (mboxrd) file at "From " lines that start the file or
// follow a blank line, and unescapes ">From " quoting.
func (im *importer) mbox() error {
	label, err := im.fixedLabel()
	if err != nil {
		return err
	}
	f, err := os.Open(im.src)
	if err != nil {
		return fmt.Errorf("open %s: %w", im.src, err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<20)
	var msg []byte
	start, oversize, prevBlank, seen := 0, false, true, false
	flush := func() error {
		if !seen {
			return nil
		}
		if oversize {
			return im.bad(im.src, start, "message is larger than %d bytes", im.opts.MaxMessageBytes)
		}
		return im.message(im.src, start, bytes.TrimRight(msg, "\r\n"), label)
	}
	for line := 1; ; line++ {
		if err := im.ctx.Err(); err != nil {
			return err
		}
		b, long, rerr := readLine(br, 1<<20)
		if rerr != nil && rerr != io.EOF {
			return fmt.Errorf("%s: line %d: %w", im.src, line, rerr)
		}
		if rerr == io.EOF && len(b) == 0 && !long {
			break
		}
		if prevBlank && bytes.HasPrefix(b, []byte("From ")) {
			if err := flush(); err != nil {
				return err
			}
			msg, start, oversize, seen = msg[:0], line, false, true
			prevBlank = false
			continue
		}
		if !seen {
			if len(bytes.TrimSpace(b)) > 0 {
				return fmt.Errorf("%s: line %d: not an mbox file (first line must start with \"From \")", im.src, line)
			}
			continue
		}
		prevBlank = len(bytes.TrimSpace(b)) == 0
		if t := bytes.TrimLeft(b, ">"); len(t) < len(b) && bytes.HasPrefix(t, []byte("From ")) {
			b = b[1:]
		}
		if !oversize {
			if long || len(msg)+len(b)+2 > im.opts.MaxMessageBytes {
				oversize, msg = true, msg[:0]
			} else {
				msg = append(msg, b...)
				msg = append(msg, '\r', '\n')
			}
		}
		if rerr == io.EOF {
			break
		}
	}
	if !seen {
		return fmt.Errorf("%s: no messages found", im.src)
	}
	return flush()
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
