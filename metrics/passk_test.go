package metrics

import (
	"math"
	"slices"
	"testing"
)

func TestPassAtK(t *testing.T) {
	for _, c := range []struct {
		n, c, k int
		want    float64
	}{
		{10, 0, 1, 0}, {10, 10, 5, 1}, {5, 1, 1, 0.2},
		{5, 1, 2, 0.4},           // 1 - C(4,2)/C(5,2) = 1 - 6/10
		{10, 3, 10, 1},           // every sample drawn: one passes
		{10, 3, 5, 1 - 21.0/252}, // 1 - C(7,5)/C(10,5)
	} {
		if got := PassAtK(c.n, c.c, c.k); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("PassAtK(%d, %d, %d) = %v, want %v", c.n, c.c, c.k, got, c.want)
		}
	}
	for _, bad := range [][3]int{{5, 1, 0}, {5, 1, 6}, {5, 6, 1}, {5, -1, 1}} {
		if !math.IsNaN(PassAtK(bad[0], bad[1], bad[2])) {
			t.Errorf("PassAtK%v should be NaN", bad)
		}
	}
	if got := PassAtKs(10); !slices.Equal(got, []int{1, 2, 4, 8, 10}) {
		t.Errorf("PassAtKs(10) = %v", got)
	}
	if got := PassAtKs(1); !slices.Equal(got, []int{1}) {
		t.Errorf("PassAtKs(1) = %v", got)
	}
}
