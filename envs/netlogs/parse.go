package netlogs

import (
	"bytes"
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
// output is a parse with no label.
func Parse(text string) Output {
	var out Output
	obj, ok := findObject(text)
	if !ok {
		return out
	}
	out.Object = true

	if raw, ok := obj["label"]; ok && len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			switch s {
			case LabelMalicious, LabelBenign, LabelAbstain:
				out.RefLabel = s
			}
			out.Label = canonicalLabel(s)
		}
	}

	if raw, ok := obj["confidence"]; ok && len(raw) > 0 {
		conf := decodeScalar(raw)
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
	if raw, ok := obj["rationale"]; ok && len(raw) > 2 && raw[0] == '"' {
		var r string
		if json.Unmarshal(raw, &r) == nil && strings.TrimSpace(r) != "" {
			out.HasRationale = true
		}
	}
	return out
}

// decodeScalar turns a raw JSON value into json.Number, bool, string, or
// nil for null, arrays and objects (which Python's float() rejects alike).
func decodeScalar(raw json.RawMessage) any {
	switch c := raw[0]; {
	case c == '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	case c == 't':
		return true
	case c == 'f':
		return false
	case c == '-' || isDigit(c):
		return json.Number(raw)
	}
	return nil
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

// pyFloat mirrors Python's float(x) on a decoded JSON value: numbers and
// bools convert, strings convert when Python's float literal grammar
// accepts them, everything else (None, lists, objects) raises and the
// reference maps that to 0.
func pyFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		return numberValue(x)
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

// findObject follows the reference extraction order (whole text, first
// fenced block, first balanced object). Python's json module also accepts
// the non-standard constants NaN, Infinity and -Infinity, so when the text
// contains them the candidates are checked with those rewritten to
// placeholder strings; the placeholders are neither labels nor numbers,
// which is exactly how the reference treats NaN/inf after conversion.
func findObject(text string) (map[string]json.RawMessage, bool) {
	if len(text) > MaxCompletion {
		text = text[:MaxCompletion]
	}
	if !strings.Contains(text, "NaN") && !strings.Contains(text, "Infinity") {
		raw, ok := extract.Object(text)
		if !ok {
			return nil, false
		}
		return decodeObject(raw)
	}
	return extract.Find(text, pyObject)
}

func pyObject(s string) (map[string]json.RawMessage, bool) {
	s = strings.TrimSpace(s)
	if !strings.HasPrefix(s, "{") {
		return nil, false
	}
	return decodeObject([]byte(pyConstants(s)))
}

// decodeObject reads the top-level members of a JSON object, leaving their
// values raw so a long rationale or nested junk costs no decoding.
func decodeObject(raw []byte) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, false
	}
	return m, true
}

// pyConstants rewrites NaN, Infinity and -Infinity where a JSON value may
// start (never inside strings, never as keys) to placeholder strings.
func pyConstants(s string) string {
	var out *bytes.Buffer
	var stack []byte
	expectValue := true
	last := 0
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(s) && s[j] != '"' {
				if s[j] == '\\' {
					j++
				}
				j++
			}
			i = j + 1
			expectValue = false
			continue
		case c == '{':
			stack = append(stack, c)
			expectValue = false
		case c == '[':
			stack = append(stack, c)
			expectValue = true
		case c == '}' || c == ']':
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			expectValue = false
		case c == ':':
			expectValue = true
		case c == ',':
			expectValue = len(stack) > 0 && stack[len(stack)-1] == '['
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
		default:
			if expectValue {
				if tok := pyConstantAt(s[i:]); tok != "" {
					if out == nil {
						out = &bytes.Buffer{}
					}
					out.WriteString(s[last:i])
					out.WriteString(`"\u0000` + tok + `"`)
					i += len(tok)
					last = i
					expectValue = false
					continue
				}
			}
			expectValue = false
		}
		i++
	}
	if out == nil {
		return s
	}
	out.WriteString(s[last:])
	return out.String()
}

func pyConstantAt(s string) string {
	for _, tok := range [...]string{"NaN", "Infinity", "-Infinity"} {
		if strings.HasPrefix(s, tok) {
			return tok
		}
	}
	return ""
}
