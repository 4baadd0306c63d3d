package advantage

import (
	"math"
	"slices"
	"testing"
)

// The fixtures' recorded advantages were computed by hand (a short script
// written from each trainer's documented formula, not its code), with
// components (accuracy, format) and weights (1, 0.5), r = acc + 0.5·format:
//
//   - trl grpo_std:  (r − nanmean r) / (nanstd r + 1e-4), nanstd Bessel-corrected
//     over the scored rewards; an unscored reward and a group of one get 0.
//   - trl batch:     (r − group nanmean) / (nanstd of the step's rewards + 1e-4).
//   - trl gdpo:      z_k = (c_k − nanmean_k)/(nanstd_k + 1e-4) per group, summed
//     with the weights over the scored components, then (x − batch mean) /
//     (batch nanstd + 1e-4).
//   - verl:          (r − mean)/(torch.std + 1e-6); a group of one has mean 0,
//     std 1.
//   - openrlhf:      group_norm, (r − mean)/(torch.std + 1e-9).
var (
	nan = math.NaN()
	// g1: the fourth rollout is unscored (every reward function None):
	// rewards 1.5, 0.5, 1, — → nanmean 1, nanstd over three 0.5.
	g1 = [][2]float64{{1, 1}, {0, 1}, {1, 0}, {nan, nan}}
	g2 = [][2]float64{{1, 1}, {1, 1}, {0, 0}, {0, 1}}
	g3 = [][2]float64{{1, 1}}
	g4 = [][2]float64{{0, 0}, {1, 0}, {1, 1}, {0, 1}}
	// g5, g6: a spread of about 0.017, where verl's ε (1e-6) moves the
	// advantage by ~7e-5, beyond the tolerance, and OpenRLHF's (1e-9) not.
	g5 = [][2]float64{{0.01, 0}, {0.02, 0}, {0.03, 0}, {0.05, 0}}
	g6 = [][2]float64{{0.04, 0}, {0.01, 0}, {0.01, 0}, {0.02, 0}}
	// g7: one reward function returned None for the second rollout only.
	g7 = [][2]float64{{1, 1}, {0, nan}, {1, 0}, {0, 0}}
)

type fixtureGroup struct {
	batch    string
	comps    [][2]float64
	recorded []float64
}

func fixture(groups ...fixtureGroup) *Input {
	in := &Input{Names: []string{"accuracy", "format"}, Weights: []float64{1, 0.5}}
	for gi, fg := range groups {
		g := Group{Key: string(rune('a' + gi)), Batch: fg.batch}
		for i, c := range fg.comps {
			g.Rollouts = append(g.Rollouts, Rollout{Components: []float64{c[0], c[1]}, Recorded: ptr(fg.recorded[i])})
		}
		in.Groups = append(in.Groups, g)
	}
	return in
}

func TestRecordedConventions(t *testing.T) {
	tests := []struct {
		name string
		in   *Input
		want string
	}{
		{"trl scale_rewards=group: nanstd over the scored rewards, a group of one gets 0", fixture(
			fixtureGroup{"", g1, []float64{0.999800039992, -0.999800039992, 0, 0}},
			fixtureGroup{"", g2, []float64{0.833222237035, 0.833222237035, -1.166511131849, -0.499933342221}},
			fixtureGroup{"", g3, []float64{0}},
		), "grpo_std@trl"},
		{"trl scale_rewards=batch: the batch is one step", fixture(
			fixtureGroup{"0", g1, []float64{0.822919430181, -0.822919430181, 0, 0}},
			fixtureGroup{"0", g2, []float64{1.028649287726, 1.028649287726, -1.440109002816, -0.617189572635}},
			fixtureGroup{"1", g4, []float64{-1.161715031743, 0.387238343914, 1.161715031743, -0.387238343914}},
		), "grpo_batch_std@trl"},
		{"trl normalize_then_sum (GDPO): a None component drops out, a group of one adds 0 to the batch", fixture(
			fixtureGroup{"", g7, []float64{1.292044541946, -0.775226725168, 0.516817816778, -1.033635633557}},
			fixtureGroup{"", g2, []float64{0.999009409196, 0.999009409196, -1.446574777254, -0.551444041139}},
			fixtureGroup{"", g3, []float64{0}},
		), "gdpo@trl"},
		{"verl grpo: torch.std, ε 1e-6, a group of one is r/(1+ε)", fixture(
			fixtureGroup{"", g2, []float64{0.833332222224, 0.833332222224, -1.166665111113, -0.499999333334}},
			fixtureGroup{"", g4, []float64{-1.161893203865, 0.387297734622, 1.161893203865, -0.387297734622}},
			fixtureGroup{"", g3, []float64{1.499998500002}},
		), "grpo_std@verl"},
		{"openrlhf group_norm: torch.std, ε 1e-9", fixture(
			fixtureGroup{"", g5, []float64{-1.024695016596, -0.439155007113, 0.146385002371, 1.317465021338}},
			fixtureGroup{"", g6, []float64{1.414213462373, -0.707106731187, -0.707106731187, 0}},
		), "grpo_std@openrlhf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Analyse(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Recorded == nil || !slices.Equal(rep.Recorded.Reproduces, []string{tc.want}) {
				t.Fatalf("reproduced by %v, want only %s; max diffs %v, undefined %v", rep.Recorded.Reproduces, tc.want, rep.Recorded.MaxAbsDiff, rep.Recorded.Undefined)
			}
			got, ok := CandidateAdvantages(tc.in, tc.want)
			if !ok {
				t.Fatalf("no candidate %s", tc.want)
			}
			for gi, g := range tc.in.Groups {
				for i, r := range g.Rollouts {
					if d := math.Abs(got[gi][i] - *r.Recorded); d > 1e-9 {
						t.Errorf("group %s rollout %d: %.12f, hand-computed %.12f", g.Key, i, got[gi][i], *r.Recorded)
					}
				}
			}
		})
	}
}

// The population std (ε 1e-6) the analysis used before is no trainer's: on
// G = 4 it is off by sqrt(G/(G−1)), 15%, and nothing reproduces
// a population-std advantage.
func TestPopulationStdIsNoTrainers(t *testing.T) {
	in := fixture(fixtureGroup{"", g2, []float64{0.96224896717, 0.96224896717, -1.347148554038, -0.577349380302}})
	rep, err := Analyse(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Recorded.Reproduces) != 0 {
		t.Errorf("population-std advantages reproduced by %v", rep.Recorded.Reproduces)
	}
	if d := rep.Recorded.MaxAbsDiff["grpo_std@verl"]; math.Abs(d-(1.347148554038-1.166665111113)) > 1e-6 {
		t.Errorf("max diff to verl %v, want the sqrt(4/3) gap on the largest advantage", d)
	}
}

// The undefined cases: OpenRLHF refuses groups of one, and a NaN reward
// poisons a verl group, so neither can have produced such rows.
func TestRecordedUndefined(t *testing.T) {
	in := fixture(
		fixtureGroup{"", g1, []float64{0.999800039992, -0.999800039992, 0, 0}},
		fixtureGroup{"", g3, []float64{0}},
	)
	rep, err := Analyse(in)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"grpo_std@verl": 4, "grpo@verl": 4, "grpo_std@openrlhf": 5, "grpo@openrlhf": 5}
	for name, n := range want {
		if rep.Recorded.Undefined[name] != n {
			t.Errorf("%s undefined on %d rollouts, want %d (all: %v)", name, rep.Recorded.Undefined[name], n, rep.Recorded.Undefined)
		}
	}
	if rep.Unscored != 1 || rep.Singletons != 1 {
		t.Errorf("unscored %d singletons %d, want 1 and 1", rep.Unscored, rep.Singletons)
	}
}

// A constant summed reward with varying components is a group a filter on
// the reward's variance drops and GDPO learns from.
func TestZeroVariance(t *testing.T) {
	in := &Input{Names: []string{"accuracy", "format"}, Weights: []float64{1, 0.5}, Groups: []Group{
		// r = 1, 1: constant sum, both components vary.
		{Key: "a", Rollouts: []Rollout{{Components: []float64{1, 0}}, {Components: []float64{0, 2}}}},
		// nothing varies.
		{Key: "b", Rollouts: []Rollout{{Components: []float64{1, 1}}, {Components: []float64{1, 1}}}},
		// accuracy varies, format does not.
		{Key: "c", Rollouts: []Rollout{{Components: []float64{1, 0}}, {Components: []float64{0, 0}}}},
		// format scored once only: no spread to normalise.
		{Key: "d", Rollouts: []Rollout{{Components: []float64{1, 1}}, {Components: []float64{0, nan}}}},
	}}
	rep, err := Analyse(in)
	if err != nil {
		t.Fatal(err)
	}
	zv := rep.ZeroVariance
	if zv.Reward != 0.5 || zv.RewardOnly != 0.25 || zv.Components["accuracy"] != 0.25 || zv.Components["format"] != 0.75 {
		t.Errorf("zero variance %+v, want reward 1/2, reward-only 1/4, accuracy 1/4, format 3/4", zv)
	}
	// GDPO keeps group a; grpo_std collapses it.
	if g, s := rep.Schemes[GDPO].CollapsedGroups, rep.Schemes[GRPOStd].CollapsedGroups; g != 0.25 || s != 0.5 {
		t.Errorf("collapsed: gdpo %v grpo_std %v, want 1/4 and 1/2", g, s)
	}
}
