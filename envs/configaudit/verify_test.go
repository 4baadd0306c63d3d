package configaudit

import (
	"context"
	"testing"

	"github.com/svbench/svbench/verify"
)

// TestMutationsMapToVerifierFindings runs the real verifiers on every
// baseline and every mutation of it: each mutation's mapped ids must appear,
// and no baseline may already report an id any mutation maps to, so the
// labels are both independent of the tools and confirmed by them.
func TestMutationsMapToVerifierFindings(t *testing.T) {
	e, _ := testEnv(t)
	v, err := e.verifiers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	bases, err := Corpus()
	if err != nil {
		t.Fatal(err)
	}
	mapped := map[string]map[string]bool{FixtureK8s: {}, FixtureTF: {}}
	for _, ft := range []string{FixtureK8s, FixtureTF} {
		for _, m := range Mutations(ft) {
			for _, f := range m.Findings {
				mapped[ft][f.ID] = true
			}
		}
	}
	applied := map[string]int{}
	for _, b := range bases {
		scan := func(content []byte) map[string]bool {
			fs, err := v.all(context.Background(), b.Fixture, verify.File{Path: b.Path, Content: content}, contentHash(content))
			if err != nil {
				t.Fatalf("%s: %v", b.Name, err)
			}
			got := map[string]bool{}
			for _, f := range fs {
				got[f.ID()] = true
			}
			return got
		}
		base := scan(b.Content)
		for id := range base {
			if mapped[b.Fixture][id] {
				t.Errorf("baseline %s already reports %s, which a mutation maps to", b.Name, id)
			}
		}
		for _, m := range Mutations(b.Fixture) {
			out, ok, err := m.Apply(b.Content)
			if err != nil {
				t.Fatalf("%s/%s: %v", b.Name, m.Name, err)
			}
			if !ok {
				continue
			}
			applied[m.Name]++
			got := scan(out)
			for _, f := range m.Findings {
				if !got[f.ID] {
					t.Errorf("%s + %s: verifiers do not report %s", b.Name, m.Name, f.ID)
				}
			}
		}
	}
	for _, ft := range []string{FixtureK8s, FixtureTF} {
		for _, m := range Mutations(ft) {
			if applied[m.Name] == 0 {
				t.Errorf("mutation %s applies to no baseline", m.Name)
			}
		}
	}
}

// TestMiniRowsConfirmedByVerifiers checks every embedded row: the labelled
// ids are reported by the verifiers on the row's content.
func TestMiniRowsConfirmedByVerifiers(t *testing.T) {
	e, ds := testEnv(t)
	v, _ := e.verifiers(context.Background())
	for _, ex := range ds.Examples {
		fx := ex.Payload.(*fixture)
		fs, err := v.all(context.Background(), fx.Type, verify.File{Path: fx.Path, Content: fx.Content}, fx.Hash)
		if err != nil {
			t.Fatalf("%s: %v", ex.ID, err)
		}
		got := map[string]bool{}
		for _, f := range fs {
			got[f.ID()] = true
		}
		for _, o := range fx.Oracle {
			if !got[o.ID] {
				t.Errorf("%s: label %s not reported by the verifiers", ex.ID, o.ID)
			}
		}
	}
}
