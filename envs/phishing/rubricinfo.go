package phishing

import "github.com/svbench/svbench/env"

// DescribeRubric describes the named rubric ("" = default) under this
// instance's reward source (env.RubricDescriber).
func (e *Environment) DescribeRubric(rubric string) (env.RubricInfo, error) {
	return e.rs.DescribeNamed(ID, rubric, []string{RubricDefault, RubricReference},
		[]env.RubricInfo{defaultRubric.Info(), referenceRubric.Info()})
}
