package tabular

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Header maps column names to positions. Names are matched after
// normalisation (surrounding space trimmed, inner whitespace folded,
// lower-cased), because published CSVs disagree on " Label" vs "Label".
// When a name repeats (CIC-IDS-2017 has "Fwd Header Length" twice) the first
// occurrence wins and the repeat is listed in Duplicates.
type Header struct {
	Names      []string
	index      map[string]int
	Duplicates []string
}

// NormName is the form column names are compared in.
func NormName(s string) string {
	s = strings.ToValidUTF8(s, "?")
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// NewHeader builds a header from raw field names.
func NewHeader(fields []string) *Header {
	h := &Header{index: make(map[string]int, len(fields))}
	for i, f := range fields {
		if !utf8.ValidString(f) {
			f = strings.ToValidUTF8(f, "?")
		}
		f = strings.TrimSpace(f)
		h.Names = append(h.Names, f)
		k := NormName(f)
		if _, dup := h.index[k]; dup {
			h.Duplicates = append(h.Duplicates, f)
			continue
		}
		h.index[k] = i
	}
	return h
}

// HeaderFromBytes is NewHeader over split fields.
func HeaderFromBytes(fields [][]byte) *Header {
	s := make([]string, len(fields))
	for i, f := range fields {
		s[i] = string(f)
	}
	return NewHeader(s)
}

// Index is the position of the first column with any of the names, or -1.
func (h *Header) Index(names ...string) int {
	for _, n := range names {
		if i, ok := h.index[NormName(n)]; ok {
			return i
		}
	}
	return -1
}

// Has reports whether a column exists.
func (h *Header) Has(name string) bool { return h.Index(name) >= 0 }

// MissingColumnsError says which expected columns a file lacks.
type MissingColumnsError struct {
	File     string
	Format   string
	Missing  []string
	Expected []string
	Found    []string
}

func (e *MissingColumnsError) Error() string {
	found := e.Found
	if len(found) > 12 {
		found = append(append([]string{}, found[:12]...), fmt.Sprintf("… (%d columns)", len(e.Found)))
	}
	return fmt.Sprintf("%s: not a %s file: missing column(s) %s; expected columns %s; found %s",
		e.File, e.Format, quoteList(e.Missing), quoteList(e.Expected), quoteList(found))
}

func quoteList(s []string) string {
	q := make([]string, len(s))
	for i, x := range s {
		q[i] = fmt.Sprintf("%q", x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// Require checks that every column group is present; each group lists
// accepted spellings of one column (the first is the one reported).
func (h *Header) Require(file, format string, groups ...[]string) error {
	var missing, expected []string
	for _, g := range groups {
		expected = append(expected, g[0])
		if h.Index(g...) < 0 {
			missing = append(missing, g[0])
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return &MissingColumnsError{File: file, Format: format, Missing: missing, Expected: expected, Found: h.Names}
}
