package integrity

import (
	"encoding/json"
	"testing"
)

func FuzzNormaliseAndParse(f *testing.F) {
	for _, s := range []string{`{"question":"a 1","answer":"Benign"}`, `{"prompt":[1,2]}`, `[]`, "\xff", "  Ab\t12 3 "} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Normalise(s)
		if Normalise(n) != n {
			t.Fatalf("Normalise not idempotent on %q: %q then %q", s, n, Normalise(n))
		}
		if json.Valid([]byte(s)) {
			GenericParse(json.RawMessage(s)) // must not panic
		}
	})
}
