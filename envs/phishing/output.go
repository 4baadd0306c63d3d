package phishing

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/svbench/svbench/extract"
)

// Labels in their canonical spelling.
const (
	LabelPhishing   = "Phishing"
	LabelLegitimate = "Legitimate"
	LabelAbstain    = "Abstain"
)

// MaxEvidence is how many evidence items the default rubric examines;
// longer lists are penalised and their tail is never read.
const MaxEvidence = 32

// maxItemLen bounds one evidence value examined (bytes).
const maxItemLen = 2048

// Item is one evidence entry. Typed is false for bare strings (the
// reference's format), which carry no indicator type.
type Item struct {
	Type  string `json:"type"`
	Value string `json:"value"`
	Typed bool   `json:"-"`
}

// Output is everything both rubrics read from one completion, parsed once.
type Output struct {
	Object bool
	// Label is matched case-insensitively after trimming (the reference's
	// rule), in canonical spelling; "" when missing or unknown.
	Label string
	// ExactLabel holds when the label is spelled canonically.
	ExactLabel bool

	// RefConfidence is Python's float(confidence) when it converts and lies
	// in [0, 1], else 0; RefConfOK says whether it did.
	RefConfidence float64
	RefConfOK     bool
	// Confidence is the confidence when ConfNumber: a JSON number in [0, 1].
	Confidence float64
	ConfNumber bool

	// EvidenceGiven: the key is present and neither null nor [].
	EvidenceGiven bool
	// EvidenceCount is the full length of the evidence list.
	EvidenceCount int
	// Items are the first MaxEvidence entries.
	Items []Item
	// RefStrings are all evidence entries as strings (reference semantics):
	// strings as written, objects by their "value". Bounded by the
	// extractor's input cap.
	RefStrings []string
	// EvidenceWellFormed: absent/null/[] or a list of ≤ MaxEvidence
	// {"type": known, "value": string} objects.
	EvidenceWellFormed bool
}

// ParseOutput reads a completion. It never fails: malformed output is an
// Output without a label.
//
// The object is read as Python's json.loads reads it (extract.PyMap): the
// literals NaN, Infinity and -Infinity do not discard the answer. A
// confidence given as one is what Python's float() makes of it, a float
// outside [0, 1]: RefConfOK and ConfNumber are both false and both
// confidences stay 0. Anywhere else it is a value of the wrong type.
func ParseOutput(text string) Output {
	var o Output
	obj, ok := extract.PyMap(text)
	if !ok {
		return o
	}
	o.Object = true
	if s, ok := obj["label"].(string); ok {
		switch strings.ToLower(strings.TrimSpace(s)) {
		case "phishing":
			o.Label = LabelPhishing
		case "legitimate":
			o.Label = LabelLegitimate
		case "abstain":
			o.Label = LabelAbstain
		}
		o.ExactLabel = s == o.Label && o.Label != ""
	}
	if c, ok := obj["confidence"]; ok {
		// NaN fails both comparisons, as it does in Python; finite says so
		// explicitly.
		if f, ok := extract.PyFloat(c); ok && finite(f) && f >= 0 && f <= 1 {
			o.RefConfidence, o.RefConfOK = f, true
		}
		if n, ok := c.(json.Number); ok {
			if f, err := n.Float64(); err == nil && finite(f) && f >= 0 && f <= 1 {
				o.Confidence, o.ConfNumber = f, true
			}
		}
	}
	o.EvidenceWellFormed = true
	ev, present := obj["evidence"]
	if !present || ev == nil {
		return o
	}
	list, isList := ev.([]any)
	if !isList {
		// Evidence that is present but not a list is one malformed item:
		// a string keeps its text, anything else (a number, NaN, an object)
		// has none, so the reference's format check finds no non-blank
		// string and grounding finds nothing.
		o.EvidenceWellFormed = false
		o.EvidenceGiven, o.EvidenceCount = true, 1
		s, isString := ev.(string)
		if isString {
			o.RefStrings = []string{s}
		}
		o.Items = []Item{{Value: s}}
		return o
	}
	if len(list) == 0 {
		return o
	}
	o.EvidenceGiven = true
	o.EvidenceCount = len(list)
	if len(list) > MaxEvidence {
		o.EvidenceWellFormed = false
	}
	o.RefStrings = make([]string, 0, len(list))
	for i, e := range list {
		var it Item
		wellFormed := false
		switch x := e.(type) {
		case string:
			it = Item{Value: x}
		case map[string]any:
			t, tok := x["type"].(string)
			v, vok := x["value"].(string)
			it = Item{Type: strings.TrimSpace(t), Value: v, Typed: tok}
			wellFormed = tok && vok && isKnownType(it.Type)
		}
		if !wellFormed {
			o.EvidenceWellFormed = false
		}
		if it.Value != "" || it.Typed {
			o.RefStrings = append(o.RefStrings, it.Value)
		}
		if i < MaxEvidence {
			o.Items = append(o.Items, it)
		}
	}
	return o
}

// finite reports whether f is a number: not NaN, not ±Inf.
func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
