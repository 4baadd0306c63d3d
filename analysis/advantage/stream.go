package advantage

import (
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/ingest"
	"github.com/svbench/svbench/metrics"
)

// Source yields a batch's groups in a fixed order, one at a time; it must
// yield the same groups in the same order each time it is called (a sorted
// file re-read, a seeded generator). A group must arrive whole.
type Source func(yield func(Group) error) error

// AnalyseStream computes the same report as Analyse without holding the
// batch: groups are read three times from src (twice for the batch
// statistics grpo_batch_std and GDPO normalise by, per batch and under the
// base weights and every ±20% perturbation; once for everything else), and
// only what the Spearman correlations need — each scheme's advantage and
// each component per rollout, as flat arrays — grows with the batch.
func AnalyseStream(names []string, weights []float64, src Source) (*Report, error) {
	if err := checkShape(names, weights); err != nil {
		return nil, err
	}
	K := len(names)
	conv := TRL
	// Weight sets: 0 is the base; 1+2k and 2+2k scale component k by 0.8
	// and 1.2.
	sets := [][]float64{weights}
	for k := range K {
		for _, f := range []float64{0.8, 1.2} {
			w := slices.Clone(weights)
			w[k] *= f
			sets = append(sets, w)
		}
	}
	// Passes 1 and 2: each batch's means, then spreads, per weight set.
	// One-rollout groups count: a trainer's batch holds them.
	acc := make([]map[string]*batchAcc, len(sets))
	for s := range sets {
		acc[s] = map[string]*batchAcc{}
	}
	n, singletons := 0, 0
	err := src(func(g Group) error {
		if err := checkGroup(g, names); err != nil {
			return err
		}
		z := conv.zScores(g, K)
		for s, w := range sets {
			a := acc[s][g.Batch]
			if a == nil {
				a = &batchAcc{}
				acc[s][g.Batch] = a
			}
			a.addSum(conv.batchValues(g, w, z))
		}
		if len(g.Rollouts) < 2 {
			singletons++
		} else {
			n += len(g.Rollouts)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("no group has two or more rollouts (%d singleton groups): advantages need several rollouts per prompt (eval -r > 1, or a trainer's rows with problem_id)", singletons)
	}
	for s := range sets {
		for _, a := range acc[s] {
			a.closeSums()
		}
	}
	err = src(func(g Group) error {
		z := conv.zScores(g, K)
		for s, w := range sets {
			acc[s][g.Batch].addSq(conv.batchValues(g, w, z))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	bm := make([]map[string]batchMoments, len(sets))
	for s := range sets {
		bm[s] = map[string]batchMoments{}
		for b, a := range acc[s] {
			bm[s][b] = a.moments(conv)
		}
	}

	// Pass 3: every figure.
	rep := &Report{Names: names, Weights: weights, Convention: conv.Name, Schemes: map[string]SchemeReport{}, Deciders: map[string]int{}}
	zv := ZeroVarianceReport{Components: map[string]float64{}}
	zeroComp := make([]int, K)
	zeroReward, rewardOnly := 0, 0
	flat := map[string][]float64{}
	for _, s := range Schemes {
		flat[s] = make([]float64, 0, n)
	}
	comps := make([][]float64, K)
	for k := range comps {
		comps[k] = make([]float64, 0, n)
	}
	collapsed := map[string]int{}
	nonzero := map[string]int{}
	flipped := map[string][]int{}
	for _, s := range Schemes {
		flipped[s] = make([]int, K)
	}
	rec := newRecordedAcc()
	var base, pert [numKinds][]float64
	err = src(func(g Group) error {
		z := conv.zScores(g, K)
		conv.groupAdvantages(g, sets[0], z, bm[0][g.Batch], &base)
		rec.add(g, weights, K, &base)
		for _, r := range g.Rollouts {
			if allNaN(r.Components) {
				rep.Unscored++
			}
		}
		if len(g.Rollouts) < 2 {
			rep.Singletons++
			return nil
		}
		rep.Groups++
		rep.Rollouts += len(g.Rollouts)
		// Zero variance, per component and in the sum: a constant value,
		// or fewer than two scored ones, gives no spread to normalise.
		col := make([]float64, len(g.Rollouts))
		varies := false
		for k := range K {
			for i, r := range g.Rollouts {
				col[i] = r.Components[k]
			}
			if !hasSpread(col) {
				zeroComp[k]++
			} else {
				varies = true
			}
		}
		for i, r := range g.Rollouts {
			col[i] = reward(weights, r.Components)
		}
		if !hasSpread(col) {
			zeroReward++
			if varies {
				rewardOnly++
			}
		}
		for _, s := range Schemes {
			a := base[schemeKind[s]]
			flat[s] = append(flat[s], a...)
			if allZero(a) {
				collapsed[s]++
			}
			for _, v := range a {
				if math.Abs(v) > 1e-12 {
					nonzero[s]++
				}
			}
		}
		for _, r := range g.Rollouts {
			for k := range K {
				comps[k] = append(comps[k], r.Components[k])
			}
		}
		// Sign flips under each component's ±20%: a rollout counts once
		// per component, whichever of the two perturbations flips it.
		for k := range K {
			flips := map[string][]bool{}
			for _, sc := range Schemes {
				flips[sc] = make([]bool, len(g.Rollouts))
			}
			for j := range 2 {
				s := 1 + 2*k + j
				conv.groupAdvantages(g, sets[s], z, bm[s][g.Batch], &pert)
				for _, sc := range Schemes {
					for i, v := range pert[schemeKind[sc]] {
						b := base[schemeKind[sc]][i]
						if b*v < 0 || (math.Abs(b) > 1e-12) != (math.Abs(v) > 1e-12) {
							flips[sc][i] = true
						}
					}
				}
			}
			for _, sc := range Schemes {
				for i, f := range flips[sc] {
					if f && math.Abs(base[schemeKind[sc]][i]) > 1e-12 {
						flipped[sc][k]++
					}
				}
			}
		}
		// Deciders: the component whose weighted deviation from its group
		// mean agrees with the GRPO advantage's sign and is largest.
		means := make([]float64, K)
		for k := range K {
			for i, r := range g.Rollouts {
				col[i] = r.Components[k]
			}
			means[k], _, _ = conv.moments(col)
		}
		for i, r := range g.Rollouts {
			a := base[kGRPO][i]
			if math.Abs(a) < 1e-12 {
				continue
			}
			best, bestV := -1, 0.0
			for k := range K {
				v := weights[k] * (r.Components[k] - means[k])
				if !math.IsNaN(v) && v*a > 0 && math.Abs(v) > bestV {
					best, bestV = k, math.Abs(v)
				}
			}
			if best >= 0 {
				rep.Deciders[names[best]]++
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	groups := float64(rep.Groups)
	zv.Reward, zv.RewardOnly = float64(zeroReward)/groups, float64(rewardOnly)/groups
	for k, name := range names {
		zv.Components[name] = float64(zeroComp[k]) / groups
	}
	rep.ZeroVariance = zv
	compRanks := make([][]float64, K)
	for k := range K {
		if !slices.ContainsFunc(comps[k], math.IsNaN) {
			compRanks[k] = metrics.Ranks(comps[k])
		}
	}
	for _, s := range Schemes {
		sr := SchemeReport{Spearman: map[string]float64{}, Sensitivity: map[string]float64{}}
		sr.CollapsedGroups = float64(collapsed[s]) / groups
		advRanks := metrics.Ranks(flat[s])
		for k, name := range names {
			if compRanks[k] != nil {
				sr.Spearman[name] = pearson(advRanks, compRanks[k])
			} else {
				sr.Spearman[name] = spearmanScored(flat[s], comps[k])
			}
			if nonzero[s] > 0 {
				sr.Sensitivity[name] = float64(flipped[s][k]) / float64(nonzero[s])
			} else {
				sr.Sensitivity[name] = 0
			}
		}
		flat[s] = nil
		rep.Schemes[s] = sr
	}
	rep.Recorded = rec.report()
	return rep, nil
}

// spearmanScored is Spearman over the rollouts that scored the component.
func spearmanScored(adv, comp []float64) float64 {
	var x, y []float64
	for i, c := range comp {
		if !math.IsNaN(c) {
			x, y = append(x, adv[i]), append(y, c)
		}
	}
	return Spearman(x, y)
}

// hasSpread reports whether at least two scored values differ beyond float
// noise (the rule every convention's std applies).
func hasSpread(xs []float64) bool {
	_, sd, n := TRL.moments(xs)
	return n >= 2 && sd > 0
}

func allNaN(xs []float64) bool {
	for _, x := range xs {
		if !math.IsNaN(x) {
			return false
		}
	}
	return true
}

// LoadStream prepares a streamed analysis of a run directory or results
// file (svbench's or a trainer's) without keeping its rows: one pass learns
// the component names, the weights and checks that every group's rows are
// consecutive (a trainer writes a step's problems that way); the returned
// Source re-reads the file for each of AnalyseStream's passes. Weights come
// from weights or the rows; fitting them needs every row in memory, so it
// is refused here (use Load).
func LoadStream(path string, weights map[string]float64) (*Loaded, Source, error) {
	path = artifact.ResultsPath(path)
	trainer, err := ingest.IsTrainerFile(path)
	if err != nil {
		return nil, nil, err
	}
	ld := &Loaded{GroupedBy: "example"}
	if trainer {
		ld.GroupedBy = "step+problem_id"
	}
	seen := map[string]bool{}
	done := map[uint64]struct{}{} // hashes of finished groups: a few bytes per group
	cur, rows := "", 0
	var regroup string
	scored := 0
	rowWeights, skipped, err := eachCompact(path, trainer, func(c compact) error {
		rows++
		if len(c.comps) > 0 {
			scored++
		}
		for k := range c.comps {
			seen[k] = true
		}
		if rows > 1 && c.group != cur {
			done[keyHash(cur)] = struct{}{}
			if _, again := done[keyHash(c.group)]; again && regroup == "" {
				regroup = c.group
			}
		}
		cur = c.group
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if scored == 0 {
		return nil, nil, fmt.Errorf("%s: no row carries reward components (%d rows skipped: errors or unverifiable)", path, skipped)
	}
	if regroup != "" {
		return nil, nil, fmt.Errorf("%s: the rows of group %q are not consecutive (it reappears after other groups), so the file cannot be streamed: sort it by group, or analyse it in memory (without --stream)", path, regroup)
	}
	ld.Skipped = skipped
	names := slices.Sorted(maps.Keys(seen))
	switch {
	case weights != nil:
		ld.WeightsFrom = "flag"
	case rowWeights != nil:
		weights, ld.WeightsFrom = rowWeights, "rows"
	default:
		return nil, nil, fmt.Errorf("%s: the rows record no weights; pass --weights name=w,… (fitting them from the recorded rewards needs every row in memory: drop --stream)", path)
	}
	in := &Input{Names: names}
	for _, n := range names {
		w, ok := weights[n]
		if !ok {
			return nil, nil, fmt.Errorf("no weight for component %q (weights known: %v); pass --weights", n, slices.Sorted(maps.Keys(weights)))
		}
		in.Weights = append(in.Weights, w)
	}
	ld.Input = in
	src := func(yield func(Group) error) error {
		var g Group
		flush := func() error {
			if len(g.Rollouts) == 0 {
				return nil
			}
			err := yield(g)
			g = Group{}
			return err
		}
		_, _, err := eachCompact(path, trainer, func(c compact) error {
			if c.group != g.Key {
				if err := flush(); err != nil {
					return err
				}
				g.Key, g.Batch = c.group, c.batch
			}
			g.Rollouts = append(g.Rollouts, Rollout{Components: componentsOf(c, names), Recorded: c.recorded})
			return nil
		})
		if err != nil {
			return err
		}
		return flush()
	}
	return ld, src, nil
}

func keyHash(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}
