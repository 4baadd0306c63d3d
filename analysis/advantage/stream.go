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
	conv := TRL
	sets := weightSets(weights)
	bm, n, err := streamBatchMoments(src, names, sets, conv)
	if err != nil {
		return nil, err
	}
	f := newStreamFigures(names, weights, sets, bm, conv, n)
	if err := src(f.group); err != nil {
		return nil, err
	}
	return f.report(), nil
}

// weightSets are the base weights (0) and every component's ±20%
// perturbation: 1+2k and 2+2k scale component k by 0.8 and 1.2.
func weightSets(weights []float64) [][]float64 {
	sets := [][]float64{weights}
	for k := range weights {
		for _, f := range []float64{0.8, 1.2} {
			w := slices.Clone(weights)
			w[k] *= f
			sets = append(sets, w)
		}
	}
	return sets
}

// streamBatchMoments reads src twice: each batch's means, then spreads,
// per weight set. One-rollout groups count: a trainer's batch holds them.
// n is how many rollouts belong to groups of two or more.
func streamBatchMoments(src Source, names []string, sets [][]float64, conv Convention) (bm []map[string]batchMoments, n int, err error) {
	K := len(names)
	acc := make([]map[string]*batchAcc, len(sets))
	for s := range sets {
		acc[s] = map[string]*batchAcc{}
	}
	singletons := 0
	err = src(func(g Group) error {
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
		return nil, 0, err
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("no group has two or more rollouts (%d singleton groups): advantages need several rollouts per prompt (eval -r > 1, or a trainer's rows with problem_id)", singletons)
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
		return nil, 0, err
	}
	bm = make([]map[string]batchMoments, len(sets))
	for s := range sets {
		bm[s] = map[string]batchMoments{}
		for b, a := range acc[s] {
			bm[s][b] = a.moments(conv)
		}
	}
	return bm, n, nil
}

// streamFigures is AnalyseStream's third pass: every figure, one group at
// a time.
type streamFigures struct {
	names   []string
	weights []float64
	sets    [][]float64
	bm      []map[string]batchMoments
	conv    Convention

	rep                    *Report
	zeroComp               []int
	zeroReward, rewardOnly int
	flat                   map[string][]float64 // each scheme's advantages, rollout by rollout
	comps                  [][]float64          // each component, rollout by rollout
	collapsed, nonzero     map[string]int
	flipped                map[string][]int
	rec                    *recordedAcc
	base, pert             [numKinds][]float64
}

func newStreamFigures(names []string, weights []float64, sets [][]float64, bm []map[string]batchMoments, conv Convention, n int) *streamFigures {
	K := len(names)
	f := &streamFigures{names: names, weights: weights, sets: sets, bm: bm, conv: conv,
		rep:      &Report{Names: names, Weights: weights, Convention: conv.Name, Schemes: map[string]SchemeReport{}, Deciders: map[string]int{}},
		zeroComp: make([]int, K), flat: map[string][]float64{}, comps: make([][]float64, K),
		collapsed: map[string]int{}, nonzero: map[string]int{}, flipped: map[string][]int{}, rec: newRecordedAcc()}
	for _, s := range Schemes {
		f.flat[s] = make([]float64, 0, n)
		f.flipped[s] = make([]int, K)
	}
	for k := range f.comps {
		f.comps[k] = make([]float64, 0, n)
	}
	return f
}

func (f *streamFigures) group(g Group) error {
	K := len(f.names)
	z := f.conv.zScores(g, K)
	f.conv.groupAdvantages(g, f.sets[0], z, f.bm[0][g.Batch], &f.base)
	f.rec.add(g, f.weights, K, &f.base)
	for _, r := range g.Rollouts {
		if allNaN(r.Components) {
			f.rep.Unscored++
		}
	}
	if len(g.Rollouts) < 2 {
		f.rep.Singletons++
		return nil
	}
	f.rep.Groups++
	f.rep.Rollouts += len(g.Rollouts)
	f.zeroVariance(g)
	for _, s := range Schemes {
		a := f.base[schemeKind[s]]
		f.flat[s] = append(f.flat[s], a...)
		if allZero(a) {
			f.collapsed[s]++
		}
		for _, v := range a {
			if math.Abs(v) > 1e-12 {
				f.nonzero[s]++
			}
		}
	}
	for _, r := range g.Rollouts {
		for k := range K {
			f.comps[k] = append(f.comps[k], r.Components[k])
		}
	}
	f.signFlips(g, z)
	f.deciders(g)
	return nil
}

// zeroVariance counts, per component and in the sum, groups whose value is
// constant or scored fewer than twice: no spread to normalise.
func (f *streamFigures) zeroVariance(g Group) {
	col := make([]float64, len(g.Rollouts))
	varies := false
	for k := range f.names {
		for i, r := range g.Rollouts {
			col[i] = r.Components[k]
		}
		if !hasSpread(col) {
			f.zeroComp[k]++
		} else {
			varies = true
		}
	}
	for i, r := range g.Rollouts {
		col[i] = reward(f.weights, r.Components)
	}
	if !hasSpread(col) {
		f.zeroReward++
		if varies {
			f.rewardOnly++
		}
	}
}

// signFlips counts sign flips under each component's ±20%: a rollout counts
// once per component, whichever of the two perturbations flips it.
func (f *streamFigures) signFlips(g Group, z [][]float64) {
	for k := range f.names {
		flips := map[string][]bool{}
		for _, sc := range Schemes {
			flips[sc] = make([]bool, len(g.Rollouts))
		}
		for j := range 2 {
			s := 1 + 2*k + j
			f.conv.groupAdvantages(g, f.sets[s], z, f.bm[s][g.Batch], &f.pert)
			for _, sc := range Schemes {
				for i, v := range f.pert[schemeKind[sc]] {
					b := f.base[schemeKind[sc]][i]
					if b*v < 0 || (math.Abs(b) > 1e-12) != (math.Abs(v) > 1e-12) {
						flips[sc][i] = true
					}
				}
			}
		}
		for _, sc := range Schemes {
			for i, fl := range flips[sc] {
				if fl && math.Abs(f.base[schemeKind[sc]][i]) > 1e-12 {
					f.flipped[sc][k]++
				}
			}
		}
	}
}

// deciders credits, per rollout, the component whose weighted deviation
// from its group mean agrees with the GRPO advantage's sign and is largest.
func (f *streamFigures) deciders(g Group) {
	K := len(f.names)
	col := make([]float64, len(g.Rollouts))
	means := make([]float64, K)
	for k := range K {
		for i, r := range g.Rollouts {
			col[i] = r.Components[k]
		}
		means[k], _, _ = f.conv.moments(col)
	}
	for i, r := range g.Rollouts {
		a := f.base[kGRPO][i]
		if math.Abs(a) < 1e-12 {
			continue
		}
		best, bestV := -1, 0.0
		for k := range K {
			v := f.weights[k] * (r.Components[k] - means[k])
			if !math.IsNaN(v) && v*a > 0 && math.Abs(v) > bestV {
				best, bestV = k, math.Abs(v)
			}
		}
		if best >= 0 {
			f.rep.Deciders[f.names[best]]++
		}
	}
}

func (f *streamFigures) report() *Report {
	rep := f.rep
	K := len(f.names)
	groups := float64(rep.Groups)
	zv := ZeroVarianceReport{Components: map[string]float64{}}
	zv.Reward, zv.RewardOnly = float64(f.zeroReward)/groups, float64(f.rewardOnly)/groups
	for k, name := range f.names {
		zv.Components[name] = float64(f.zeroComp[k]) / groups
	}
	rep.ZeroVariance = zv
	compRanks := make([][]float64, K)
	for k := range K {
		if !slices.ContainsFunc(f.comps[k], math.IsNaN) {
			compRanks[k] = metrics.Ranks(f.comps[k])
		}
	}
	for _, s := range Schemes {
		sr := SchemeReport{Spearman: map[string]float64{}, Sensitivity: map[string]float64{}}
		sr.CollapsedGroups = float64(f.collapsed[s]) / groups
		advRanks := metrics.Ranks(f.flat[s])
		for k, name := range f.names {
			if compRanks[k] != nil {
				sr.Spearman[name] = pearson(advRanks, compRanks[k])
			} else {
				sr.Spearman[name] = spearmanScored(f.flat[s], f.comps[k])
			}
			if f.nonzero[s] > 0 {
				sr.Sensitivity[name] = float64(f.flipped[s][k]) / float64(f.nonzero[s])
			} else {
				sr.Sensitivity[name] = 0
			}
		}
		f.flat[s] = nil
		rep.Schemes[s] = sr
	}
	rep.Recorded = f.rec.report()
	return rep
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
