package advantage

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"

	"gonum.org/v1/gonum/mat"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/ingest"
)

// Loaded is a run turned into groups, with how the weights were found.
type Loaded struct {
	Input *Input
	// WeightsFrom says where the weights came from: "flag", "rows" (the
	// rubric recorded them) or "fitted" (least squares on recorded rewards).
	WeightsFrom string
	// FitMaxResidual is the largest |reward − Σ w·c| after fitting.
	FitMaxResidual float64
	// Skipped counts rows without components (errors, unverifiable rows).
	Skipped int
	// GroupedBy is "step+problem_id" for a trainer's rows, "example" for
	// svbench's (all rollouts of one example).
	GroupedBy string
}

// compact is what analysis keeps per row: 1M rows stay within ~100 MB.
type compact struct {
	group    string
	batch    string
	comps    map[string]float64
	reward   float64 // NaN when the row recorded none
	recorded *float64
}

// Load reads a run directory or results file, svbench's or a trainer's,
// streaming it. weights, when non-nil, overrides the rows' weights.
func Load(path string, weights map[string]float64) (*Loaded, error) {
	path = artifact.ResultsPath(path)
	trainer, err := ingest.IsTrainerFile(path)
	if err != nil {
		return nil, err
	}
	var rows []compact
	ld := &Loaded{GroupedBy: "example"}
	if trainer {
		ld.GroupedBy = "step+problem_id"
	}
	scored := 0
	rowWeights, skipped, err := eachCompact(path, trainer, func(c compact) error {
		rows = append(rows, c)
		if len(c.comps) > 0 {
			scored++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if scored == 0 {
		return nil, fmt.Errorf("%s: no row carries reward components (%d rows skipped: errors or unverifiable)", path, skipped)
	}
	ld.Skipped = skipped

	names := componentNames(rows)
	switch {
	case weights != nil:
		ld.WeightsFrom = "flag"
	case rowWeights != nil:
		weights, ld.WeightsFrom = rowWeights, "rows"
	default:
		w, resid, err := fitWeights(rows, names)
		if err != nil {
			return nil, fmt.Errorf("%s: the rows record no weights and they cannot be fitted from the recorded rewards (%v); pass --weights name=w,…", path, err)
		}
		weights, ld.WeightsFrom, ld.FitMaxResidual = w, "fitted", resid
	}
	in := &Input{Names: names}
	for _, n := range names {
		w, ok := weights[n]
		if !ok {
			return nil, fmt.Errorf("no weight for component %q (weights known: %v); pass --weights", n, slices.Sorted(maps.Keys(weights)))
		}
		in.Weights = append(in.Weights, w)
	}
	index := map[string]int{}
	for _, r := range rows {
		gi, ok := index[r.group]
		if !ok {
			gi = len(in.Groups)
			index[r.group] = gi
			in.Groups = append(in.Groups, Group{Key: r.group, Batch: r.batch})
		}
		in.Groups[gi].Rollouts = append(in.Groups[gi].Rollouts, Rollout{Components: componentsOf(r, names), Recorded: r.recorded})
	}
	ld.Input = in
	return ld, nil
}

// eachCompact streams a results file's rows that carry components, reduced
// to what analysis keeps, and returns the first weights a row recorded and
// how many rows were skipped. A trainer's row of a group (it has a
// problem_id) with no component and no reward is kept, unscored: every
// reward function returned None, and TRL leaves such a rollout out of its
// group's mean and std and gives it advantage 0, so the group's other
// advantages are explained only with it in place.
func eachCompact(path string, trainer bool, fn func(compact) error) (rowWeights map[string]float64, skipped int, err error) {
	if trainer {
		var ferr error
		err = eachTrainerRow(path, func(line int, r *ingest.Row) {
			if ferr != nil {
				return
			}
			unscored := len(r.Trainer.Components) == 0 && r.Trainer.Reward == nil && r.Trainer.ProblemID != ""
			if !unscored && (len(r.Trainer.Components) == 0 || r.Trainer.Reward == nil) {
				skipped++
				return
			}
			rew := math.NaN()
			if r.Trainer.Reward != nil {
				rew = *r.Trainer.Reward
			}
			key := r.Trainer.ProblemID
			if key == "" {
				key = "line " + strconv.Itoa(line)
			}
			// A step's rows are the batch the trainer normalised together
			// (grpo_batch_std, GDPO).
			batch := ""
			if r.Trainer.Step != nil {
				batch = strconv.FormatInt(*r.Trainer.Step, 10)
				key = batch + "/" + key
			}
			ferr = fn(compact{group: key, batch: batch, comps: r.Trainer.Components, reward: rew, recorded: r.Trainer.Advantage})
		})
		if err == nil {
			err = ferr
		}
		return nil, skipped, err
	}
	err = artifact.EachResult(path, func(r *artifact.Result) error {
		if r.Error != "" || r.ScoreError != "" || r.Unverifiable != "" || len(r.Components) == 0 {
			skipped++
			return nil
		}
		if rowWeights == nil && len(r.Weights) > 0 {
			rowWeights = r.Weights
		}
		var rec *float64
		if r.Trainer != nil {
			rec = r.Trainer.Advantage
		}
		return fn(compact{group: strconv.Itoa(r.Index), comps: r.Components, reward: r.Reward, recorded: rec})
	})
	return rowWeights, skipped, err
}

// componentsOf orders a row's components by names; a component the row does
// not carry is NaN, unscored (a reward function that returned None), so it
// drops out of its group's statistics as TRL's nanmean and nanstd drop it.
func componentsOf(r compact, names []string) []float64 {
	c := make([]float64, len(names))
	for k, n := range names {
		v, ok := r.comps[n]
		if !ok {
			v = math.NaN()
		}
		c[k] = v
	}
	return c
}

func componentNames(rows []compact) []string {
	seen := map[string]bool{}
	for _, r := range rows {
		for k := range r.comps {
			seen[k] = true
		}
	}
	return slices.Sorted(maps.Keys(seen))
}

// fitWeights solves min ‖C w − r‖² for the weights that made the recorded
// rewards from the components (trainer rows carry both but not the
// weights), and reports the largest residual so a bad fit is visible.
func fitWeights(all []compact, names []string) (map[string]float64, float64, error) {
	var rows []compact
	for _, r := range all {
		if len(r.comps) == len(names) && !math.IsNaN(r.reward) {
			rows = append(rows, r)
		}
	}
	if len(rows) < len(names) {
		return nil, 0, fmt.Errorf("%d rows carry every component and a reward, for %d components", len(rows), len(names))
	}
	c := mat.NewDense(len(rows), len(names), nil)
	r := mat.NewVecDense(len(rows), nil)
	for i, row := range rows {
		for k, n := range names {
			c.Set(i, k, row.comps[n])
		}
		r.SetVec(i, row.reward)
	}
	var w mat.VecDense
	if err := w.SolveVec(c, r); err != nil {
		return nil, 0, err
	}
	out := map[string]float64{}
	for k, n := range names {
		// Round away solver noise: rubric weights are short decimals.
		out[n] = math.Round(w.AtVec(k)*1e9) / 1e9
	}
	resid := 0.0
	for _, row := range rows {
		s := 0.0
		for _, n := range names {
			s += out[n] * row.comps[n]
		}
		resid = math.Max(resid, math.Abs(s-row.reward))
	}
	return out, resid, nil
}

func eachTrainerRow(path string, fn func(line int, r *ingest.Row)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return artifact.EachRow(f, path, artifact.ReadOptions{}, ingest.Decode, func(line int, r *ingest.Row) error {
		fn(line, r)
		return nil
	})
}

// ParseWeights reads "accuracy=1,format=0.1".
func ParseWeights(s string) (map[string]float64, error) {
	if s == "" {
		return nil, nil
	}
	out := map[string]float64{}
	for _, kv := range bytes.Split([]byte(s), []byte(",")) {
		k, v, ok := bytes.Cut(bytes.TrimSpace(kv), []byte("="))
		if !ok || len(k) == 0 {
			return nil, fmt.Errorf("--weights %q: want name=weight,…", s)
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("--weights: %s=%s is not a number", k, v)
		}
		out[string(k)] = f
	}
	return out, nil
}

// JSON renders the report (a helper for the CLI and server).
func (r *Report) JSON() ([]byte, error) { return json.MarshalIndent(r, "", "  ") }
