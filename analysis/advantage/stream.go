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
// batch: groups are read three times from src (twice for the batch mean
// and spread GDPO normalises by, under the base weights and every ±20%
// perturbation, summed in Analyse's order so the figures are identical;
// once for everything else), and only what the Spearman correlations need
// — each scheme's advantage and each component per rollout, as flat arrays
// — grows with the batch. Analyse keeps every group, every scheme's
// advantages per group and every perturbation's besides.
func AnalyseStream(names []string, weights []float64, src Source) (*Report, error) {
	if len(names) == 0 {
		return nil, fmt.Errorf("no reward components: the rows carry no components to normalise")
	}
	if len(weights) != len(names) {
		return nil, fmt.Errorf("%d weights for %d components", len(weights), len(names))
	}
	K := len(names)
	// Weight sets: 0 is the base; 1+2k and 2+2k scale component k by 0.8
	// and 1.2, the order Analyse perturbs in.
	sets := [][]float64{weights}
	for k := range K {
		for _, f := range []float64{0.8, 1.2} {
			w := slices.Clone(weights)
			w[k] *= f
			sets = append(sets, w)
		}
	}
	check := func(g Group) error {
		tmp := Input{Names: names, Weights: weights, Groups: []Group{g}}
		return tmp.Validate()
	}
	// Passes 1 and 2: GDPO's batch mean, then spread and scale, per set.
	n := 0
	sum := make([]float64, len(sets))
	err := src(func(g Group) error {
		if err := check(g); err != nil {
			return err
		}
		if len(g.Rollouts) < 2 {
			return nil
		}
		z := ComponentScores(g, K)
		for s, w := range sets {
			for _, zi := range z {
				sum[s] += dot(w, zi)
			}
		}
		n += len(g.Rollouts)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if n == 0 {
		singletons := 0
		_ = src(func(Group) error { singletons++; return nil })
		return nil, fmt.Errorf("no group has two or more rollouts (%d singleton groups): advantages need several rollouts per prompt (eval -r > 1, or a trainer's rows with problem_id)", singletons)
	}
	mean := make([]float64, len(sets))
	for s := range sets {
		mean[s] = sum[s] / float64(n)
	}
	sq, scale := make([]float64, len(sets)), make([]float64, len(sets))
	err = src(func(g Group) error {
		if len(g.Rollouts) < 2 {
			return nil
		}
		for s, w := range sets {
			for _, zi := range ComponentScores(g, K) {
				x := dot(w, zi)
				d := x - mean[s]
				sq[s] += d * d
				scale[s] = math.Max(scale[s], math.Abs(x))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sd := make([]float64, len(sets))
	for s := range sets {
		sd[s] = math.Sqrt(sq[s] / float64(n))
		if sd[s] <= 1e-12*math.Max(1, scale[s]) {
			sd[s] = 0
		}
	}

	// Pass 3: every figure.
	rep := &Report{Names: names, Weights: weights, Schemes: map[string]SchemeReport{}, Deciders: map[string]int{}}
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
	rr := &RecordedReport{MaxAbsDiff: map[string]float64{}, Tolerance: RecordedTolerance}
	var base, pert map[string][]float64
	err = src(func(g Group) error {
		if len(g.Rollouts) < 2 {
			rep.Singletons++
			return nil
		}
		rep.Groups++
		rep.Rollouts += len(g.Rollouts)
		z := ComponentScores(g, K)
		base = groupAdvantages(g, z, sets[0], mean[0], sd[0], base)
		for _, s := range Schemes {
			a := base[s]
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
			var any map[string][]bool
			for j := range 2 {
				s := 1 + 2*k + j
				pert = groupAdvantages(g, z, sets[s], mean[s], sd[s], pert)
				if any == nil {
					any = map[string][]bool{}
					for _, sc := range Schemes {
						any[sc] = make([]bool, len(g.Rollouts))
					}
				}
				for _, sc := range Schemes {
					for i, v := range pert[sc] {
						b := base[sc][i]
						if b*v < 0 || (math.Abs(b) > 1e-12) != (math.Abs(v) > 1e-12) {
							any[sc][i] = true
						}
					}
				}
			}
			for _, sc := range Schemes {
				for i, f := range any[sc] {
					if f && math.Abs(base[sc][i]) > 1e-12 {
						flipped[sc][k]++
					}
				}
			}
		}
		// Deciders, as Analyse defines them.
		means := make([]float64, K)
		for k := range K {
			for _, r := range g.Rollouts {
				means[k] += r.Components[k]
			}
			means[k] /= float64(len(g.Rollouts))
		}
		for i, r := range g.Rollouts {
			a := base[GRPO][i]
			if math.Abs(a) < 1e-12 {
				continue
			}
			best, bestV := -1, 0.0
			for k := range K {
				v := weights[k] * (r.Components[k] - means[k])
				if v*a > 0 && math.Abs(v) > bestV {
					best, bestV = k, math.Abs(v)
				}
			}
			if best >= 0 {
				rep.Deciders[names[best]]++
			}
		}
		for i, r := range g.Rollouts {
			if r.Recorded == nil {
				continue
			}
			rr.Rollouts++
			for _, s := range Schemes {
				rr.MaxAbsDiff[s] = math.Max(rr.MaxAbsDiff[s], math.Abs(base[s][i]-*r.Recorded))
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	compRanks := make([][]float64, K)
	for k := range K {
		compRanks[k] = metrics.Ranks(comps[k])
		comps[k] = nil
	}
	for _, s := range Schemes {
		sr := SchemeReport{Spearman: map[string]float64{}, Sensitivity: map[string]float64{}}
		sr.CollapsedGroups = float64(collapsed[s]) / float64(rep.Groups)
		advRanks := metrics.Ranks(flat[s])
		flat[s] = nil
		for k, name := range names {
			sr.Spearman[name] = pearson(advRanks, compRanks[k])
			if nonzero[s] > 0 {
				sr.Sensitivity[name] = float64(flipped[s][k]) / float64(nonzero[s])
			} else {
				sr.Sensitivity[name] = 0
			}
		}
		rep.Schemes[s] = sr
	}
	if rr.Rollouts > 0 {
		for _, s := range Schemes {
			if rr.MaxAbsDiff[s] <= RecordedTolerance {
				rr.Reproduces = append(rr.Reproduces, s)
			}
		}
		rep.Recorded = rr
	}
	return rep, nil
}

// groupAdvantages is Advantages for one group, with GDPO's batch mean and
// spread given; buf is reused when it has room.
func groupAdvantages(g Group, z [][]float64, w []float64, gm, gsd float64, buf map[string][]float64) map[string][]float64 {
	n := len(g.Rollouts)
	if buf == nil {
		buf = map[string][]float64{}
	}
	for _, s := range Schemes {
		if cap(buf[s]) < n {
			buf[s] = make([]float64, n)
		}
		buf[s] = buf[s][:n]
	}
	rewards := make([]float64, n)
	for i, r := range g.Rollouts {
		rewards[i] = dot(w, r.Components)
	}
	m, sd := meanStd(rewards)
	for i, r := range rewards {
		buf[GRPO][i] = r - m
		buf[GRPOStd][i] = 0
		if sd > 0 {
			buf[GRPOStd][i] = (r - m) / (sd + Eps)
		}
		per := dot(w, z[i])
		buf[PerComponent][i] = per
		buf[GDPO][i] = 0
		if gsd > 0 {
			buf[GDPO][i] = (per - gm) / (gsd + Eps)
		}
	}
	return buf
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
	rowWeights, skipped, err := eachCompact(path, trainer, func(c compact) error {
		rows++
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
	if rows == 0 {
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
				g.Key = c.group
			}
			comps := make([]float64, len(names))
			for k, n := range names {
				comps[k] = c.comps[n]
			}
			g.Rollouts = append(g.Rollouts, Rollout{Components: comps, Recorded: c.recorded})
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
