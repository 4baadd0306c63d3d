package codevuln

import "github.com/svbench/svbench/env"

var _ env.ScoreCoster = (*Env)(nil)

// ScoreCost says scoring executes the task's tests in the sandbox, seconds
// per item, so a reward service gives E3's items their own share of its
// scoring workers rather than letting them hold every worker.
func (*Env) ScoreCost() env.ScoreCost { return env.CostHeavy }
