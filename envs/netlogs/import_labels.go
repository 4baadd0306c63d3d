package netlogs

import (
	"fmt"
	"github.com/svbench/svbench/base/clip"
	"strings"
	"unicode/utf8"
)

// SourceLabel is a source label normalised to the E1 answer plus an attack family
// ("benign" for benign rows).
type SourceLabel struct {
	Answer string
	Family string
}

// FamilySlug turns a source's attack name into a family id: lower-case ASCII
// letters and digits, every other run (spaces, dashes, underscores, the
// mis-encoded en dash of CIC-IDS-2017's "Web Attack – Brute Force", whether
// it arrives as U+2013, U+FFFD or a stray Latin-1/CP1252 byte) folded into
// one "-".
func FamilySlug(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	pendingDash := false
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
			fallthrough
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			if pendingDash && b.Len() > 0 {
				b.WriteByte('-')
			}
			pendingDash = false
			b.WriteByte(c)
			i++
		default:
			pendingDash = true
			if c < utf8.RuneSelf {
				i++
			} else {
				_, n := utf8.DecodeRuneInString(s[i:])
				i += n
			}
		}
	}
	return b.String()
}

// familyAliases merges spellings that name the same attack across files of
// one corpus.
var familyAliases = map[string]string{
	"backdoors": "backdoor", // UNSW-NB15 raw files vs training set
	"c-c":       "c2",       // IoT-23 "C&C"
}

func family(raw string) string {
	s := FamilySlug(raw)
	if a, ok := familyAliases[s]; ok {
		return a
	}
	// IoT-23 compounds ("C&C-HeartBeat") keep their parts but use the alias.
	if strings.HasPrefix(s, "c-c-") {
		s = "c2-" + s[len("c-c-"):]
	}
	return s
}

// labelError is a row whose label cannot be read.
type labelError struct{ msg string }

func (e *labelError) Error() string { return e.msg }

func badLabel(format string, args ...any) error {
	return &labelError{fmt.Sprintf(format, args...)}
}

// normIoT23 maps IoT-23's label and detailed-label columns.
func normIoT23(label, detailed string) (SourceLabel, error) {
	switch strings.ToLower(strings.TrimSpace(label)) {
	case "benign":
		return SourceLabel{LabelBenign, "benign"}, nil
	case "malicious":
		f := family(detailed)
		if f == "" {
			f = "unknown"
		}
		return SourceLabel{LabelMalicious, f}, nil
	}
	return SourceLabel{}, badLabel("label %q is neither Malicious nor Benign", cellExcerpt(label))
}

// normNamed maps sources whose single label column holds the attack name
// and a benign marker (CIC-IDS-2017 "BENIGN", CIC-IoT-2023 "BenignTraffic").
func normNamed(label string) (SourceLabel, error) {
	f := family(label)
	switch f {
	case "":
		return SourceLabel{}, badLabel("label is empty")
	case "benign", "benigntraffic", "normal":
		return SourceLabel{LabelBenign, "benign"}, nil
	}
	return SourceLabel{LabelMalicious, f}, nil
}

// normBinary maps sources with a 0/1 label and a separate attack category
// (UNSW-NB15, NetFlow v2). The binary label is authoritative; the category
// only names the family.
func normBinary(label, category string) (SourceLabel, error) {
	switch strings.TrimSpace(label) {
	case "0", "0.0":
		return SourceLabel{LabelBenign, "benign"}, nil
	case "1", "1.0":
		f := family(category)
		if f == "" || f == "benign" || f == "normal" {
			f = "unknown"
		}
		return SourceLabel{LabelMalicious, f}, nil
	}
	return SourceLabel{}, badLabel("label %q is not 0 or 1", cellExcerpt(label))
}

// cellExcerpt quotes a source cell in an error: valid UTF-8, short.
func cellExcerpt(s string) string {
	return clip.Bytes(strings.ToValidUTF8(s, "\uFFFD"), 40, clip.Ellipsis)
}
