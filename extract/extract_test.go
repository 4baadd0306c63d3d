package extract

import (
	"strings"
	"testing"
)

func TestObject(t *testing.T) {
	cases := []struct {
		name, in, want string
		ok             bool
	}{
		{"whole text", `{"label": "Benign"}`, `{"label": "Benign"}`, true},
		{"whole text with whitespace", "  \n{\"a\": 1}\n ", `{"a": 1}`, true},
		{"fenced json", "Here:\n```json\n{\"a\": 1}\n```\nbye", `{"a": 1}`, true},
		{"fenced any case tag", "```JSON\n{\"a\": 2}\n```", `{"a": 2}`, true},
		{"fence without tag", "```\n{\"a\": 3}\n```", `{"a": 3}`, true},
		{"prose around object", `I think {"a": {"b": "}"}} done`, `{"a": {"b": "}"}}`, true},
		{"escaped quote in string", `x {"a": "q\"}"} y`, `{"a": "q\"}"}`, true},
		{"first balanced only", `<think>{maybe}</think>{"label": "Benign"}`, "", false},
		{"think prefix then object", `<think>hmm</think>{"label": "Benign"}`, `{"label": "Benign"}`, true},
		{"truncated", `{"label": "Ben`, "", false},
		{"array falls back to its first object", `[{"a": 1}]`, `{"a": 1}`, true},
		{"scalar", `42`, "", false},
		{"empty", ``, "", false},
		{"invalid fence falls back to balanced", "```json\n{bad}\n``` {\"a\": 1}", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := Object(tc.in)
			if ok != tc.ok || (ok && string(got) != tc.want) {
				t.Fatalf("Object(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
			}
		})
	}
}

func TestMapKeepsNumbersExact(t *testing.T) {
	m, ok := Map(`{"confidence": 1.0, "n": 3}`)
	if !ok {
		t.Fatal("no object")
	}
	if m["confidence"].(interface{ String() string }).String() != "1.0" {
		t.Fatalf("confidence = %v", m["confidence"])
	}
}

func TestHugeInputIsBounded(t *testing.T) {
	in := strings.Repeat("{", MaxInput*2)
	if _, ok := Object(in); ok {
		t.Fatal("unbalanced braces parsed")
	}
}

func FuzzObject(f *testing.F) {
	for _, s := range []string{
		`{"label": "Malicious", "confidence": 0.9}`,
		"```json\n{\"a\": [1, 2, {\"b\": \"}\"}]}\n```",
		`<think>{x}</think>{"a": 1}`,
		`prefix {"a": "\\\"{"} suffix`,
		"{\"a\":\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		raw, ok := Object(s)
		if !ok {
			return
		}
		// Whatever is returned must be a JSON object found in the input.
		if !strings.HasPrefix(string(raw), "{") || !strings.Contains(s, strings.TrimSpace(string(raw))) {
			t.Fatalf("Object(%q) returned %q", s, raw)
		}
		if _, ok := Map(s); !ok {
			t.Fatalf("Object found %q but Map failed", raw)
		}
	})
}
