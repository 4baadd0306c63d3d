package advantage

import (
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
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

// writeResults writes svbench results rows: order lists (example index,
// rollout) pairs in file order.
func writeResults(t *testing.T, order [][2]int, withWeights bool) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(4, 4))
	var b []byte
	for _, o := range order {
		r := artifact.Result{Index: o[0], Rollout: o[1], FinalText: "x", Components: map[string]float64{
			"accuracy": float64(rng.IntN(2)), "format": float64(rng.IntN(2)), "calibration": rng.Float64()}}
		if withWeights {
			r.Weights = map[string]float64{"accuracy": 1, "format": 0.1, "calibration": 0.2}
		}
		r.Reward = r.Components["accuracy"] + 0.1*r.Components["format"] + 0.2*r.Components["calibration"]
		line, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, line...), '\n')
	}
	p := filepath.Join(t.TempDir(), artifact.ResultsFile)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadStreamMatchesLoad(t *testing.T) {
	var grouped [][2]int
	for ex := range 40 {
		for r := range 1 + ex%4 {
			grouped = append(grouped, [2]int{ex, r})
		}
	}
	path := writeResults(t, grouped, true)
	ld, err := Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	want, err := Analyse(ld.Input)
	if err != nil {
		t.Fatal(err)
	}
	sld, src, err := LoadStream(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := AnalyseStream(sld.Input.Names, sld.Input.Weights, src)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) || sld.WeightsFrom != "rows" || sld.GroupedBy != ld.GroupedBy {
		t.Errorf("streamed file differs:\n%+v\n%+v", got, want)
	}

	interleaved := writeResults(t, [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}}, true)
	if _, _, err := LoadStream(interleaved, nil); err == nil || !strings.Contains(err.Error(), "not consecutive") {
		t.Errorf("interleaved groups: %v", err)
	}
	noWeights := writeResults(t, grouped, false)
	if _, _, err := LoadStream(noWeights, nil); err == nil || !strings.Contains(err.Error(), "--weights") {
		t.Errorf("no weights: %v", err)
	}
	if _, _, err := LoadStream(noWeights, map[string]float64{"accuracy": 1, "format": 0.1, "calibration": 0.2}); err != nil {
		t.Errorf("weights by flag: %v", err)
	}
	if _, _, err := LoadStream(filepath.Join(t.TempDir(), "missing.jsonl"), nil); err == nil {
		t.Error("missing file accepted")
	}
}
