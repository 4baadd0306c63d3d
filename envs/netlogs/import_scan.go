package netlogs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/dataset/tabular"
)

// record is one sampled flow with its provenance.
type sampledFlow struct {
	Flow     Flow
	Label    SourceLabel
	Scenario string
	File     string
	Line     int
	Key      string // dedup key hash (16 hex)
}

// BadRow locates a skipped row.
type BadRow struct {
	File   string
	Line   int
	Reason string
}

func (b BadRow) String() string { return fmt.Sprintf("%s:%d: %s", b.File, b.Line, b.Reason) }

// TooManyBadRowsError stops an import past --max-bad-rows.
type TooManyBadRowsError struct {
	Max   int
	First []BadRow
}

func (e *TooManyBadRowsError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "more than %d malformed rows (raise --max-bad-rows if this is expected); first ones:", e.Max)
	for _, r := range e.First {
		b.WriteString("\n  ")
		b.WriteString(r.String())
	}
	return b.String()
}

// maxBadKept bounds the malformed rows remembered for reports.
const maxBadKept = 20

// collector streams sources of one format into per-label bottom-K samplers.
// Memory is O(K · labels): nothing proportional to the input is kept.
type collector struct {
	format string
	seed   uint64
	maxBad int

	samplers map[string]*dataset.DistinctSampler[sampledFlow] // by answer
	// strata counts rows per answer and scenario (exact, duplicates
	// included), used to allocate the sample across scenarios.
	strata  map[string]map[string]int64
	bad     int64
	badRows []BadRow
	blank   int64
	sources []dataset.Source
	notes   []string
	keyDesc string

	labelCache map[string]labelOrErr
	keyBuf     []byte
	fields     [][]byte
}

type labelOrErr struct {
	l   SourceLabel
	err error
}

func newCollector(format string, k int, seed uint64, maxBad int) *collector {
	return &collector{
		format: format, seed: seed, maxBad: maxBad,
		samplers:   map[string]*dataset.DistinctSampler[sampledFlow]{LabelMalicious: dataset.NewDistinctSampler[sampledFlow](k), LabelBenign: dataset.NewDistinctSampler[sampledFlow](k)},
		strata:     map[string]map[string]int64{LabelMalicious: {}, LabelBenign: {}},
		labelCache: map[string]labelOrErr{},
	}
}

func (c *collector) badRow(file string, line int, reason string) error {
	c.bad++
	if len(c.badRows) < maxBadKept {
		c.badRows = append(c.badRows, BadRow{file, line, reason})
	}
	if c.bad > int64(c.maxBad) {
		return &TooManyBadRowsError{Max: c.maxBad, First: c.badRows}
	}
	return nil
}

var captureDir = regexp.MustCompile(`(?i)^CTU-[A-Za-z]+-(Malware-)?Capture-\d+(-\d+)?$`)

// ImportScenario names the capture a file belongs to: for IoT-23 the
// CTU-…-Capture-N-M directory anywhere in the path, otherwise the file name
// without its extensions (CIC-IDS-2017's day files, UNSW-NB15_1, …).
func ImportScenario(format, path string) string {
	if format == FormatIoT23 {
		for p := filepath.Dir(path); p != "." && p != string(filepath.Separator) && p != ""; p = filepath.Dir(p) {
			if b := filepath.Base(p); captureDir.MatchString(b) {
				return b
			}
			if filepath.Dir(p) == p {
				break
			}
		}
		if d := filepath.Base(filepath.Dir(path)); d != "." && d != "/" && d != "bro" {
			return d
		}
	}
	base := filepath.Base(path)
	for _, ext := range []string{".gz", ".labeled", ".log", ".csv", ".tsv", ".txt"} {
		base = strings.TrimSuffix(base, ext)
	}
	for _, ext := range []string{".labeled", ".log", ".csv"} {
		base = strings.TrimSuffix(base, ext)
	}
	if base == "conn" || base == "" {
		return "unknown"
	}
	return base
}

// readSource streams one (possibly gzip) source. name is used in messages,
// scenario labels its rows. It returns rows read and the sha256 of the
// bytes as stored (compressed or not).
func (c *collector) readSource(ctx context.Context, r io.Reader, name, scenario string) error {
	h := sha256.New()
	counted := &countingReader{r: io.TeeReader(r, h)}
	dr, closeFn, err := tabular.Decompress(counted)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	defer closeFn()
	lines := tabular.NewLines(dr, name)
	src := dataset.Source{Path: name}
	badBefore := c.bad
	rows, err := c.scan(ctx, lines, name, scenario)
	if err != nil {
		return err
	}
	// Drain what the decoder did not consume so the hash covers the file.
	if _, err := io.Copy(io.Discard, counted); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	src.SHA256 = fmt.Sprintf("%x", h.Sum(nil))
	src.Rows = rows
	src.BadRows = c.bad - badBefore
	c.sources = append(c.sources, src)
	return nil
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (c *collector) scan(ctx context.Context, lines *tabular.Lines, name, scenario string) (int64, error) {
	var (
		hdr      *tabular.Header
		sch      *schema
		delim    byte = ','
		rows     int64
		zeek     = c.format == FormatIoT23
		closed   bool
		headless = false
	)
	for n := 0; ; n++ {
		if n&0xffff == 0 {
			if err := ctx.Err(); err != nil {
				return rows, err
			}
		}
		line, err := lines.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			if errors.Is(err, tabular.ErrLineTooLong) {
				if err := c.badRow(name, lines.Line(), "line too long"); err != nil {
					return rows, err
				}
				continue
			}
			return rows, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if zeek && line[0] == '#' {
			switch {
			case bytes.HasPrefix(line, []byte("#fields")):
				hf := splitZeekHeader(line)
				hdr = tabular.NewHeader(hf)
				if sch, err = bind(c.format, name, hdr); err != nil {
					return rows, err
				}
				delim = '\t'
				c.keyDesc = sch.keyDescription()
			case bytes.HasPrefix(line, []byte("#close")):
				closed = true
			}
			continue
		}
		if hdr == nil {
			if zeek {
				if bytes.IndexByte(line, '\t') < 0 {
					return rows, fmt.Errorf("%s: line %d: not a Zeek log: no tab-separated #fields header before the first row (is this a CSV export? Zeek logs are tab-separated)", name, lines.Line())
				}
				return rows, fmt.Errorf("%s: line %d: not a Zeek log: data before the #fields header (was the header stripped? --format iot23 needs the original conn.log.labeled)", name, lines.Line())
			}
			delim = ','
			if d := tabular.SniffDelimiter(line); d != ',' && bytes.Count(line, []byte{','}) == 0 {
				return rows, fmt.Errorf("%s: line %d: wrong delimiter: the header is %s-separated but --format %s expects comma-separated values", name, lines.Line(), tabular.DelimName(d), c.format)
			}
			fs, ok := tabular.Split(nil, line, delim)
			if !ok {
				return rows, fmt.Errorf("%s: line %d: unterminated quote in the header", name, lines.Line())
			}
			if c.format == FormatUNSWNB15 && len(fs) == len(unswRawColumns) && looksLikeData(fs) {
				// The four raw UNSW-NB15 CSVs have no header: use the
				// published feature list and treat this line as data.
				hdr = tabular.NewHeader(unswRawColumns)
				headless = true
			} else {
				hdr = tabular.HeaderFromBytes(fs)
			}
			if sch, err = bind(c.format, name, hdr); err != nil {
				return rows, err
			}
			c.keyDesc = sch.keyDescription()
			if len(hdr.Duplicates) > 0 {
				c.note(fmt.Sprintf("%s: duplicate column(s) %q: the first occurrence is used", name, hdr.Duplicates))
			}
			if !headless {
				continue
			}
		}
		rows++
		if err := c.row(line, delim, sch, hdr, name, lines.Line(), scenario); err != nil {
			return rows, err
		}
	}
	if hdr == nil {
		return rows, fmt.Errorf("%s: no header and no rows: the file is empty or not a %s file", name, c.format)
	}
	if lines.EndedWithoutNewline() {
		c.note(fmt.Sprintf("%s: the last line has no line terminator: the file may be truncated", name))
	}
	if zeek && !closed {
		c.note(fmt.Sprintf("%s: no #close trailer: the capture log may be truncated or still being written", name))
	}
	return rows, nil
}

// looksLikeData tells a headerless UNSW-NB15 row (an address, a port)
// from a header line.
func looksLikeData(fs [][]byte) bool {
	return bytes.Count(fs[0], []byte{'.'}) == 3 || bytes.Count(fs[0], []byte{':'}) >= 2
}

// splitZeekHeader splits "#fields\tts\tuid…" into names. The published
// IoT-23 files separate the last three names with runs of spaces instead of
// tabs, so every tab-separated piece is further split on whitespace (Zeek
// field names never contain spaces).
func splitZeekHeader(line []byte) []string {
	var out []string
	for i, part := range strings.Split(string(line), "\t") {
		if i == 0 {
			continue // "#fields"
		}
		out = append(out, strings.Fields(part)...)
	}
	return out
}

func (c *collector) note(s string) {
	if len(c.notes) < 50 {
		c.notes = append(c.notes, s)
	}
}

func (c *collector) row(line []byte, delim byte, sch *schema, hdr *tabular.Header, name string, ln int, scenario string) error {
	fs, ok := tabular.Split(c.fields, line, delim)
	c.fields = fs[:0]
	if !ok {
		return c.badRow(name, ln, "unterminated quote")
	}
	if delim == '\t' && len(fs) < sch.ncols {
		// IoT-23 rows: "…\t-   Malicious   PartOfAHorizontalPortScan".
		last := fs[len(fs)-1]
		fs = fs[:len(fs)-1]
		fs = append(fs, bytes.Fields(last)...)
		c.fields = fs[:0]
	}
	if allEmpty(fs) {
		c.blank++ // CIC-IDS-2017 pads some files with rows of bare commas
		return nil
	}
	if len(fs) != sch.ncols {
		return c.badRow(name, ln, fmt.Sprintf("%d fields, the header has %d", len(fs), sch.ncols))
	}
	for _, col := range sch.numeric {
		if !isNumber(cell(fs, col)) {
			return c.badRow(name, ln, fmt.Sprintf("column %q: %q is not a number", hdr.Names[col], cellExcerpt(string(cell(fs, col)))))
		}
	}
	lab, err := c.label(fs, sch)
	if err != nil {
		return c.badRow(name, ln, err.Error())
	}
	c.strata[lab.Answer][scenario]++

	c.keyBuf = sch.key(c.keyBuf[:0], fs)
	sum := sha256.Sum256(c.keyBuf)
	key := binary.BigEndian.Uint64(sum[:8])
	prio := mix(binary.BigEndian.Uint64(sum[8:16]) ^ c.seed)
	var buildErr error
	s := c.samplers[lab.Answer]
	keyStr := strconv.FormatUint(key, 16)
	s.Offer(prio, keyStr, func() (sampledFlow, bool) {
		f, err := sch.flow(fs, hdr)
		if err != nil {
			buildErr = err
			return sampledFlow{}, false
		}
		return sampledFlow{Flow: f, Label: lab, Scenario: scenario, File: name, Line: ln, Key: fmt.Sprintf("%016x", key)}, true
	})
	if buildErr != nil {
		return c.badRow(name, ln, buildErr.Error())
	}
	return nil
}

func (c *collector) label(fs [][]byte, sch *schema) (SourceLabel, error) {
	lb, cb := cell(fs, sch.label), cell(fs, sch.category)
	// Labels repeat: cache by raw bytes (no allocation on a hit).
	var kb [128]byte
	k := append(append(append(kb[:0], lb...), 0), cb...)
	if v, ok := c.labelCache[string(k)]; ok {
		return v.l, v.err
	}
	l, err := sch.norm(string(lb), string(cb))
	if len(c.labelCache) < 4096 {
		c.labelCache[string(k)] = labelOrErr{l, err}
	}
	return l, err
}

func allEmpty(fs [][]byte) bool {
	for _, f := range fs {
		if len(trimSpace(f)) != 0 {
			return false
		}
	}
	return true
}

// mix is splitmix64's finaliser: it decorrelates priorities across seeds.
func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
