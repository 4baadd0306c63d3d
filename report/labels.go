package report

import (
	"strings"

	"github.com/svbench/svbench/artifact"
)

// Condition labels (Spec.Labels): an environment may name what a run's resolved
// configuration (artifact.Metadata.Conditions) makes its numbers mean,
// such as E5's "simulated target". Scoreboards and leaderboards add the
// labels to the run's condition, so a labelled run is never ranked beside
// runs without them; the environment's report builder prints them too.

// ConditionLabels are the labels the run's environment gives its resolved
// configuration; nil when it gives none.
func ConditionLabels(meta *artifact.Metadata) []string {
	if meta == nil {
		return nil
	}
	id, err := Resolve(meta.Environment)
	if err != nil {
		return nil
	}
	mu.RLock()
	f := specs[id].labels
	mu.RUnlock()
	if f == nil {
		return nil
	}
	return f(meta.Conditions())
}

// LabelsText is how a condition shows its labels: "(simulated target,
// rules judge)"; "" without labels.
func LabelsText(labels []string) string {
	if len(labels) == 0 {
		return ""
	}
	return "(" + strings.Join(labels, ", ") + ")"
}
