package policypack

import (
	"testing"
)

// TestEmbeddedPacksValid loads the embedded packs with every check,
// including the generator's dynamic check that Embedded skips at start-up.
func TestEmbeddedPacksValid(t *testing.T) {
	ps, err := loadEmbedded(loadOptions{checkGenerator: true})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	withException, withRequirement := 0, 0
	for _, p := range ps {
		kinds[p.FixtureType()]++
		n := map[ClauseType]int{}
		for _, c := range p.Clauses() {
			n[c.Type]++
		}
		if n[Exception] > 0 {
			withException++
		}
		if n[Requirement] > 0 {
			withRequirement++
		}
		if !p.HasGenerator() {
			t.Errorf("%s: embedded packs must ship generator.json", p.ID())
		}
		t.Logf("%s (%s): %d clauses %v", p.ID(), p.FixtureType(), len(p.Clauses()), n)
	}
	if len(ps) < 8 || kinds[FixtureK8s] < 3 || kinds[FixtureTerraform] < 3 {
		t.Errorf("want at least 8 packs, 3 per fixture type; got %v", kinds)
	}
	if withException < 4 || withRequirement < len(ps) {
		t.Errorf("%d packs with exceptions, %d with requirements", withException, withRequirement)
	}
	if got := len(Embedded()); got != len(ps) {
		t.Errorf("Embedded() = %d packs, want %d", got, len(ps))
	}
	if _, ok := Lookup("payments-k8s"); !ok {
		t.Error(`Lookup("payments-k8s") failed`)
	}
	if _, ok := Lookup("no-such-pack"); ok {
		t.Error("Lookup found a pack that does not exist")
	}
}
