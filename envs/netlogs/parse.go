package netlogs

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode"

	"github.com/svbench/svbench/extract"
)

// The labels a model may answer with, in their canonical spelling.
const (
	LabelMalicious = "Malicious"
	LabelBenign    = "Benign"
	LabelAbstain   = "Abstain"
)

// MaxCompletion bounds how much of a completion the parser reads; the
// extractor applies the same cap.
const MaxCompletion = extract.MaxInput

// Output is everything both rubrics need from one completion, read once.
// The reference fields reproduce the Python parser bit for bit; the default
// fields apply svbench's more forgiving label match and stricter confidence
// typing.
type Output struct {
	// Object reports whether a JSON object was found at all.
	Object bool

	// RefLabel is the label if it is a string exactly equal to an allowed
	// label, else "" (reference semantics).
	RefLabel string
	// RefConfidence is Python's float(confidence) when it converts and lies
	// in [0, 1], else 0.
	RefConfidence float64
	// RefFormat is the reference format check: exact label and a JSON
	// number (bools count, as Python's isinstance(True, int) is true) in [0, 1].
	RefFormat bool

	// Label is the label matched case-insensitively after trimming, in its
	// canonical spelling, or "".
	Label string
	// Confidence is the confidence when ConfidenceOK.
	Confidence float64
	// ConfidenceOK holds when confidence is a JSON number or a numeric
	// string (not a bool, not NaN) in [0, 1].
	ConfidenceOK bool
	// StrictFormat holds when the label is spelled canonically and the
	// confidence is a JSON number in [0, 1]: the schema the system prompt asks for.
	StrictFormat bool
	// HasRationale reports a non-empty string rationale.
	HasRationale bool
}

// Parse reads a completion. It never panics and never fails: malformed
// output is a parse with no label. The object is read under Python's json
// grammar (extract.PyMap), as the reference does: NaN, Infinity and
// -Infinity are accepted, and a confidence given as one is a float outside
// [0, 1], so it counts as 0 and fails both format checks.
func Parse(text string) Output {
	var out Output
	obj, ok := extract.PyMap(text)
	if !ok {
		return out
	}
	out.Object = true

	if s, ok := obj["label"].(string); ok {
		switch s {
		case LabelMalicious, LabelBenign, LabelAbstain:
			out.RefLabel = s
		}
		out.Label = canonicalLabel(s)
	}

	if conf, ok := obj["confidence"]; ok {
		if f, ok := pyFloat(conf); ok && f >= 0 && f <= 1 {
			out.RefConfidence = f
		}
		switch v := conf.(type) {
		case json.Number:
			if f, ok := numberValue(v); ok && f >= 0 && f <= 1 {
				out.Confidence, out.ConfidenceOK = f, true
				out.RefFormat = out.RefLabel != ""
				out.StrictFormat = out.RefLabel != ""
			}
		case bool:
			out.RefFormat = out.RefLabel != ""
		case string:
			if f, ok := decimalString(v); ok && f >= 0 && f <= 1 {
				out.Confidence, out.ConfidenceOK = f, true
			}
		}
	}
	if r, ok := obj["rationale"].(string); ok && strings.TrimSpace(r) != "" {
		out.HasRationale = true
	}
	return out
}

func canonicalLabel(s string) string {
	s = strings.TrimSpace(s)
	for _, l := range [...]string{LabelMalicious, LabelBenign, LabelAbstain} {
		if strings.EqualFold(s, l) {
			return l
		}
	}
	return ""
}

// numberValue converts a JSON number the way Python's float() does; values
// beyond float64 become ±Inf (Python: inf, or OverflowError for huge
// integers, which the reference does not catch) and so fall out of range.
func numberValue(n json.Number) (float64, bool) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil {
		var ne *strconv.NumError
		if ok := asNumError(err, &ne); ok && ne.Err == strconv.ErrRange {
			return f, true
		}
		return 0, false
	}
	return f, true
}

func asNumError(err error, target **strconv.NumError) bool {
	ne, ok := err.(*strconv.NumError)
	if ok {
		*target = ne
	}
	return ok
}

// pyFloat mirrors Python's float(x) on a decoded JSON value: numbers, the
// NaN/Infinity constants and bools convert, strings convert when Python's
// float literal grammar accepts them, everything else (None, lists,
// objects) raises and the reference maps that to 0.
func pyFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		return numberValue(x)
	case extract.NonFinite:
		return float64(x), true
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	case string:
		return pyFloatString(x)
	}
	return 0, false
}

// pyFloatString implements Python's float(str): surrounding Unicode
// whitespace is ignored, underscores are allowed only between digits,
// "nan"/"inf"/"infinity" in any case with an optional sign are accepted,
// hexadecimal is not.
func pyFloatString(s string) (float64, bool) {
	s = strings.TrimFunc(s, unicode.IsSpace)
	if s == "" || len(s) > 512 {
		return 0, false
	}
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 {
		return 0, false
	}
	switch strings.ToLower(body) {
	case "nan", "inf", "infinity":
		f, err := strconv.ParseFloat(s, 64)
		return f, err == nil
	}
	if strings.ContainsAny(body, "xXpP") {
		return 0, false
	}
	if strings.Contains(body, "_") {
		var b strings.Builder
		for i := 0; i < len(body); i++ {
			if body[i] == '_' {
				if i == 0 || i == len(body)-1 || !isDigit(body[i-1]) || !isDigit(body[i+1]) {
					return 0, false
				}
				continue
			}
			b.WriteByte(body[i])
		}
		s = s[:len(s)-len(body)] + b.String()
		body = b.String()
	}
	// Go also accepts "inf"-like words and hex handled above; what remains
	// is the shared decimal grammar, with one difference: Python needs a
	// digit, Go too, so ParseFloat decides.
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !isDigit(c) && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-' {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		var ne *strconv.NumError
		if asNumError(err, &ne) && ne.Err == strconv.ErrRange {
			return f, true
		}
		return 0, false
	}
	return f, true
}

// decimalString is svbench's lenient reading of a quoted confidence: a plain
// decimal such as "0.8" or " .75 ", nothing exotic (no NaN, no infinities,
// no underscores).
func decimalString(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !isDigit(c) && c != '.' && c != 'e' && c != 'E' && c != '+' && c != '-' {
			return 0, false
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
