package dataset

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
)

// Split holds row indices per split, each in ascending order (callers that
// want a shuffled file order apply Permutation).
type Split struct {
	Train, Dev, Test []int
}

// Sets returns the splits by their file names.
func (s Split) Sets() map[string][]int {
	return map[string][]int{"train": s.Train, "dev": s.Dev, "test": s.Test}
}

// SplitNames is the order train/dev/test are written and reported in.
var SplitNames = [3]string{"train", "dev", "test"}

// StratifiedSplit divides rows into train/dev/test so that every stratum
// (rows sharing a key, e.g. scenario+label) is split in the given ratios.
//
// Deterministic: the same keys, ratios and seed give the same split on every
// machine. Each stratum is shuffled with a seed derived from the run seed and
// the stratum key, so adding rows of one stratum never reshuffles another.
//
// Counts are decided by largest remainder at two levels: the split totals
// match round(N·ratio) by largest remainder over the whole set, and each
// stratum receives floor(n·ratio) per split plus its leftover rows assigned
// in order of the largest fractional parts while the split still has room.
// Consequently a small stratum cannot appear in every split: a stratum of one
// row normally lands in train (the largest ratio), but when many tiny strata
// compete, some of them go wholly to dev or test so that the global 70/15/15
// proportions still hold. Which tiny strata do is decided by a seeded hash of
// their keys, not by key order, so no family of names is systematically held
// out. Ratios are normalised; negative or NaN ratios count as zero, and all
// zero ratios put every row in train.
func StratifiedSplit(keys []string, ratios [3]float64, seed uint64) Split {
	r := normaliseRatios(ratios)
	strata := groupByKey(keys)
	names := slices.Sorted(maps.Keys(strata))
	n := len(keys)

	// Global targets by largest remainder.
	target := largestRemainder(n, r[:])

	type cand struct {
		stratum int
		split   int
		frac    float64
		tie     uint64
	}
	counts := make([][3]int, len(names))
	residual := make([]int, len(names))
	deficit := target
	var cands []cand
	seedStr := strconv.FormatUint(seed, 10)
	for si, name := range names {
		ns := len(strata[name])
		used := 0
		tie := HashKey64("split-tie", seedStr, name)
		for j := 0; j < 3; j++ {
			q := float64(ns) * r[j]
			f := int(math.Floor(q))
			counts[si][j] = f
			deficit[j] -= f
			used += f
			if fr := q - float64(f); fr > 0 {
				cands = append(cands, cand{si, j, fr, tie})
			}
		}
		residual[si] = ns - used
	}
	sort.SliceStable(cands, func(a, b int) bool {
		if cands[a].frac != cands[b].frac {
			return cands[a].frac > cands[b].frac
		}
		if cands[a].tie != cands[b].tie {
			return cands[a].tie < cands[b].tie
		}
		return cands[a].split < cands[b].split
	})
	for _, c := range cands {
		if residual[c.stratum] > 0 && deficit[c.split] > 0 {
			counts[c.stratum][c.split]++
			residual[c.stratum]--
			deficit[c.split]--
		}
	}
	// Rows left after the fractional pass (only when floating-point sums
	// drift) go to whichever split still has room.
	for si := range names {
		for j := 0; j < 3 && residual[si] > 0; j++ {
			for residual[si] > 0 && deficit[j] > 0 {
				counts[si][j]++
				residual[si]--
				deficit[j]--
			}
		}
		if residual[si] > 0 { // unreachable unless targets undercount; keep rows anyway
			counts[si][0] += residual[si]
			residual[si] = 0
		}
	}

	var out [3][]int
	for si, name := range names {
		idx := strata[name]
		perm := Permutation(len(idx), HashKey64("split", seedStr, name))
		pos := 0
		for j := 0; j < 3; j++ {
			for k := 0; k < counts[si][j]; k++ {
				out[j] = append(out[j], idx[perm[pos]])
				pos++
			}
		}
	}
	for j := range out {
		slices.Sort(out[j])
	}
	return Split{Train: out[0], Dev: out[1], Test: out[2]}
}

func normaliseRatios(ratios [3]float64) [3]float64 {
	var sum float64
	for i, v := range ratios {
		if !(v > 0) || math.IsInf(v, 0) {
			ratios[i] = 0
		}
		sum += ratios[i]
	}
	if sum == 0 {
		return [3]float64{1, 0, 0}
	}
	for i := range ratios {
		ratios[i] /= sum
	}
	return ratios
}

func groupByKey(keys []string) map[string][]int {
	m := map[string][]int{}
	for i, k := range keys {
		m[k] = append(m[k], i)
	}
	return m
}

// largestRemainder splits n into len(w) integer parts proportional to the
// (normalised) weights w, ties going to the lower index.
func largestRemainder(n int, w []float64) [3]int {
	var out [3]int
	alloc := Allocate(nil, w, n)
	copy(out[:], alloc)
	return out
}

// Allocate distributes target units over groups in proportion to weights,
// never giving group i more than sizes[i] (nil sizes means uncapped). Units a
// capped group cannot take are redistributed over the others in proportion
// to their weights; fractions are resolved by largest remainder with ties to
// the lower index. Groups with a non-positive weight receive nothing unless
// every weight is non-positive, in which case sizes act as weights. The
// result sums to min(target, total capacity of positively weighted groups).
func Allocate(sizes []int, weights []float64, target int) []int {
	k := len(weights)
	alloc := make([]int, k)
	if target <= 0 || k == 0 {
		return alloc
	}
	w := make([]float64, k)
	var any bool
	for i, v := range weights {
		if v > 0 && !math.IsInf(v, 0) {
			w[i] = v
			any = true
		}
	}
	if !any && sizes != nil {
		for i := range w {
			w[i] = float64(sizes[i])
		}
	}
	capOf := func(i int) int {
		if sizes == nil {
			return math.MaxInt
		}
		return max(sizes[i], 0)
	}
	active := make([]bool, k)
	for i := range w {
		active[i] = w[i] > 0 && capOf(i) > 0
	}
	remaining := target
	for {
		var sum float64
		for i := range w {
			if active[i] {
				sum += w[i]
			}
		}
		if sum == 0 || remaining == 0 {
			return alloc
		}
		capped := false
		for i := range w {
			if active[i] && float64(remaining)*w[i]/sum >= float64(capOf(i)) {
				alloc[i] = capOf(i)
				remaining -= alloc[i]
				active[i] = false
				capped = true
			}
		}
		if capped {
			continue
		}
		type rem struct {
			i    int
			frac float64
		}
		var rems []rem
		given := 0
		for i := range w {
			if !active[i] {
				continue
			}
			q := float64(remaining) * w[i] / sum
			f := int(math.Floor(q))
			alloc[i] = f
			given += f
			rems = append(rems, rem{i, q - float64(f)})
		}
		sort.SliceStable(rems, func(a, b int) bool { return rems[a].frac > rems[b].frac })
		for j := 0; given < remaining && j < len(rems); j++ {
			alloc[rems[j].i]++
			given++
		}
		return alloc
	}
}

// StratifiedSample picks up to target row indices so that labels follow the
// balance weights (label → share; nil or empty keeps the natural label
// proportions) and, within each label, strata (keys) keep their natural
// proportions. A label with too few rows gives its shortfall to the others,
// so the result has min(target, rows of balanced labels) rows; labels absent
// from a non-empty balance are not sampled. Rows within a stratum are drawn
// by a permutation seeded from seed and the stratum, so the sample is
// deterministic. The result is in ascending index order.
func StratifiedSample(keys []string, labels []string, target int, balance map[string]float64, seed uint64) []int {
	if len(keys) != len(labels) {
		panic("dataset.StratifiedSample: keys and labels differ in length")
	}
	byLabel := groupByKey(labels)
	labelNames := slices.Sorted(maps.Keys(byLabel))
	sizes := make([]int, len(labelNames))
	weights := make([]float64, len(labelNames))
	for i, l := range labelNames {
		sizes[i] = len(byLabel[l])
		if len(balance) == 0 {
			weights[i] = float64(sizes[i])
		} else {
			weights[i] = balance[l]
		}
	}
	if len(balance) > 0 {
		// Labels outside the balance must stay out even when every listed
		// weight is zero (Allocate would otherwise fall back to sizes).
		var pos bool
		for _, v := range weights {
			pos = pos || v > 0
		}
		if !pos {
			return nil
		}
	}
	quota := Allocate(sizes, weights, target)
	seedStr := strconv.FormatUint(seed, 10)
	var out []int
	for li, l := range labelNames {
		if quota[li] == 0 {
			continue
		}
		idx := byLabel[l]
		sub := make([]string, len(idx))
		for j, i := range idx {
			sub[j] = keys[i]
		}
		strata := groupByKey(sub)
		names := slices.Sorted(maps.Keys(strata))
		ss := make([]int, len(names))
		sw := make([]float64, len(names))
		for j, name := range names {
			ss[j] = len(strata[name])
			sw[j] = float64(ss[j])
		}
		per := Allocate(ss, sw, quota[li])
		for j, name := range names {
			members := strata[name]
			perm := Permutation(len(members), HashKey64("sample", seedStr, l, name))
			for _, p := range perm[:per[j]] {
				out = append(out, idx[members[p]])
			}
		}
	}
	slices.Sort(out)
	return out
}
