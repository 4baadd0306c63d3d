package env

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// RubricComponent is one reward component as a rubric declares it: its
// weight in the total and the range of its (unweighted) value.
type RubricComponent struct {
	Name   string  `json:"name"`
	Weight float64 `json:"weight"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// Optional: some rows' scores leave the component out (E3's test
	// components on static-only tasks); an absent component adds 0.
	Optional bool `json:"optional,omitempty"`
}

// RubricInfo describes a rubric as an instance scores with it: its name,
// its components (weights and declared ranges) and the range of the total
// (Σ weight·value over the components' ranges). GDPO-style trainers read
// it to normalise per component; reports print the total's range beside
// the reward.
type RubricInfo struct {
	Name       string            `json:"name"`
	Components []RubricComponent `json:"components"`
	// TotalMin and TotalMax bound Score.Total.
	TotalMin float64 `json:"total_min"`
	TotalMax float64 `json:"total_max"`
}

// NewRubricInfo describes a rubric from its components, computing the
// total's range: each component adds weight·min to weight·max (the other
// way round for a negative weight), an optional one also 0.
func NewRubricInfo(name string, comps ...RubricComponent) RubricInfo {
	ri := RubricInfo{Name: name, Components: slices.Clone(comps)}
	for _, c := range comps {
		lo, hi := c.Weight*c.Min, c.Weight*c.Max
		if lo > hi {
			lo, hi = hi, lo
		}
		if c.Optional {
			lo, hi = math.Min(lo, 0), math.Max(hi, 0)
		}
		ri.TotalMin += lo
		ri.TotalMax += hi
	}
	// Zero stays zero: -0 reads oddly in JSON and tables.
	ri.TotalMin += 0
	ri.TotalMax += 0
	return ri
}

// With returns the description with one more component (e.g. a judge's
// verdict joining the executable components) and the total's range updated.
func (ri RubricInfo) With(c RubricComponent) RubricInfo {
	return NewRubricInfo(ri.Name, append(slices.Clone(ri.Components), c)...)
}

// Component returns the named component's declaration.
func (ri RubricInfo) Component(name string) (RubricComponent, bool) {
	for _, c := range ri.Components {
		if c.Name == name {
			return c, true
		}
	}
	return RubricComponent{}, false
}

// rangeTol absorbs floating-point error in sums of weighted values.
const rangeTol = 1e-9

// Check reports how a score disagrees with the description: a component
// not declared or missing (unless optional), a weight other than the
// declared one (when the score records weights), a value outside its
// declared range, a total outside the total's range. nil when it agrees.
func (ri RubricInfo) Check(s Score) error {
	var bad []string
	for name, v := range s.Components {
		c, ok := ri.Component(name)
		if !ok {
			bad = append(bad, fmt.Sprintf("component %s is not declared", name))
			continue
		}
		if v < c.Min-rangeTol || v > c.Max+rangeTol {
			bad = append(bad, fmt.Sprintf("component %s = %v outside its declared range [%v, %v]", name, v, c.Min, c.Max))
		}
		if w, ok := s.Weights[name]; len(s.Weights) > 0 && (!ok || math.Abs(w-c.Weight) > rangeTol) {
			bad = append(bad, fmt.Sprintf("component %s weighs %v, declared %v", name, w, c.Weight))
		}
	}
	for _, c := range ri.Components {
		if _, ok := s.Components[c.Name]; !ok && !c.Optional {
			bad = append(bad, fmt.Sprintf("declared component %s is missing", c.Name))
		}
	}
	if s.Total < ri.TotalMin-rangeTol || s.Total > ri.TotalMax+rangeTol {
		bad = append(bad, fmt.Sprintf("total %v outside the declared range [%v, %v]", s.Total, ri.TotalMin, ri.TotalMax))
	}
	if len(bad) == 0 {
		return nil
	}
	slices.Sort(bad)
	return fmt.Errorf("rubric %s: %s", ri.Name, strings.Join(bad, "; "))
}

// RubricDescriber is implemented by environments that describe their
// rubrics (every registered one does; the conformance suite insists).
// DescribeRubric describes the named rubric ("" = the default) as this
// instance scores with it: its options (a reward source adding a judge,
// E2's policy mode dropping a component) are taken into account.
type RubricDescriber interface {
	DescribeRubric(rubric string) (RubricInfo, error)
}

// DescribeRubric describes e's named rubric; ok is false when e does not
// implement RubricDescriber.
func DescribeRubric(e Environment, rubric string) (ri RubricInfo, ok bool, err error) {
	d, ok := e.(RubricDescriber)
	if !ok {
		return RubricInfo{}, false, nil
	}
	ri, err = d.DescribeRubric(rubric)
	return ri, true, err
}

// UnknownRubric is the error for a rubric name an environment does not have.
func UnknownRubric(envID, rubric string, known ...string) error {
	return fmt.Errorf("unknown rubric %q for %s (known: %s)", rubric, envID, strings.Join(known, ", "))
}

// RubricInfoOf is e's description of the named rubric, nil when e does
// not describe it (no RubricDescriber, or a rubric its options refuse):
// what run metadata records.
func RubricInfoOf(e Environment, rubric string) *RubricInfo {
	ri, ok, err := DescribeRubric(e, rubric)
	if !ok || err != nil {
		return nil
	}
	return &ri
}
