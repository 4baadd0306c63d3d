package metrics

import "math"

// PassAtK is the unbiased estimator of the chance that at least one of k
// samples drawn without replacement from n, of which c pass, passes:
// 1 - C(n-c, k)/C(n, k) (Chen et al., 2021, the estimator HumanEval and
// CWEval report). It is NaN when k is outside 1..n.
func PassAtK(n, c, k int) float64 {
	if k < 1 || k > n || c < 0 || c > n {
		return math.NaN()
	}
	return 1 - comboRatio(n-c, n, k)
}

// PassAtKs are the k pass@k is reported at for n samples: 1, 2, 4, … and n.
func PassAtKs(n int) []int {
	var ks []int
	for k := 1; k < n; k *= 2 {
		ks = append(ks, k)
	}
	return append(ks, n)
}

// comboRatio is C(a, k)/C(n, k) computed as a product to stay in range.
func comboRatio(a, n, k int) float64 {
	if a < k {
		return 0
	}
	r := 1.0
	for i := range k {
		r *= float64(a-i) / float64(n-i)
	}
	return r
}
