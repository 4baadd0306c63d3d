package configaudit

import (
	"fmt"
	"slices"
	"testing"
)

// TestGroupedSplit: rows sharing a key (a group, or a normalised prompt)
// land in one split; the split sizes stay near 70/15/15.
func TestGroupedSplit(t *testing.T) {
	var strata []string
	var keys [][]string
	for i := 0; i < 600; i++ {
		strata = append(strata, []string{"a", "b"}[i%2])
		keys = append(keys, []string{fmt.Sprintf("g%d", i/4), fmt.Sprintf("p%d", i)})
	}
	// Rows 1 and 401 share a prompt: their groups (0 and 100) become one.
	keys[401][1] = "p1"
	split, units := groupedSplit(strata, keys, splitRatios, 7)
	if units != 149 {
		t.Errorf("%d units, want 149", units)
	}
	where := map[int]string{}
	for name, idx := range split.Sets() {
		for _, i := range idx {
			where[i] = name
		}
	}
	if len(where) != 600 {
		t.Fatalf("%d rows placed", len(where))
	}
	for i := 0; i < 600; i++ {
		if where[i] != where[i-i%4] {
			t.Errorf("row %d in %s, its group's first row in %s", i, where[i], where[i-i%4])
		}
	}
	if where[1] != where[401] {
		t.Error("rows with one prompt split apart")
	}
	if n := len(split.Train); n < 400 || n > 440 {
		t.Errorf("train has %d of 600 rows", n)
	}
	again, _ := groupedSplit(strata, keys, splitRatios, 7)
	if !slices.Equal(again.Test, split.Test) {
		t.Error("not deterministic")
	}
}
