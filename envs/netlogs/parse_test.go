package netlogs

import (
	"math"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		name              string
		in                string
		refLabel, label   string
		refConf           float64
		refFormat, strict bool
		conf              float64
		confOK            bool
	}{
		{"plain", `{"label": "Malicious", "confidence": 0.9}`, "Malicious", "Malicious", 0.9, true, true, 0.9, true},
		{"lower-case label", `{"label": "benign", "confidence": 0.7}`, "", "Benign", 0.7, false, false, 0.7, true},
		{"padded label", `{"label": " ABSTAIN ", "confidence": 0.1}`, "", "Abstain", 0.1, false, false, 0.1, true},
		{"string confidence", `{"label": "Benign", "confidence": "0.8"}`, "Benign", "Benign", 0.8, false, false, 0.8, true},
		{"python-only float string", `{"label": "Benign", "confidence": " 0_5e-1 "}`, "Benign", "Benign", 0.5, false, false, 0, false},
		{"word confidence", `{"label": "Benign", "confidence": "high"}`, "Benign", "Benign", 0, false, false, 0, false},
		{"bool confidence", `{"label": "Malicious", "confidence": true}`, "Malicious", "Malicious", 1, true, false, 0, false},
		{"out of range", `{"label": "Malicious", "confidence": 1.2}`, "Malicious", "Malicious", 0, false, false, 0, false},
		{"NaN literal", `{"label": "Malicious", "confidence": NaN}`, "Malicious", "Malicious", 0, false, false, 0, false},
		{"Infinity in fence", "```json\n{\"label\": \"Benign\", \"confidence\": -Infinity}\n```", "Benign", "Benign", 0, false, false, 0, false},
		{"NaN in a string is text", `{"label": "Benign", "confidence": 0.4, "rationale": "NaN Infinity"}`, "Benign", "Benign", 0.4, true, true, 0.4, true},
		{"NaN as key is invalid", `{NaN: 1, "label": "Benign"}`, "", "", 0, false, false, 0, false},
		{"huge number", `{"label": "Benign", "confidence": 1e999}`, "Benign", "Benign", 0, false, false, 0, false},
		{"tiny number", `{"label": "Benign", "confidence": 1e-999}`, "Benign", "Benign", 0, true, true, 0, true},
		{"null confidence", `{"label": "Abstain", "confidence": null}`, "Abstain", "Abstain", 0, false, false, 0, false},
		{"label not a string", `{"label": 1, "confidence": 0.5}`, "", "", 0.5, false, false, 0.5, true},
		{"think prefix with braces", `<think>{maybe}</think>{"label": "Malicious", "confidence": 0.9}`, "", "", 0, false, false, 0, false},
		// Nothing may follow the answer: a tail keeps the label, not the
		// format credit. A preamble and a code fence are read as before.
		{"prose around", `Verdict: {"label": "Malicious", "confidence": 0.6} done`, "Malicious", "Malicious", 0.6, true, false, 0.6, true},
		{"tail repeated after the answer", `{"label": "Benign", "confidence": 0.95}", "confidence": 0.95}", "confidence": 0.95}", "confid`, "Benign", "Benign", 0.95, true, false, 0.95, true},
		{"fenced", "```json\n{\"label\": \"Benign\", \"confidence\": 0.3}\n```\n", "Benign", "Benign", 0.3, true, true, 0.3, true},
		{"fence without a tag", "```{\"label\": \"Benign\", \"confidence\": 0.3}```", "Benign", "Benign", 0.3, true, true, 0.3, true},
		{"preamble", "Answer:\n{\"label\": \"Benign\", \"confidence\": 0.3}", "Benign", "Benign", 0.3, true, true, 0.3, true},
		{"fence then prose", "```json\n{\"label\": \"Benign\", \"confidence\": 0.3}\n```\nHope this helps", "Benign", "Benign", 0.3, true, false, 0.3, true},
		// Two labels are a hedge: the reference reads the last key, the
		// default rubric no label.
		{"duplicate keys: reference takes the last, default none", `{"label": "Benign", "label": "Malicious", "confidence": 0.5}`, "Malicious", "", 0.5, true, false, 0, false},
		{"second object with the other label", `{"label": "Malicious", "confidence": 0.9} {"label": "Benign", "confidence": 0.9}`, "Malicious", "", 0.9, true, false, 0, false},
		{"second object trailing after the answer", "{\"label\": \"Benign\", \"confidence\": 0.7}\"}, \"label\": \"Malicious\", \"confidence\": 0.7}", "Benign", "", 0.7, true, false, 0, false},
		{"repeated object, same label", "{\"label\": \"Malicious\", \"confidence\": 0.9}\n{\"label\": \"Malicious\", \"confidence\": 0.8}", "Malicious", "Malicious", 0.9, true, false, 0.9, true},
		{"rationale quoting the other label", `{"label": "Benign", "confidence": 0.4, "rationale": "not \"label\": \"Malicious\""}`, "Benign", "Benign", 0.4, true, true, 0.4, true},
		{"truncated", `{"label": "Malicious", "confi`, "", "", 0, false, false, 0, false},
		{"empty", ``, "", "", 0, false, false, 0, false},
		{"array: first balanced object", `[{"label": "Benign"}]`, "Benign", "Benign", 0, false, false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Parse(tt.in)
			if o.RefLabel != tt.refLabel || o.Label != tt.label {
				t.Errorf("labels ref=%q default=%q, want %q %q", o.RefLabel, o.Label, tt.refLabel, tt.label)
			}
			if math.Abs(o.RefConfidence-tt.refConf) > 1e-12 || o.RefFormat != tt.refFormat {
				t.Errorf("reference confidence %v format %v, want %v %v", o.RefConfidence, o.RefFormat, tt.refConf, tt.refFormat)
			}
			if o.StrictFormat != tt.strict || o.ConfidenceOK != tt.confOK || math.Abs(o.Confidence-tt.conf) > 1e-12 {
				t.Errorf("default confidence %v ok=%v strict=%v, want %v %v %v", o.Confidence, o.ConfidenceOK, o.StrictFormat, tt.conf, tt.confOK, tt.strict)
			}
		})
	}
}

func TestParseBoundsInput(t *testing.T) {
	big := `{"label": "Benign", "confidence": 0.5, "rationale": "` + strings.Repeat("a", MaxCompletion) + `"}`
	if o := Parse(big); o.Object {
		t.Error("an object past the size bound must not be read")
	}
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	if o := Parse(`{"label": "Benign", "x": ` + deep + `}`); o.Label != "" {
		t.Error("absurd nesting must fail closed")
	}
}

// FuzzParse checks the parser never panics, bounds its output, and that
// its reference and default views agree where they must.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		`{"label": "Malicious", "confidence": 0.9}`,
		`{"label": "benign", "confidence": "0.8", "rationale": "x"}`,
		"```json\n{\"label\": \"Abstain\", \"confidence\": NaN}\n```",
		`<think>{x}</think>{"label": "Benign", "confidence": -Infinity}`,
		`{"label": "Benign", "confidence": [NaN, {"a": Infinity}]}`,
		`{"a": "\"}", "label": "Benign", "confidence": true}`,
		`{"label": "Malicious", "confi`,
		`{NaN: NaN}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		o := Parse(s)
		if o.RefLabel != "" && o.Label != o.RefLabel {
			t.Fatalf("exact label %q must also be the default label, got %q", o.RefLabel, o.Label)
		}
		if o.RefConfidence < 0 || o.RefConfidence > 1 || math.IsNaN(o.RefConfidence) {
			t.Fatalf("reference confidence %v out of [0,1]", o.RefConfidence)
		}
		if o.ConfidenceOK && (o.Confidence < 0 || o.Confidence > 1 || math.IsNaN(o.Confidence)) {
			t.Fatalf("confidence %v out of [0,1]", o.Confidence)
		}
		if o.StrictFormat && (!o.RefFormat || !o.ConfidenceOK) {
			t.Fatalf("strict format implies the reference format: %+v", o)
		}
		for _, r := range []string{RubricReference, RubricDefault} {
			sc, _ := ScoreText(s, LabelMalicious, r)
			if math.IsNaN(sc.Total) || sc.Total < -1 || sc.Total > 2 {
				t.Fatalf("%s reward %v out of range", r, sc.Total)
			}
		}
	})
}
