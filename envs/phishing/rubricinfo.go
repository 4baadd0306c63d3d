package phishing

import "github.com/svbench/svbench/env"

// DescribeRubric describes the named rubric ("" = default) under this
// instance's reward source (env.RubricDescriber).
func (e *Environment) DescribeRubric(rubric string) (env.RubricInfo, error) {
	var ri env.RubricInfo
	switch rubric {
	case "", RubricDefault:
		ri = defaultRubric.Info()
	case RubricReference:
		ri = referenceRubric.Info()
	default:
		return env.RubricInfo{}, env.UnknownRubric(ID, rubric, RubricDefault, RubricReference)
	}
	return e.rs.Describe(ri), nil
}
