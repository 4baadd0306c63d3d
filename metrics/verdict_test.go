package metrics

import (
	"math"
	"strings"
	"testing"
)

func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		// Reference values: Wilson score intervals, z = 1.96.
		{2, 3, 0.2077, 0.9385},
		{2, 2, 0.3424, 1},
		{0, 4, 0, 0.4899},
		{5, 10, 0.2366, 0.7634},
	} {
		lo, hi, ok := Wilson(c.k, c.n)
		if !ok || math.Abs(lo-c.lo) > 1e-4 || math.Abs(hi-c.hi) > 1e-4 {
			t.Errorf("Wilson(%d, %d) = [%.4f, %.4f] %v, want [%.4f, %.4f]", c.k, c.n, lo, hi, ok, c.lo, c.hi)
		}
	}
	if _, _, ok := Wilson(0, 0); ok {
		t.Error("Wilson(0, 0) has an interval")
	}
}

func TestVerdictQuality(t *testing.T) {
	type obs struct {
		pred, truth bool
		id          string
	}
	for _, c := range []struct {
		name           string
		rows           []obs
		tp, fp, fn, tn int
		prec, rec      string
		fps            []string
	}{
		{name: "judge lenient on one unsolved row",
			rows: []obs{{true, true, "a"}, {true, true, "b"}, {false, false, "c"}, {true, false, "d"}},
			tp:   2, fp: 1, tn: 1, prec: "0.667 [0.208, 0.939] (2/3)", rec: "1.000 [0.342, 1.000] (2/2)", fps: []string{"d"}},
		{name: "misses and false positives",
			rows: []obs{{true, true, "a"}, {false, true, "b"}, {false, true, "c"}, {true, false, "d"}, {true, false, "e"}, {false, false, "f"}},
			tp:   1, fp: 2, fn: 2, tn: 1, prec: "0.333 [0.061, 0.792] (1/3)", rec: "0.333 [0.061, 0.792] (1/3)", fps: []string{"d", "e"}},
		{name: "all-negative source: precision undefined",
			rows: []obs{{false, true, "a"}, {false, false, "b"}},
			fn:   1, tn: 1, prec: "n/a (0/0)", rec: "0.000 [0.000, 0.793] (0/1)"},
		{name: "nothing solved: recall undefined",
			rows: []obs{{true, false, "a"}, {false, false, "b"}},
			fp:   1, tn: 1, prec: "0.000 [0.000, 0.793] (0/1)", rec: "n/a (0/0)", fps: []string{"a"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var q VerdictQuality
			for _, r := range c.rows {
				q.Add(r.pred, r.truth, r.id)
			}
			if q.TP != c.tp || q.FP != c.fp || q.FN != c.fn || q.TN != c.tn {
				t.Errorf("counts %d/%d/%d/%d, want %d/%d/%d/%d", q.TP, q.FP, q.FN, q.TN, c.tp, c.fp, c.fn, c.tn)
			}
			if q.Precision.String() != c.prec || q.Recall.String() != c.rec {
				t.Errorf("precision %s, recall %s; want %s, %s", q.Precision, q.Recall, c.prec, c.rec)
			}
			if strings.Join(q.FalsePositives, ",") != strings.Join(c.fps, ",") {
				t.Errorf("false positives %v, want %v", q.FalsePositives, c.fps)
			}
		})
	}
	var q VerdictQuality
	for i := range 8 {
		q.Add(true, false, string(rune('a'+i)))
	}
	if len(q.FalsePositives) != MaxExamples || q.FP != 8 {
		t.Errorf("false positives named %v of %d", q.FalsePositives, q.FP)
	}
}
