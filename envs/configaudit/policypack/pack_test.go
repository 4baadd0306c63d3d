package policypack

import "testing"

func TestEmbeddedPacksLoad(t *testing.T) {
	ps, err := embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		t.Logf("%s: %d clauses, generator %v", p.ID(), len(p.Clauses()), p.HasGenerator())
	}
}
