package netlogs

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/svbench/svbench/base/clip"
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
	// Labels counts the "label" keys in the whole completion, Hedged
	// says they name more than one label. The reference reads the first
	// object and nothing else; the default rubric does not let a second
	// object ride along (see Parse).
	Labels int
	Hedged bool
}

// labelKey finds every "label": "…" pair in the raw text. Inside a JSON
// string the quotes are escaped, so a rationale quoting a label does not
// match.
var labelKey = regexp.MustCompile(`"label"\s*:\s*"([^"\\]{0,64})"`)

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
		if f, ok := extract.PyFloat(conf); ok && f >= 0 && f <= 1 {
			out.RefConfidence = f
		}
		switch v := conf.(type) {
		case json.Number:
			if f, ok := extract.PyFloat(v); ok && f >= 0 && f <= 1 {
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
	// A completion holding a second answer object is not the one answer
	// the prompt asks for: a policy trained against svbench drifted into
	// appending objects with the other label, which the first-object rule
	// paid in full. Two labels are no label (scored as unparsed, below an
	// honest Abstain); a repeated one keeps its label but not the format
	// credit. The reference fields keep the reference's first-object rule.
	seen := map[string]bool{}
	for _, m := range labelKey.FindAllStringSubmatch(clip.Bytes(text, MaxCompletion, ""), 16) {
		out.Labels++
		seen[strings.ToLower(strings.TrimSpace(m[1]))] = true
	}
	// Nothing may follow the answer: a policy trained against svbench
	// drifted into repeating `", "confidence": 0.95}` after its object
	// until it ran out of tokens, which the first-object rule paid as a
	// well-formed answer. A tail keeps the label, not the format credit.
	// Text before the object (a preamble, a reasoning summary a trainer
	// put in front) is read as before.
	if out.StrictFormat && !endsWithObject(text) {
		out.StrictFormat = false
	}
	if out.Labels > 1 {
		out.StrictFormat = false
		if len(seen) > 1 {
			out.Hedged = true
			out.Label, out.Confidence, out.ConfidenceOK = "", 0, false
		}
	}
	return out
}

// endsWithObject reports whether the completion's first JSON object is
// followed by nothing but whitespace (and the closing fence of a Markdown
// code block). At most 16 opening braces are tried, each decode linear in
// the text, so a hostile completion costs a bounded amount.
func endsWithObject(text string) bool {
	t := clip.Bytes(text, MaxCompletion, "")
	from := 0
	for range 16 {
		i := strings.IndexByte(t[from:], '{')
		if i < 0 {
			return false
		}
		from += i
		dec := json.NewDecoder(strings.NewReader(t[from:]))
		var m map[string]any
		if err := dec.Decode(&m); err == nil {
			rest := strings.TrimSpace(t[from+int(dec.InputOffset()):])
			return rest == "" || rest == "```"
		}
		from++
	}
	return false
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
