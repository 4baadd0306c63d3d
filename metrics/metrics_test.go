package metrics

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"
)

const eps = 1e-12

func near(a, b float64) bool { return math.Abs(a-b) <= eps }

func TestConfusion(t *testing.T) {
	tests := []struct {
		name                                     string
		c                                        Confusion
		tpr, fpr, fnr, prec, f1, acc, abst, cost float64
		cwa                                      float64
	}{
		{"mixed", Confusion{TP: 3, TN: 4, FP: 1, FN: 2, Abstain: 2},
			0.6, 0.2, 0.4, 0.75, 2 * 0.75 * 0.6 / 1.35, 0.7, 2.0 / 12, 21, 0.79},
		// The reference generator's conventions: FNR = 1 − TPR, and
		// cost-weighted accuracy 1 when nothing was decided.
		{"empty", Confusion{}, 0, 0, 1, 0, 0, 0, 0, 0, 1},
		{"all abstain", Confusion{Abstain: 3}, 0, 0, 1, 0, 0, 0, 1, 0, 1},
		{"all one class, all right", Confusion{TN: 3}, 0, 0, 1, 0, 0, 1, 0, 0, 1},
		{"only false alarms", Confusion{FP: 2}, 0, 1, 1, 0, 0, 0, 0, 2, 0.9},
		{"no positives predicted", Confusion{TN: 2, FN: 1}, 0, 0, 1, 0, 0, 2.0 / 3, 0, 10, 1 - 10.0/30},
		{"perfect", Confusion{TP: 2, TN: 2}, 1, 0, 0, 1, 1, 1, 0, 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			got := []float64{c.TPR(), c.FPR(), c.FNR(), c.Precision(), c.F1(), c.Accuracy(), c.AbstainRate(),
				ReferenceCost.Total(c), ReferenceCost.WeightedAccuracy(c)}
			want := []float64{tc.tpr, tc.fpr, tc.fnr, tc.prec, tc.f1, tc.acc, tc.abst, tc.cost, tc.cwa}
			names := []string{"tpr", "fpr", "fnr", "precision", "f1", "accuracy", "abstain_rate", "cost", "cwa"}
			for i := range got {
				if !near(got[i], want[i]) {
					t.Errorf("%s = %v, want %v", names[i], got[i], want[i])
				}
			}
		})
	}
}

func TestClassify(t *testing.T) {
	var c Confusion
	c.Add(Classify(true, true, false))
	c.Add(Classify(true, false, false))
	c.Add(Classify(false, true, false))
	c.Add(Classify(false, false, false))
	c.Add(Classify(true, true, true))
	if c != (Confusion{TP: 1, FP: 1, FN: 1, TN: 1, Abstain: 1}) {
		t.Fatalf("got %+v", c)
	}
}

func TestBinOf(t *testing.T) {
	tests := []struct {
		c    float64
		want int
	}{
		{0, 0}, {0.0999, 0}, {0.1, 1}, {0.2, 2}, {0.3, 3}, {0.6, 6}, {0.7, 7}, {0.8, 8},
		{0.9, 9}, {0.99, 9}, {1, 9}, {-1, 0}, {2, 9}, {math.NaN(), 0},
	}
	for _, tc := range tests {
		if got := BinOf(tc.c); got != tc.want {
			t.Errorf("BinOf(%v) = %d, want %d", tc.c, got, tc.want)
		}
	}
	// Every edge b/10 opens bin b, and the value just below it is in b-1.
	for b := 1; b < NumBins; b++ {
		e := float64(b) / NumBins
		if BinOf(e) != b || BinOf(math.Nextafter(e, 0)) != b-1 {
			t.Errorf("edge %v: bins %d, %d", e, BinOf(e), BinOf(math.Nextafter(e, 0)))
		}
	}
}

func TestCalibration(t *testing.T) {
	var c Calibration
	if c.ECE() != 0 || c.Brier() != 0 {
		t.Fatal("empty calibration must be 0")
	}
	c.Add(0.95, true)
	c.Add(0.95, false)
	c.Add(0.3, true)
	c.Add(0.05, false)
	// bins: 9 → acc .5 conf .95 (gap .45, weight 2/4); 3 → gap .7; 0 → gap .05.
	if want := 0.5*0.45 + 0.25*0.7 + 0.25*0.05; !near(c.ECE(), want) {
		t.Errorf("ECE = %v, want %v", c.ECE(), want)
	}
	if want := (0.0025 + 0.9025 + 0.49 + 0.0025) / 4; !near(c.Brier(), want) {
		t.Errorf("Brier = %v, want %v", c.Brier(), want)
	}
	bins := c.Bins()
	if len(bins) != NumBins || bins[9].Count != 2 || !near(bins[9].Accuracy, 0.5) ||
		!near(bins[9].MeanConfidence, 0.95) || bins[5].Count != 0 || bins[3].Lo != 0.3 {
		t.Errorf("bins = %+v", bins)
	}
}

func TestRiskCoverage(t *testing.T) {
	type pred struct {
		c  float64
		ok bool
	}
	tests := []struct {
		name  string
		preds []pred
		want  float64
	}{
		{"empty", nil, 0},
		{"confident right, unsure wrong", []pred{{1, true}, {0.5, false}}, 0.125},
		// Nobody reaches 0.51: the curve drops to (coverage 0, risk 0).
		{"one wrong at 0.5", []pred{{0.5, false}}, 0.5},
		{"all right", []pred{{0.2, true}, {0.9, true}}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var r RiskCoverage
			for _, p := range tc.preds {
				r.Add(p.c, p.ok)
			}
			if got := r.AURC(); !near(got, tc.want) {
				t.Errorf("AURC = %v, want %v", got, tc.want)
			}
			pts := r.Curve()
			if len(pts) != Thresholds || pts[100].Threshold != 1 || pts[37].Threshold != 0.37 {
				t.Errorf("curve thresholds wrong: %+v", pts[:2])
			}
		})
	}
}

func TestTopThresholdExact(t *testing.T) {
	for i := range Thresholds {
		c := float64(i) / 100
		if got := topThreshold(c); got != i {
			t.Errorf("topThreshold(%v) = %d", c, got)
		}
		if i > 0 {
			if got := topThreshold(math.Nextafter(c, 0)); got != i-1 {
				t.Errorf("topThreshold(just below %v) = %d", c, got)
			}
		}
	}
	if topThreshold(-0.1) != -1 || topThreshold(math.NaN()) != -1 || topThreshold(3) != 100 {
		t.Error("out-of-range confidences")
	}
}

func TestPercentile(t *testing.T) {
	v := []float64{1, 2, 3, 4}
	for _, tc := range []struct{ p, want float64 }{{0, 1}, {50, 2.5}, {2.5, 1.075}, {100, 4}, {97.5, 3.925}} {
		if got := Percentile(v, tc.p); !near(got, tc.want) {
			t.Errorf("Percentile(%v) = %v, want %v", tc.p, got, tc.want)
		}
	}
	if !math.IsNaN(Percentile(nil, 50)) {
		t.Error("empty percentile must be NaN")
	}
}

func mean(data []float64) func(idx []int) float64 {
	return func(idx []int) float64 {
		s := 0.0
		for _, i := range idx {
			s += data[i]
		}
		return Div(s, float64(len(idx)))
	}
}

func TestBootstrap(t *testing.T) {
	data := make([]float64, 200)
	for i := range data {
		if i%4 != 0 {
			data[i] = 1 // mean 0.75
		}
	}
	a := Bootstrap(len(data), mean(data), 500, 7)
	b := Bootstrap(len(data), mean(data), 500, 7)
	if a != b {
		t.Fatalf("same seed, different CI: %+v vs %+v", a, b)
	}
	if !near(a.Point, 0.75) || !(a.Lo < a.Point && a.Point < a.Hi) {
		t.Fatalf("CI %+v does not bracket the point", a)
	}
	// Binomial standard error sqrt(.75·.25/200) ≈ 0.0306: the 95% interval
	// half-width should be near 1.96·0.0306 ≈ 0.06.
	if w := (a.Hi - a.Lo) / 2; w < 0.04 || w > 0.08 {
		t.Errorf("half-width %v far from the binomial 0.06", w)
	}
	if c := Bootstrap(len(data), mean(data), 500, 8); c == a {
		t.Error("different seeds gave identical intervals")
	}
	constant := []float64{0.3, 0.3, 0.3}
	if c := Bootstrap(3, mean(constant), 100, 1); !near(c.Lo, 0.3) || !near(c.Hi, 0.3) {
		t.Errorf("constant data CI %+v", c)
	}
	if c := Bootstrap(0, mean(nil), 100, 1); c != (CI{}) {
		t.Errorf("empty CI %+v", c)
	}
	multi := BootstrapMulti(len(data), []Stat{mean(data), mean(data)}, 500, 7)
	if multi[0] != a || multi[1] != a {
		t.Errorf("BootstrapMulti differs from Bootstrap: %+v vs %+v", multi, a)
	}
}

func TestSetPRF(t *testing.T) {
	got := SetPRF([]string{"a", "b", "c", "a"}, []string{"b", "c", "d", "e"})
	want := PRF{TP: 2, FP: 1, FN: 2, Precision: 2.0 / 3, Recall: 0.5, F1: 4.0 / 7}
	if !prfNear(got, want) {
		t.Errorf("SetPRF = %+v, want %+v", got, want)
	}
	if got := SetPRF(nil, nil); got != (PRF{}) {
		t.Errorf("empty SetPRF = %+v", got)
	}
	w := WeightedSetPRF([]Item{{"a", 0.3}, {"b", 1}}, []Item{{"b", 0.6}, {"c", 1}})
	// TP takes the gold weight of b (0.6), FP the predicted weight of a.
	wantW := NewPRF(0.6, 0.3, 1)
	if !prfNear(w, wantW) || !near(w.Precision, 2.0/3) || !near(w.Recall, 0.375) || !near(w.F1, 0.48) {
		t.Errorf("WeightedSetPRF = %+v", w)
	}
	// Reference vector: one low finding out of an oracle of weight 1.5.
	ref := WeightedSetPRF([]Item{{"k/m", 0.3}}, []Item{{"opa/x", 0.6}, {"k/r", 0.3}, {"k/n", 0.3}, {"k/m", 0.3}})
	if math.Abs(ref.Recall-0.2) > 1e-9 || ref.Precision != 1 || math.Abs(ref.F1-1.0/3) > 1e-9 {
		t.Errorf("reference case = %+v", ref)
	}
	pooled := NewPRF(1, 0, 1).Add(NewPRF(1, 2, 0))
	if !prfNear(pooled, NewPRF(2, 2, 1)) {
		t.Errorf("micro pooling = %+v", pooled)
	}
}

func prfNear(a, b PRF) bool {
	return near(a.TP, b.TP) && near(a.FP, b.FP) && near(a.FN, b.FN) &&
		near(a.Precision, b.Precision) && near(a.Recall, b.Recall) && near(a.F1, b.F1)
}

func BenchmarkBootstrap(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		data := make([]float64, n)
		for i := range data {
			data[i] = float64(i % 3 % 2)
		}
		b.Run("n="+itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Bootstrap(n, mean(data), 200, 1)
			}
		})
	}
}

// naiveBootstrap is the straightforward alternative BenchmarkBootstrap is
// compared with: a fresh slice and math/rand/v2 IntN per resample, one core.
func naiveBootstrap(n int, stat func([]int) float64, reps int, seed uint64) []float64 {
	rng := rand.New(rand.NewPCG(seed, seed))
	vals := make([]float64, reps)
	for r := range vals {
		idx := make([]int, n)
		for i := range idx {
			idx[i] = rng.IntN(n)
		}
		vals[r] = stat(idx)
	}
	slices.Sort(vals)
	return vals
}

func BenchmarkBootstrapNaive(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		data := make([]float64, n)
		b.Run("n="+itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				naiveBootstrap(n, mean(data), 200, 1)
			}
		})
	}
}

func itoa(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return itoa(n/1000) + "k"
	}
	s := ""
	for ; n > 0; n /= 10 {
		s = string(rune('0'+n%10)) + s
	}
	return s
}

func TestRanks(t *testing.T) {
	got := Ranks([]float64{3, 1, 3, 2, 3})
	want := []float64{4, 1, 4, 2, 4}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Ranks = %v, want %v", got, want)
		}
	}
	if len(Ranks(nil)) != 0 {
		t.Error("Ranks(nil) not empty")
	}
}

// rowBootstrap is the row bootstrap as it was before intervals resampled
// examples, kept here so the test can prove one rollout per example still
// gives the same intervals bit for bit.
func rowBootstrap(n int, stat Stat, reps int, seed uint64) CI {
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	out := CI{Point: stat(all)}
	vals := make([]float64, reps)
	idx := make([]int, n)
	src := rand.NewPCG(0, 0)
	for r := range reps {
		src.Seed(seed, uint64(r)^0x9e3779b97f4a7c15)
		for i := range idx {
			hi, _ := bits.Mul64(src.Uint64(), uint64(n))
			idx[i] = int(hi)
		}
		vals[r] = stat(idx)
	}
	slices.Sort(vals)
	out.Lo, out.Hi = Percentile(vals, 2.5), Percentile(vals, 97.5)
	return out
}

func TestClusterBootstrap(t *testing.T) {
	// 50 examples, a deterministic policy right on 30 of them.
	one := make([]float64, 50)
	for i := range one {
		if i%5 < 3 {
			one[i] = 1
		}
	}
	r1 := BootstrapMulti(len(one), []Stat{mean(one)}, 1000, 42)[0]
	if old := rowBootstrap(len(one), mean(one), 1000, 42); r1 != old {
		t.Fatalf("one rollout per example: %+v, the row bootstrap gave %+v (must be identical)", r1, old)
	}
	// The same answers four times (-r 4), rollout-major as a runner may
	// write them: example e's rollout k is row k·50+e.
	four := make([]float64, 0, 4*len(one))
	ex := make([]int, 0, 4*len(one))
	for range 4 {
		for e, v := range one {
			four, ex = append(four, v), append(ex, e)
		}
	}
	cl := Clusters(len(four), func(i int) int { return ex[i] })
	if len(cl) != len(one) {
		t.Fatalf("%d clusters, want %d", len(cl), len(one))
	}
	r4 := ClusterBootstrapMulti(cl, []Stat{mean(four)}, 1000, 42)[0]
	if r4 != r1 {
		t.Errorf("four identical rollouts per example: %+v, one rollout: %+v; identical answers carry no more evidence", r4, r1)
	}
	// The row bootstrap's interval is about half as wide: what the
	// cluster bootstrap exists to avoid.
	rows4 := BootstrapMulti(len(four), []Stat{mean(four)}, 1000, 42)[0]
	if w1, w4 := r1.Hi-r1.Lo, rows4.Hi-rows4.Lo; w4 > 0.7*w1 {
		t.Errorf("row bootstrap width %v vs %v: expected the row bootstrap to understate", w4, w1)
	}
	if c := ClusterBootstrapMulti(nil, []Stat{mean(nil)}, 10, 1)[0]; c != (CI{}) {
		t.Errorf("no clusters: %+v", c)
	}
	if got := Singletons(3); len(got) != 3 || got[2][0] != 2 || cap(got[0]) != 1 {
		t.Errorf("Singletons(3) = %v", got)
	}
}
