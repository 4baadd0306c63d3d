package extract

import (
	"math"
	"testing"
)

func TestPyFloatString(t *testing.T) {
	tests := []struct {
		in   string
		want float64
		ok   bool
	}{
		{"0.8", 0.8, true}, {" .5\n", 0.5, true}, {"5.", 5, true}, {"+1e-1", 0.1, true},
		{"1_0", 10, true}, {"0.9_0", 0.9, true}, {"1e1_0", 1e10, true}, {"1._5", 0, false}, {"1__0", 0, false}, {"_1", 0, false}, {"1_", 0, false},
		{"0x1p-2", 0, false}, {"", 0, false}, {"1.0.0", 0, false}, {"--1", 0, false},
		{"inf", math.Inf(1), true}, {"-Infinity", math.Inf(-1), true},
	}
	for _, tt := range tests {
		got, ok := PyFloatString(tt.in)
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("PyFloatString(%q) = %v, %v; want %v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	if f, ok := PyFloatString("nan"); !ok || !math.IsNaN(f) {
		t.Errorf("nan: %v %v", f, ok)
	}
}

// TestPyFloat pins the one float() emulation E1 and E4 share (issue #21:
// a confidence "0.9_0" scored calibration 0.9 in E1 and 0 in E4).
func TestPyFloat(t *testing.T) {
	for _, tc := range []struct {
		in   any
		want float64
		ok   bool
	}{
		{"0.9_0", 0.9, true}, {true, 1, true}, {NonFinite(math.Inf(1)), math.Inf(1), true},
		{nil, 0, false}, {[]any{}, 0, false}, {"0x1p-2", 0, false},
	} {
		got, ok := PyFloat(tc.in)
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("PyFloat(%#v) = %v, %v; want %v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
