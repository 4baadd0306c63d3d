package dataset

import (
	"fmt"
	"strconv"
	"testing"
)

func TestDistinctSamplerDedupAndUniform(t *testing.T) {
	s := NewDistinctSampler[int](100)
	built := 0
	// 10,000 distinct keys, each offered three times.
	for rep := 0; rep < 3; rep++ {
		for i := 0; i < 10000; i++ {
			k := strconv.Itoa(i)
			s.Offer(HashKey64("p", k), k, func() (int, bool) { built++; return i, true })
		}
	}
	if s.Len() != 100 {
		t.Fatalf("held %d, want 100", s.Len())
	}
	seen := map[int]bool{}
	for _, v := range s.Items() {
		if seen[v] {
			t.Fatalf("duplicate %d in sample", v)
		}
		seen[v] = true
	}
	if s.Seen != 30000 {
		t.Errorf("Seen = %d", s.Seen)
	}
	// Later repetitions add nothing: every held key was dropped twice.
	if s.Dropped != 200 {
		t.Errorf("Dropped = %d, want 200", s.Dropped)
	}
	// Values are built only for rows entering the sample (≈ K·ln(N/K)).
	if built > 1500 {
		t.Errorf("built %d values for 30000 offers; the threshold check is not skipping work", built)
	}
	// Roughly uniform: the sample's mean index is near the middle.
	sum := 0
	for v := range seen {
		sum += v
	}
	if mean := sum / len(seen); mean < 3500 || mean > 6500 {
		t.Errorf("mean sampled index %d, not uniform-looking", mean)
	}
	// Items come out in priority order, so a prefix is also a sample.
	keys := s.Keys()
	for i := 1; i < len(keys); i++ {
		if HashKey64("p", keys[i-1]) > HashKey64("p", keys[i]) {
			t.Fatal("items not in priority order")
		}
	}
}

func TestDistinctSamplerRejectedBuild(t *testing.T) {
	s := NewDistinctSampler[string](2)
	for i := 0; i < 5; i++ {
		k := fmt.Sprint(i)
		s.Offer(uint64(i), k, func() (string, bool) { return k, i%2 == 0 })
	}
	if got := s.Items(); len(got) != 2 || got[0] != "0" || got[1] != "2" {
		t.Errorf("Items = %v, want [0 2]", got)
	}
	if NewDistinctSampler[int](0).Offer(1, "a", func() (int, bool) { return 1, true }) {
		t.Error("a zero-capacity sampler kept an item")
	}
}
