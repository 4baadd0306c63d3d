package codevuln

import (
	"context"
	"fmt"
	"sync"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/codevuln/taskset/mutate"
)

// The training splits are tasks the mutation generator makes from its
// clean templates (taskset/mutate), never the hand-written tasks the test
// split holds: a policy trained on them has not seen the code it is
// evaluated on. The seeds are fixed, so every build serves the same tasks;
// n is a multiple of the number of mutation kinds so each kind is equally
// represented.
const (
	trainSeed = 31001
	devSeed   = 31002
	trainPer  = 20 // tasks per mutation kind
	devPer    = 4
)

// splitSets generates a split's tasks once per Env and registers them, so
// ParseExample and the verifier find them like the embedded ones.
type splitSets struct {
	once sync.Once
	ids  map[string][]string
	err  error
}

// LoadSplit serves E3's splits (env.SplitLoader): test is the embedded
// hand-written tasks (what Load("") returns); train and dev are generated.
func (e *Env) LoadSplit(ctx context.Context, split string) (*env.Dataset, error) {
	switch split {
	case env.SplitTest:
		return e.Load(ctx, "")
	case env.SplitTrain, env.SplitDev:
	default:
		return nil, env.CheckSplit(split)
	}
	e.splits.once.Do(func() { e.splits.ids, e.splits.err = e.generateSplits() })
	if e.splits.err != nil {
		return nil, e.splits.err
	}
	return e.rowsFor(ctx, "embedded:e3-"+split, e.splits.ids[split])
}

func (e *Env) generateSplits() (map[string][]string, error) {
	out := map[string][]string{}
	for _, s := range []struct {
		name string
		seed uint64
		per  int
	}{{env.SplitTrain, trainSeed, trainPer}, {env.SplitDev, devSeed, devPer}} {
		ts, err := mutate.Generate(s.seed, s.per*len(mutate.Mutations))
		if err != nil {
			return nil, fmt.Errorf("e3: generate the %s split: %w", s.name, err)
		}
		e.mu.Lock()
		for i := range ts {
			t := ts[i]
			if prev, ok := e.tasks[t.ID]; ok && !sameTask(prev, &t) {
				e.mu.Unlock()
				return nil, fmt.Errorf("e3: generated %s task %s collides with a loaded task of the same id", s.name, t.ID)
			}
			e.tasks[t.ID] = &t
			out[s.name] = append(out[s.name], t.ID)
		}
		e.mu.Unlock()
	}
	return out, nil
}
