package redteam

import (
	"context"

	"github.com/svbench/svbench/env"
)

var (
	_ env.SplitLoader = (*Attack)(nil)
	_ env.SplitLoader = (*Defense)(nil)
)

// LoadSplit returns an embedded split: test is the evaluation set Load("")
// returns (the hand-written rows of data/mini.jsonl and the generated
// test rows); train and dev are generated from other topics (specs.go).
// E5 keeps each split's harmful rows, as Load does.
func (a *Attack) LoadSplit(ctx context.Context, split string) (*env.Dataset, error) {
	return a.loadSplit(ctx, split, a.build, func(s *Scenario) bool { return s.Kind == KindHarmful })
}

// LoadSplit returns an embedded split, harmful rows and benign twins alike
// (see Attack.LoadSplit).
func (d *Defense) LoadSplit(ctx context.Context, split string) (*env.Dataset, error) {
	return d.loadSplit(ctx, split, d.build, func(*Scenario) bool { return true })
}

func (c *common) loadSplit(ctx context.Context, split string, build func(*Scenario) env.Example, keep func(*Scenario) bool) (*env.Dataset, error) {
	if err := env.CheckSplit(split); err != nil {
		return nil, err
	}
	if split == "" {
		split = env.SplitTest
	}
	ds, err := c.loadScenarios(ctx, "", split, build, keep)
	if err != nil {
		return nil, err
	}
	ds.Info.Split = split
	return ds, nil
}
