package metrics

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

// CI is a point estimate with a percentile bootstrap interval.
type CI struct {
	Point float64 `json:"point"`
	Lo    float64 `json:"lo"`
	Hi    float64 `json:"hi"`
}

// DefaultReps is the number of bootstrap resamples reports use.
const DefaultReps = 1000

// Stat computes a statistic over the rows named by idx (indices into the
// caller's data, with repeats). It must not keep idx: the slice is reused.
type Stat func(idx []int) float64

// Bootstrap returns the statistic on all n rows and its 95% percentile
// interval over reps resamples of n rows drawn with replacement.
func Bootstrap(n int, stat func(idx []int) float64, reps int, seed uint64) CI {
	return BootstrapMulti(n, []Stat{stat}, reps, seed)[0]
}

// BootstrapMulti evaluates several statistics on the same resamples, so
// their intervals come from one set of draws and the draws are paid once.
//
// Resample r is drawn from a PCG generator seeded with (seed, r): results
// depend only on the seed, not on how many workers ran. Workers each own
// one index buffer, so a resample allocates nothing.
func BootstrapMulti(n int, stats []Stat, reps int, seed uint64) []CI {
	return ClusterBootstrapMulti(Singletons(n), stats, reps, seed)
}

// ClusterMethod is the method text of every per-run interval that
// ClusterBootstrapMulti computes: reports, the scoreboard and the
// leaderboard say it next to their intervals.
const ClusterMethod = "percentile, cluster bootstrap over examples (each resample draws examples with replacement and keeps all rollouts of each)"

// Singletons returns n clusters of one row each: [[0] [1] … [n-1]].
func Singletons(n int) [][]int {
	flat := make([]int, n)
	out := make([][]int, n)
	for i := range flat {
		flat[i] = i
		out[i] = flat[i : i+1 : i+1]
	}
	return out
}

// Clusters groups row positions by key, clusters in order of first
// appearance and rows in their order: the clusters of
// ClusterBootstrapMulti for rows whose key is their example.
func Clusters[K comparable](n int, key func(i int) K) [][]int {
	at := make(map[K]int, n)
	var out [][]int
	for i := range n {
		k := key(i)
		c, ok := at[k]
		if !ok {
			c = len(out)
			at[k] = c
			out = append(out, nil)
		}
		out[c] = append(out[c], i)
	}
	return out
}

// Bootstrap statistics see row indices; ClusterBootstrapMulti resamples
// clusters of rows instead of rows. Rollouts of one example are not
// independent evidence — a deterministic policy repeats one answer — so
// per-run intervals resample examples and take every rollout of each
// drawn example (a cluster bootstrap). The statistic sees the drawn
// clusters' rows concatenated, so an index may repeat as in the plain
// bootstrap.
//
// Resample r draws len(clusters) cluster numbers from a PCG generator
// seeded with (seed, r), exactly as the row bootstrap draws row numbers:
// with one row per cluster (Singletons) the resamples, and so the
// intervals, are those of BootstrapMulti bit for bit. Results depend only
// on the seed, not on how many workers ran.
func ClusterBootstrapMulti(clusters [][]int, stats []Stat, reps int, seed uint64) []CI {
	return ClusterBootstrapVec(clusters, len(stats), func(idx []int, out []float64) {
		for s, f := range stats {
			out[s] = f(idx)
		}
	}, reps, seed)
}

// VecStat computes k statistics of one resample's rows into out (length
// k). Statistics that share a pass over the rows (the counts of a
// confusion matrix, a calibration's bins) pay for it once per resample,
// not once per statistic.
type VecStat func(idx []int, out []float64)

// ClusterBootstrapVec is ClusterBootstrapMulti for the k statistics stat
// computes together; the resamples, and so the intervals, are the same.
func ClusterBootstrapVec(clusters [][]int, k int, stat VecStat, reps int, seed uint64) []CI {
	n := len(clusters)
	out := make([]CI, k)
	rows := 0
	for _, c := range clusters {
		rows += len(c)
	}
	all := make([]int, 0, rows)
	for _, c := range clusters {
		all = append(all, c...)
	}
	slices.Sort(all) // the point estimate sees the rows in their order
	point := make([]float64, k)
	if k > 0 {
		stat(all, point)
	}
	for s := range out {
		out[s].Point = point[s]
		out[s].Lo, out[s].Hi = point[s], point[s]
	}
	if n == 0 || reps <= 0 || k == 0 {
		return out
	}
	vals := make([][]float64, k)
	for s := range vals {
		vals[s] = make([]float64, reps)
	}
	workers := min(runtime.GOMAXPROCS(0), reps)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			idx := make([]int, 0, rows)
			res := make([]float64, k)
			src := rand.NewPCG(0, 0)
			for r := w; r < reps; r += workers {
				src.Seed(seed, uint64(r)^0x9e3779b97f4a7c15)
				idx = idx[:0]
				for range n {
					// Multiply-shift maps a 64-bit draw onto [0, n) with
					// a bias below n/2^64, far beneath bootstrap noise.
					hi, _ := bits.Mul64(src.Uint64(), uint64(n))
					idx = append(idx, clusters[hi]...)
				}
				stat(idx, res)
				for s, v := range res {
					vals[s][r] = v
				}
			}
		}()
	}
	wg.Wait()
	for s := range out {
		v := vals[s]
		slices.Sort(v)
		out[s].Lo = Percentile(v, 2.5)
		out[s].Hi = Percentile(v, 97.5)
	}
	return out
}

// Percentile of sorted values with linear interpolation between closest
// ranks (numpy's default), p in [0, 100]. NaN for no values.
func Percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	pos := p / 100 * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	if lo >= len(sorted)-1 {
		return sorted[len(sorted)-1]
	}
	if lo < 0 {
		return sorted[0]
	}
	frac := pos - float64(lo)
	return sorted[lo] + frac*(sorted[lo+1]-sorted[lo])
}
