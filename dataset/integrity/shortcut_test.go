package integrity

import (
	"fmt"
	"testing"
)

func TestFindShortcuts(t *testing.T) {
	cases := []struct {
		name     string
		leak     bool // direction gives the label away
		wantWarn bool
	}{
		{"leaky direction", true, true},
		{"balanced direction", false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var rows []FieldRow
			for i := range 200 {
				label := `"Benign"`
				if i%2 == 0 {
					label = `"Malicious"`
				}
				dir := []string{"inbound", "outbound", "internal"}[i%3]
				if c.leak {
					dir = map[string]string{`"Malicious"`: "inbound", `"Benign"`: "outbound"}[label]
				}
				rows = append(rows, FieldRow{Label: label, Fields: map[string]string{
					"direction": dir,
					"bytes":     fmt.Sprint((i * 7919) % 1000), // noise with a value per row
					"proto":     []string{"tcp", "udp"}[(i/2)%2],
				}})
			}
			s := FindShortcuts(rows)
			if s == nil {
				t.Fatal("no report")
			}
			if c.leak && (s.Best1.Fields[0] != "direction" || s.Best1.Accuracy < 0.99) {
				t.Errorf("best one-field rule %v %.3f, want direction at 1.0", s.Best1.Fields, s.Best1.Accuracy)
			}
			if got := len(s.findings("f")) > 0; got != c.wantWarn {
				t.Errorf("warned %v, want %v (best %v %.3f, majority %.3f)", got, c.wantWarn, s.Best2.Fields, s.Best2.Accuracy, s.Majority)
			}
		})
	}
	if FindShortcuts(nil) != nil {
		t.Error("no rows should give no report")
	}
}
