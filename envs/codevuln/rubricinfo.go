package codevuln

import "github.com/svbench/svbench/env"

// DescribeRubric describes the named rubric ("" = default)
// (env.RubricDescriber). The default rubric weighs repair alone; its other
// components are reported unweighted for per-component normalisation, and
// behaviour and security are absent on static-only tasks (no suites run).
func (e *Env) DescribeRubric(rubric string) (env.RubricInfo, error) {
	c := func(name string, w float64) env.RubricComponent {
		return env.RubricComponent{Name: name, Weight: w, Min: 0, Max: 1}
	}
	switch rubric {
	case "", RubricDefault:
		behaviour, security := c(CompBehaviour, 0), c(CompSecurity, 0)
		behaviour.Optional, security.Optional = true, true
		return env.NewRubricInfo(RubricDefault, c(CompRepair, 1), behaviour, security, c(CompStaticFixed, 0),
			c(CompNoNewHigh, 0), c(CompAPI, 0), c(CompSubstantive, 0), c(CompPatchSize, 0)), nil
	case RubricReference:
		return env.NewRubricInfo(RubricReference, c("patch_and_test", 1), c("format", 0.2)), nil
	}
	return env.RubricInfo{}, env.UnknownRubric(ID, rubric, RubricDefault, RubricReference)
}
