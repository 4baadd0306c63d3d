package envtest

import (
	"errors"
	"fmt"
	"testing"

	"github.com/svbench/svbench/dataset/integrity"
	"github.com/svbench/svbench/env"
)

// Leak counts what one held-out split shares with another split.
type Leak struct {
	HeldOut, Other string
	Rows           int
	SameID, Exact  int
	Near           int
}

// NearShare is the share of held-out rows with a near duplicate.
func (l Leak) NearShare() float64 {
	if l.Rows == 0 {
		return 0
	}
	return float64(l.Near) / float64(l.Rows)
}

// SplitLeaks compares every held-out split (dev, test) with every other
// split the environment ships: ids in both, prompts equal, prompts equal
// once numbers, case and spacing are ignored (integrity.Normalise, the
// rule `svbench data validate` applies between split files). Splits the
// environment does not ship are skipped; the loaded sizes come back too.
func SplitLeaks(t testing.TB, e env.Environment) ([]Leak, map[string]int) {
	t.Helper()
	type set struct {
		ids          map[string]bool
		exact, near  map[string]bool
		texts, nears []string
		idList       []string
	}
	sets := map[string]*set{}
	sizes := map[string]int{}
	for _, name := range env.SplitNames() {
		ds, err := env.LoadDataset(t.Context(), e, "", name)
		if errors.Is(err, env.ErrNoSplit) {
			continue
		}
		if err != nil {
			t.Fatalf("load split %s: %v", name, err)
		}
		if ds.Info.Split != name {
			t.Errorf("split %s loaded with DatasetInfo.Split %q", name, ds.Info.Split)
		}
		s := &set{ids: map[string]bool{}, exact: map[string]bool{}, near: map[string]bool{}}
		for _, ex := range ds.Examples {
			txt := env.PromptText(ex)
			s.ids[ex.ID] = true
			s.idList = append(s.idList, ex.ID)
			s.exact[txt] = true
			n := integrity.Normalise(txt)
			s.near[n] = true
			s.texts = append(s.texts, txt)
			s.nears = append(s.nears, n)
		}
		sets[name] = s
		sizes[name] = len(ds.Examples)
	}
	var leaks []Leak
	for _, held := range []string{env.SplitTest, env.SplitDev} {
		h, ok := sets[held]
		if !ok {
			continue
		}
		for _, other := range env.SplitNames() {
			o, ok := sets[other]
			if !ok || other == held || (held == env.SplitDev && other == env.SplitTest) {
				continue
			}
			l := Leak{HeldOut: held, Other: other, Rows: len(h.texts)}
			for i, txt := range h.texts {
				if o.ids[h.idList[i]] {
					l.SameID++
				}
				if o.exact[txt] {
					l.Exact++
				}
				if o.near[h.nears[i]] {
					l.Near++
				}
			}
			leaks = append(leaks, l)
		}
	}
	return leaks, sizes
}

// checkSplits fails on any id or exact prompt a held-out split shares
// with another split, and on near duplicates above the environment's
// NearLeakLimit (the data validate default 0.10 when unset; 1 reports
// only, for prompts that are mostly numbers).
func checkSplits(t *testing.T, spec env.Spec, e env.Environment) {
	if _, ok := e.(env.SplitLoader); !ok {
		t.Skip("ships only its evaluation set (no env.SplitLoader)")
	}
	leaks, sizes := SplitLeaks(t, e)
	t.Logf("split sizes: %v", sizes)
	if sizes[env.SplitTrain] == 0 {
		t.Errorf("a SplitLoader without a train split: %v", sizes)
	}
	limit := spec.NearLeakLimit
	if limit == 0 {
		limit = 0.10
	}
	for _, l := range leaks {
		what := fmt.Sprintf("%s vs %s (%d held-out rows)", l.HeldOut, l.Other, l.Rows)
		t.Logf("%s: %d same id, %d exact, %d near (%.1f%%)", what, l.SameID, l.Exact, l.Near, 100*l.NearShare())
		if l.SameID > 0 || l.Exact > 0 {
			t.Errorf("%s: %d ids and %d prompts in both splits", what, l.SameID, l.Exact)
		}
		if limit < 1 && l.NearShare() > limit {
			t.Errorf("%s: %.1f%% near duplicates, above the limit %.0f%%", what, 100*l.NearShare(), 100*limit)
		}
	}
}
