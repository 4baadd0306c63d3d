package extract

import (
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"
)

func nan() NonFinite      { return NonFinite(math.NaN()) }
func inf(s int) NonFinite { return NonFinite(math.Inf(s)) }

func TestPyMap(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want map[string]any // nil: no object
	}{
		{"NaN value", `{"confidence": NaN}`, map[string]any{"confidence": nan()}},
		{"Infinity and -Infinity", `{"a": Infinity, "b": -Infinity}`, map[string]any{"a": inf(1), "b": inf(-1)}},
		{"nested in lists and objects", `{"a": [NaN, {"b": Infinity}], "c": 1}`,
			map[string]any{"a": []any{nan(), map[string]any{"b": inf(1)}}, "c": json.Number("1")}},
		{"constants inside strings are text", `{"a": "NaN", "b": "-Infinity", "c": NaN}`,
			map[string]any{"a": "NaN", "b": "-Infinity", "c": nan()}},
		{"a model's NUL string is not a marker", `{"a": "\u0000NaN", "b": "x\u0000\u0000y", "c": Infinity}`,
			map[string]any{"a": "\x00NaN", "b": "x\x00\x00y", "c": inf(1)}},
		{"NUL in a key survives", `{"k\u0000": NaN}`, map[string]any{"k\x00": nan()}},
		{"escaped backslash before u0000 is not a NUL", `{"a": "\\u0000", "b": NaN}`, map[string]any{"a": `\u0000`, "b": nan()}},
		{"fenced", "Answer:\n```json\n{\"c\": NaN}\n```", map[string]any{"c": nan()}},
		{"first balanced after a think block", `<think>NaN</think> {"c": -Infinity}`, map[string]any{"c": inf(-1)}},
		{"without constants it is Map", `{"a": 1.0}`, map[string]any{"a": json.Number("1.0")}},
		{"constant as key", `{NaN: 1}`, nil},
		{"lower-case nan is not Python's", `{"a": nan}`, nil},
		{"+Infinity is not Python's", `{"a": +Infinity}`, nil},
		{"-NaN is not Python's", `{"a": -NaN}`, nil},
		{"constant glued to a word", `{"a": NaNx}`, nil},
		{"constant after a value", `{"a": 1 NaN}`, nil},
		{"two constants without a comma", `{"a": [NaN NaN]}`, nil},
		{"top-level constant", `NaN`, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := PyMap(tc.in)
			if ok != (tc.want != nil) {
				t.Fatalf("PyMap(%q) ok = %v, want %v (got %#v)", tc.in, ok, tc.want != nil, got)
			}
			if ok && !sameJSON(got, tc.want) {
				t.Fatalf("PyMap(%q) = %#v, want %#v", tc.in, got, tc.want)
			}
		})
	}
}

// sameJSON is reflect.DeepEqual with NaN equal to itself.
func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case NonFinite:
		y, ok := b.(NonFinite)
		return ok && (x == y || math.IsNaN(float64(x)) && math.IsNaN(float64(y)))
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !sameJSON(v, w) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func TestNonFiniteString(t *testing.T) {
	for want, v := range map[string]NonFinite{"NaN": nan(), "Infinity": inf(1), "-Infinity": inf(-1)} {
		if v.String() != want {
			t.Errorf("%v.String() = %q, want %q", float64(v), v.String(), want)
		}
	}
	if _, err := json.Marshal(map[string]any{"c": nan()}); err == nil {
		t.Error("encoding a NonFinite must fail, not invent a value")
	}
}

func TestPyMapIsBounded(t *testing.T) {
	in := `{"a": NaN, "b": "` + strings.Repeat("x", MaxInput) + `"}`
	if _, ok := PyMap(in); ok {
		t.Fatal("an object cut by the input cap parsed")
	}
	deep := `{"a": NaN, "b": ` + strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000) + `}`
	if _, ok := PyMap(deep); ok {
		t.Fatal("absurd nesting parsed")
	}
}

func FuzzPyMap(f *testing.F) {
	for _, s := range []string{
		`{"label": "Malicious", "confidence": NaN}`,
		"```json\n{\"a\": [Infinity, {\"b\": -Infinity}]}\n```",
		`<think>{x}</think>{"a": NaN}`,
		`{"a": "\u0000NaN", "b": NaN}`,
		`{"k\u0000\u0000": "\\u0000", "v": [NaN]}`,
		`{NaN: NaN}`,
		`{"a": -NaN}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, ok := PyMap(s)
		std, stdOK := Map(s)
		if stdOK && !ok {
			t.Fatalf("Map read %q but PyMap did not", s)
		}
		if !strings.Contains(s, "NaN") && !strings.Contains(s, "Infinity") {
			if ok != stdOK || ok && !sameJSON(m, std) {
				t.Fatalf("without constants PyMap must be Map: %#v vs %#v", m, std)
			}
			return
		}
		if !ok {
			return
		}
		// A string holding a lone NUL before a constant's name can only be
		// a marker that was not turned back into a value.
		var walk func(v any)
		walk = func(v any) {
			switch x := v.(type) {
			case string:
				if x == "\x00NaN" || x == "\x00Infinity" || x == "\x00-Infinity" {
					if !strings.Contains(s, `\u0000`) {
						t.Fatalf("marker %q leaked from %q", x, s)
					}
				}
			case []any:
				for _, e := range x {
					walk(e)
				}
			case map[string]any:
				for _, e := range x {
					walk(e)
				}
			}
		}
		walk(m)
	})
}
