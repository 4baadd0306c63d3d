package env

import (
	"fmt"
	"math"
)

// Reward is one weighted reward function over a parsed output P. Min and
// Max declare the range of Fn's value (a component in [0, 1] is Min 0, Max
// 1; a penalty may go below 0): RubricInfo publishes them so trainers can
// normalise per component without copying them, and the conformance suite
// (envtest) fails when a score leaves them.
type Reward[P any] struct {
	Name     string
	Weight   float64
	Min, Max float64
	Fn       func(ex Example, parsed P) float64
}

// Rubric is a named, weighted set of reward functions sharing one parse of
// the model's output. Total = Σ weight·value. A reward function that panics
// or returns NaN/Inf contributes 0 and is named in Parsed["reward_errors"], so
// one bad function never takes a whole score down.
type Rubric[P any] struct {
	Name    string
	Rewards []Reward[P]
}

// Info describes the rubric: its components with weights and declared
// ranges, and the range of the total.
func (r Rubric[P]) Info() RubricInfo {
	comps := make([]RubricComponent, len(r.Rewards))
	for i, rw := range r.Rewards {
		comps[i] = RubricComponent{Name: rw.Name, Weight: rw.Weight, Min: rw.Min, Max: rw.Max}
	}
	return NewRubricInfo(r.Name, comps...)
}

// Evaluate runs every reward function on an already parsed output.
func (r Rubric[P]) Evaluate(ex Example, parsed P, view map[string]any) Score {
	s := Score{
		Components: make(map[string]float64, len(r.Rewards)),
		Weights:    make(map[string]float64, len(r.Rewards)),
		Parsed:     view,
		Rubric:     r.Name,
	}
	var failed []string
	for _, rw := range r.Rewards {
		v, err := safeCall(rw.Fn, ex, parsed)
		if err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", rw.Name, err))
			v = 0
		}
		s.Components[rw.Name] = v
		s.Weights[rw.Name] = rw.Weight
		s.Total += rw.Weight * v
	}
	if len(failed) > 0 {
		if s.Parsed == nil {
			s.Parsed = map[string]any{}
		}
		s.Parsed["reward_errors"] = failed
	}
	return s
}

func safeCall[P any](fn func(Example, P) float64, ex Example, p P) (v float64, err error) {
	defer func() {
		if rec := recover(); rec != nil {
			err = fmt.Errorf("panic: %v", rec)
		}
	}()
	v = fn(ex, p)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("non-finite value %v", v)
	}
	return v, nil
}
