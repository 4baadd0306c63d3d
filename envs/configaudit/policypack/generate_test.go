package policypack

import (
	"bytes"
	"context"
	"flag"
	"os"
	"reflect"
	"slices"
	"testing"
)

var update = flag.Bool("update", false, "rewrite data/mini.jsonl from the generator")

func TestMiniSetReproducible(t *testing.T) {
	rows, err := Generate(MiniSetSeed, MiniSetSize)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteRows(&buf, rows); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("data/mini.jsonl", buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(buf.Bytes(), miniJSONL) {
		t.Fatal("data/mini.jsonl differs from the generator's output; run `go test ./envs/configaudit/policypack -run TestMiniSetReproducible -update` and commit the file")
	}
}

// TestMiniSetComposition checks the embedded set's balance and that every
// row's labels are what the pack's Rego says, on the row and on its
// compliant counterpart.
func TestMiniSetComposition(t *testing.T) {
	rows, err := MiniSet()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != MiniSetSize {
		t.Fatalf("%d rows, want %d", len(rows), MiniSetSize)
	}
	perPack := map[string]int{}
	clean, exceptionOnly, exceptionMixed := map[string]int{}, map[string]int{}, map[string]int{}
	ids := map[string]bool{}
	violated := map[string]bool{}
	for _, r := range rows {
		if ids[r.ID] {
			t.Errorf("duplicate id %s", r.ID)
		}
		ids[r.ID] = true
		p, ok := Lookup(r.PolicyPack)
		if !ok {
			t.Fatalf("%s: unknown pack %q", r.ID, r.PolicyPack)
		}
		perPack[r.PolicyPack]++
		switch {
		case r.Meta.Clean && !r.Meta.Exception:
			clean[r.PolicyPack]++
		case r.Meta.Clean:
			exceptionOnly[r.PolicyPack]++
		case r.Meta.Exception:
			exceptionMixed[r.PolicyPack]++
		}
		vs, err := p.Evaluate(context.Background(), r.Path, []byte(r.Content))
		if err != nil {
			t.Fatalf("%s: %v", r.ID, err)
		}
		var want []string
		for _, e := range r.Labels.Expected {
			want = append(want, e.ID)
			violated[r.PolicyPack+" "+e.ID] = true
			if c, _ := p.Clause(e.ID); c.Severity != e.Severity {
				t.Errorf("%s: %s severity %s, pack says %s", r.ID, e.ID, e.Severity, c.Severity)
			}
		}
		if got := ViolatedClauses(vs); !slices.Equal(got, want) {
			t.Errorf("%s: Rego reports %v, labels say %v", r.ID, got, want)
		}
		cvs, err := p.Evaluate(context.Background(), r.Path, []byte(r.Compliant))
		if err != nil || len(cvs) > 0 {
			t.Errorf("%s: compliant counterpart: %v %v", r.ID, cvs, err)
		}
		if r.Meta.Clean != (len(want) == 0) || (r.Meta.Clean && r.Content != r.Compliant) {
			t.Errorf("%s: meta.clean %v with %d expected clauses", r.ID, r.Meta.Clean, len(want))
		}
		if r.FixtureType != RowFixtureType(p.FixtureType()) {
			t.Errorf("%s: fixture_type %s for a %s pack", r.ID, r.FixtureType, p.FixtureType())
		}
	}
	for _, p := range Embedded() {
		id := p.ID()
		if perPack[id] != MiniSetSize/len(Embedded()) || clean[id] == 0 || exceptionOnly[id] == 0 || exceptionMixed[id] == 0 {
			t.Errorf("%s: %d rows, %d clean, %d exception-only, %d exception+breach", id, perPack[id], clean[id], exceptionOnly[id], exceptionMixed[id])
		}
		n := 0
		for _, c := range p.Clauses() {
			if violated[id+" "+c.ID] {
				n++
			}
		}
		t.Logf("%s: %d rows (%d clean, %d exception-only, %d exception+breach), %d/%d clauses violated somewhere", id, perPack[id], clean[id], exceptionOnly[id], exceptionMixed[id], n, len(p.Clauses()))
	}
}

func TestGenerateDeterministic(t *testing.T) {
	a, err := Generate(7, 40)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Generate(7, 40)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Generate(8, 40)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Error("same seed, different rows")
	}
	if reflect.DeepEqual(a, c) {
		t.Error("different seeds, same rows")
	}
	if len(a) != 40 {
		t.Errorf("%d rows, want 40", len(a))
	}
}

func TestGenerateRefusesBadArguments(t *testing.T) {
	if _, err := Generate(1, 0); err == nil {
		t.Error("n = 0 accepted")
	}
	if _, err := GenerateFrom(context.Background(), nil, 1, 5); err == nil {
		t.Error("no packs accepted")
	}
	if _, err := Generate(1, 1_000_000); err == nil {
		t.Error("a million rows from a few hundred combinations accepted")
	}
}
