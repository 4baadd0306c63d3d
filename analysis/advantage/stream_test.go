package advantage

import (
	"errors"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func sliceSource(groups []Group) Source {
	return func(yield func(Group) error) error {
		for _, g := range groups {
			if err := yield(g); err != nil {
				return err
			}
		}
		return nil
	}
}

// randomInput mixes group sizes (singletons included), constant groups,
// ties and recorded advantages.
func randomInput(seed uint64, groups int) *Input {
	rng := rand.New(rand.NewPCG(seed, 9))
	in := &Input{Names: []string{"accuracy", "calibration", "cost"}, Weights: []float64{1, 0.2, 0.5}}
	for g := range groups {
		grp := Group{Key: strconv.Itoa(g)}
		size := 1 + rng.IntN(5)
		constant := rng.IntN(6) == 0
		for range size {
			c := []float64{float64(rng.IntN(2)), float64(rng.IntN(5)) / 4, float64(rng.IntN(3) - 1)}
			if constant {
				c = []float64{1, 0.5, 0}
			}
			r := Rollout{Components: c}
			if rng.IntN(3) == 0 {
				v := rng.NormFloat64()
				r.Recorded = &v
			}
			grp.Rollouts = append(grp.Rollouts, r)
		}
		in.Groups = append(in.Groups, grp)
	}
	return in
}

// TestAnalyseStreamMatchesAnalyse: the streaming analysis sums in the same
// order as the in-memory one, so every figure is identical, not just close.
func TestAnalyseStreamMatchesAnalyse(t *testing.T) {
	for _, seed := range []uint64{1, 2, 3} {
		in := randomInput(seed, 300)
		want, err := Analyse(in)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AnalyseStream(in.Names, in.Weights, sliceSource(in.Groups))
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("seed %d: stream\n%+v\nin memory\n%+v", seed, got, want)
		}
	}
}

func TestAnalyseStreamBadInput(t *testing.T) {
	names, w := []string{"a", "b"}, []float64{1, 1}
	if _, err := AnalyseStream(nil, nil, sliceSource(nil)); err == nil {
		t.Error("no components accepted")
	}
	if _, err := AnalyseStream(names, []float64{1}, sliceSource(nil)); err == nil {
		t.Error("weights of the wrong length accepted")
	}
	single := []Group{{Key: "g", Rollouts: []Rollout{{Components: []float64{1, 0}}}}}
	if _, err := AnalyseStream(names, w, sliceSource(single)); err == nil || !strings.Contains(err.Error(), "1 singleton") {
		t.Errorf("only singletons: %v", err)
	}
	short := []Group{{Key: "g", Rollouts: []Rollout{{Components: []float64{1}}, {Components: []float64{1, 0}}}}}
	if _, err := AnalyseStream(names, w, sliceSource(short)); err == nil || !strings.Contains(err.Error(), "group g") {
		t.Errorf("ragged components: %v", err)
	}
	boom := errors.New("read failed")
	failing := func(func(Group) error) error { return boom }
	if _, err := AnalyseStream(names, w, failing); !errors.Is(err, boom) {
		t.Errorf("source error: %v", err)
	}
}
