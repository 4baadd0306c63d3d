package phishing

import (
	"math"
	"testing"
)

// TestNonFiniteLiterals: Python's json.loads accepts NaN, Infinity and
// -Infinity, so the answer is read, not discarded. The reference rubric
// then does what Python's float() and 0 <= c <= 1 do with them; the default
// rubric treats them as invalid values of their field. No component is
// ever NaN.
func TestNonFiniteLiterals(t *testing.T) {
	ph := example(t, phishRow)
	lg := example(t, legitRow)
	const shortener = `{"type":"url_shortener","value":"http://bit.ly/x7Yq"}`
	cases := []struct {
		name, rubric, out string
		legit             bool
		want              map[string]float64
		format            *bool // Parsed format_valid, when checked
	}{
		{"reference: NaN confidence is out of range", RubricReference, `{"label":"Phishing","confidence":NaN}`, false,
			map[string]float64{"accuracy": 1, "format": 0, "calibration": 0, "asymmetric_cost": 1, "evidence": 0}, ptr(false)},
		{"reference: Infinity confidence, evidence still scored", RubricReference, `{"label":"Phishing","confidence":Infinity,"evidence":["http://bit.ly/x7Yq"]}`, false,
			map[string]float64{"accuracy": 1, "format": 0, "calibration": 0, "asymmetric_cost": 1, "evidence": 1}, ptr(false)},
		{"reference: -Infinity in a fence counts as 0", RubricReference, "```json\n{\"label\":\"Legitimate\",\"confidence\":-Infinity}\n```", false,
			map[string]float64{"accuracy": 0, "format": 0, "calibration": 1, "asymmetric_cost": -1}, ptr(false)},
		{"reference: NaN evidence yields no string", RubricReference, `{"label":"Phishing","confidence":0.9,"evidence":NaN}`, false,
			map[string]float64{"accuracy": 1, "format": 0, "calibration": 0.9, "evidence": 0}, ptr(false)},
		{"reference: a NaN item beside a string", RubricReference, `{"label":"Phishing","confidence":0.9,"evidence":[NaN,"urgent"]}`, false,
			map[string]float64{"accuracy": 1, "format": 1, "calibration": 0.9}, ptr(true)},
		{"reference: NaN label is no label", RubricReference, `{"label":NaN,"confidence":0.9}`, false,
			map[string]float64{"accuracy": 0, "format": 0, "calibration": 0, "asymmetric_cost": 0}, ptr(false)},
		{"default: NaN confidence fails format and calibration only", RubricDefault, `{"label":"Phishing","confidence":NaN,"evidence":[` + shortener + `]}`, false,
			map[string]float64{"accuracy": 1, "format": 0, "calibration": 0, "asymmetric_cost": 1}, ptr(false)},
		{"default: Infinity on legit", RubricDefault, `{"label":"Legitimate","confidence":Infinity,"evidence":[]}`, true,
			map[string]float64{"accuracy": 1, "format": 0, "calibration": 0, "asymmetric_cost": 1, "evidence": 1}, ptr(false)},
		{"default: a NaN item is ungrounded", RubricDefault, `{"label":"Phishing","confidence":0.9,"evidence":[NaN,` + shortener + `]}`, false,
			map[string]float64{"accuracy": 1, "format": 0, "calibration": 1 - 0.1*0.1}, ptr(false)},
		{"default: NaN evidence on legit is a malformed item", RubricDefault, `{"label":"Legitimate","confidence":0.9,"evidence":NaN}`, true,
			map[string]float64{"accuracy": 1, "format": 0, "evidence": 0}, ptr(false)},
		{"default: NaN label is no answer", RubricDefault, `{"label":NaN,"confidence":0.9}`, false,
			map[string]float64{"accuracy": 0, "format": 0, "calibration": 0, "asymmetric_cost": -1}, ptr(false)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex := ph
			if tc.legit {
				ex = lg
			}
			s := score(t, ex, tc.out, tc.rubric)
			for k, v := range tc.want {
				if math.Abs(s.Components[k]-v) > 1e-9 {
					t.Errorf("%s = %v, want %v (all %v)", k, s.Components[k], v, s.Components)
				}
			}
			for k, v := range s.Components {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Errorf("component %s = %v", k, v)
				}
			}
			if c, _ := s.Parsed["confidence"].(float64); math.IsNaN(c) || c < 0 || c > 1 {
				t.Errorf("parsed confidence %v", s.Parsed["confidence"])
			}
			if tc.format != nil && s.Parsed["format_valid"] != *tc.format {
				t.Errorf("format_valid = %v, want %v", s.Parsed["format_valid"], *tc.format)
			}
		})
	}
	if p := ParseOutput(`{"label":"Phishing","confidence":NaN,"evidence":[NaN,` + shortener + `]}`).Items; len(p) != 2 || p[0].Typed || p[1].Value != "http://bit.ly/x7Yq" {
		t.Errorf("items %+v", p)
	}
}

func ptr(b bool) *bool { return &b }
