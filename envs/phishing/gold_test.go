package phishing

import (
	"encoding/json"
	"strings"
	"testing"
)

// Unknown gold labels are refused; they were once read as Legitimate, so a
// correct answer scored 0.378 without any error.
func TestGoldLabels(t *testing.T) {
	tests := []struct {
		raw     string
		want    string
		wantErr string
	}{
		{`"Phishing"`, LabelPhishing, ""},
		{`"phishing email"`, LabelPhishing, ""},
		{`"Legitimate"`, LabelLegitimate, ""},
		{`"Safe Email"`, LabelLegitimate, ""},
		{`1`, LabelPhishing, ""},
		{`0`, LabelLegitimate, ""},
		{`true`, LabelPhishing, ""},
		{`"Phish"`, "", "--label-map"},
		{`"Garbage"`, "", "not a gold label"},
		{`""`, "", "not a gold label"},
		{`2`, "", "must be 1 (Phishing) or 0"},
		{`"Malicious"`, "", "e1 dataset"},
		{`"Abstain"`, "", "not a gold label"},
		{`null`, "", "missing"},
		{`{"x": 1}`, "", "string label or 0/1"},
	}
	for _, tc := range tests {
		t.Run(tc.raw, func(t *testing.T) {
			got, err := parseAnswer(json.RawMessage(tc.raw))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("parseAnswer(%s) = %q, %v; want error containing %q", tc.raw, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("parseAnswer(%s) = %q, %v; want %q", tc.raw, got, err, tc.want)
			}
		})
	}
	// A whole E1 row is refused by E4 with the reason.
	_, err := New().ParseExample(json.RawMessage(`{"question": "Device x observed tcp 1→2", "answer": "Malicious"}`))
	if err == nil || !strings.Contains(err.Error(), "e1 dataset") {
		t.Fatalf("E1 row accepted by E4: %v", err)
	}
}
