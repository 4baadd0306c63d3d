package judgeutil

import "github.com/svbench/svbench/env"

// Describe is the rubric description under this reward source, given the
// executable rubric's: unchanged for executable, the judge's verdict alone
// (component "judge" in [0, 1], weight 1) for llm_judge, the executable
// components plus "judge" at c.Weight for hybrid — as Apply scores.
func (c Config) Describe(ri env.RubricInfo) env.RubricInfo {
	judge := env.RubricComponent{Name: Component, Weight: 1, Min: 0, Max: 1}
	switch c.Source {
	case SourceJudge:
		return env.NewRubricInfo(ri.Name, judge)
	case SourceHybrid:
		judge.Weight = c.Weight
		return ri.With(judge)
	}
	return ri
}

// DescribeNamed answers env.RubricDescriber for an environment offering
// the judge: the rubric named ("" is the first, the default) among its
// rubrics, by name and executable description, under this reward source.
func (c Config) DescribeNamed(envID, rubric string, names []string, infos []env.RubricInfo) (env.RubricInfo, error) {
	if rubric == "" {
		rubric = names[0]
	}
	for i, n := range names {
		if n == rubric {
			return c.Describe(infos[i]), nil
		}
	}
	return env.RubricInfo{}, env.UnknownRubric(envID, rubric, names...)
}
