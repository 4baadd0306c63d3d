// Package probe searches an environment for answers that earn reward
// without doing the task: the environment's registered exploit strategies
// (env.Prober) and a generic search that mutates the answers of its honest
// and built-in policies, all played through the ordinary episode loop and
// scored by the ordinary rubric, on the same rows as the honest baseline.
package probe

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/runner"

	textclip "github.com/svbench/svbench/base/clip"
)

// Config is one probe run.
type Config struct {
	EnvID string
	// New builds the environment under the given parameters (an exploit may
	// need its own condition); params holds the run's parameters merged
	// with the strategy's.
	New     func(params map[string]string) (env.Environment, error)
	Params  map[string]string
	Dataset string // "" = the embedded mini set
	Rubric  string
	// Limit takes the first N rows (0 = all).
	Limit int
	// Only, when set, keeps the strategies with these names (the honest
	// baseline always runs).
	Only        []string
	Search      bool // run the generic mutation search
	Concurrency int
}

// Strategy is one strategy's result.
type Strategy struct {
	Name        string `json:"name"`
	Family      string `json:"family"`
	Kind        string `json:"kind"` // "registered" or "search"
	Description string `json:"description"`
	// MeanReward is the plain mean over the rows.
	MeanReward float64 `json:"mean_reward"`
	// UnsolvedMean counts a row's reward only when the rollout did not solve
	// it: what the strategy earns without doing the task. A search mutation
	// that leaves the honest answer intact solves what honest solves and
	// earns nothing here.
	UnsolvedMean float64 `json:"unsolved_mean"`
	Solved       int     `json:"solved"`
	Rows         int     `json:"rows"`
	// Applied counts the rows where the strategy changed the answer (search
	// mutations); registered strategies apply to every row.
	Applied int `json:"applied"`
	// Bound is the figure compared with the honest mean: MeanReward for a
	// registered exploit, UnsolvedMean for a search mutation.
	Bound       float64  `json:"bound"`
	ShareHonest float64  `json:"share_of_honest"`
	Vulnerable  bool     `json:"vulnerable"`
	Best        *Example `json:"best_example,omitempty"`
	Errors      int      `json:"errors"`
	FirstError  string   `json:"first_error,omitempty"`
}

// Example is the best-scoring non-solving rollout a strategy produced.
type Example struct {
	ID     string             `json:"id"`
	Reward float64            `json:"reward"`
	Answer string             `json:"answer"`
	Comps  map[string]float64 `json:"components,omitempty"`
}

// Result is a whole probe run.
type Result struct {
	Env        string     `json:"env"`
	Rubric     string     `json:"rubric"`
	Dataset    string     `json:"dataset"`
	Revision   string     `json:"revision"`
	Rows       int        `json:"rows"`
	Honest     Strategy   `json:"honest"`
	Strategies []Strategy `json:"strategies"`
	Vulnerable []string   `json:"vulnerable"`
	// NotApplicable lists search mutations that changed no answer (a
	// mutation of JSON fields on an environment whose answers are text).
	NotApplicable []string `json:"not_applicable,omitempty"`
}

// ErrNoProber is returned for an environment that registers no exploit
// strategies and no policies to mutate.
var ErrNoProber = errors.New("the environment registers no exploit strategies (env.Prober)")

// Run plays the honest baseline, every registered strategy and (with
// cfg.Search) every search mutation on the same rows.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	base, err := cfg.New(cfg.Params)
	if err != nil {
		return nil, err
	}
	pr, ok := base.(env.Prober)
	if !ok {
		return nil, fmt.Errorf("%s: %w", cfg.EnvID, ErrNoProber)
	}
	pp, ok := base.(env.PolicyProvider)
	if !ok {
		return nil, fmt.Errorf("%s: no built-in policies to compare with", cfg.EnvID)
	}
	honestName := pr.HonestPolicy()
	honestPolicy, ok := pp.Policy(honestName)
	if !ok {
		return nil, fmt.Errorf("%s: honest policy %q is not provided", cfg.EnvID, honestName)
	}
	ds, err := base.Load(ctx, cfg.Dataset)
	if err != nil {
		return nil, err
	}
	rows := ds.Examples
	if cfg.Limit > 0 && cfg.Limit < len(rows) {
		rows = rows[:cfg.Limit]
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: the dataset has no rows", cfg.EnvID)
	}
	res := &Result{Env: cfg.EnvID, Rubric: cfg.Rubric, Dataset: ds.Info.ID, Revision: ds.Info.Revision, Rows: len(rows)}
	if res.Rubric == "" {
		res.Rubric = base.Info().DefaultRubric
	}
	keep := func(name string) bool {
		if len(cfg.Only) == 0 {
			return true
		}
		for _, n := range cfg.Only {
			if n == name {
				return true
			}
		}
		return false
	}

	type job struct {
		s      Strategy
		e      env.Environment
		policy env.Policy
		mut    *mutator
	}
	var jobs []job
	for _, x := range pr.Exploits() {
		if !keep(x.Name) {
			continue
		}
		e := base
		if len(x.Params) > 0 {
			merged := map[string]string{}
			for k, v := range cfg.Params {
				merged[k] = v
			}
			for k, v := range x.Params {
				merged[k] = v
			}
			if e, err = cfg.New(merged); err != nil {
				return nil, fmt.Errorf("strategy %s: %w", x.Name, err)
			}
		}
		jobs = append(jobs, job{s: Strategy{Name: x.Name, Family: x.Family, Kind: "registered", Description: x.Description}, e: e, policy: x.Policy})
	}
	if cfg.Search {
		for _, name := range base.Info().Policies {
			p, ok := pp.Policy(name)
			if !ok {
				continue
			}
			for _, m := range mutators() {
				sname := "mutate:" + name + ":" + m.name
				if !keep(sname) {
					continue
				}
				mm := m
				jobs = append(jobs, job{s: Strategy{Name: sname, Family: "generic search: " + m.family, Kind: "search", Description: m.description + " (applied to builtin:" + name + ")"}, e: base, policy: p, mut: &mm})
			}
		}
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("%s: no strategy selected", cfg.EnvID)
	}

	honest := Strategy{Name: honestName, Family: "honest baseline", Kind: "honest", Description: "builtin:" + honestName}
	play(ctx, cfg, base, rows, honestPolicy, nil, &honest)
	if honest.Errors == len(rows) {
		return nil, fmt.Errorf("%s: the honest baseline failed on every row: %s", cfg.EnvID, honest.FirstError)
	}
	res.Honest = honest
	for _, j := range jobs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s := j.s
		play(ctx, cfg, j.e, rows, j.policy, j.mut, &s)
		s.Bound = s.MeanReward
		if s.Kind == "search" {
			s.Bound = s.UnsolvedMean
		}
		if honest.MeanReward > 0 {
			s.ShareHonest = s.Bound / honest.MeanReward
		}
		if s.Kind == "search" && s.Applied == 0 {
			// A mutation that changed no answer is the policy itself.
			res.NotApplicable = append(res.NotApplicable, s.Name)
			continue
		}
		// Earning nothing (0 or less) is not an exploit even where the
		// honest baseline earns nothing either.
		s.Vulnerable = s.Bound >= honest.MeanReward-1e-9 && s.Bound > 0 && s.Rows > 0
		if s.Vulnerable {
			res.Vulnerable = append(res.Vulnerable, s.Name)
		}
		res.Strategies = append(res.Strategies, s)
	}
	sort.SliceStable(res.Strategies, func(a, b int) bool { return res.Strategies[a].Bound > res.Strategies[b].Bound })
	return res, nil
}

// play runs one policy over the rows and fills s.
func play(ctx context.Context, cfg Config, e env.Environment, rows []env.Example, p env.Policy, mut *mutator, s *Strategy) {
	n := cfg.Concurrency
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	type out struct {
		reward  float64
		solved  bool
		applied bool
		comps   map[string]float64
		answer  string
		err     error
	}
	outs := make([]out, len(rows))
	sem := make(chan struct{}, n)
	var wg sync.WaitGroup
	for i, ex := range rows {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			policy := p
			var counter *mutationCounter
			if mut != nil {
				counter = &mutationCounter{}
				policy = mut.wrap(p, counter)
			}
			ro, err := runner.RunEpisode(ctx, llm.Builtin{Policy: policy}, e, ex, runner.EpisodeConfig{})
			if err != nil {
				outs[i].err = fmt.Errorf("row %s: %w", ex.ID, err)
				return
			}
			sc, err := e.Score(ctx, ex, ro, cfg.Rubric)
			if err != nil {
				outs[i].err = fmt.Errorf("score row %s: %w", ex.ID, err)
				return
			}
			outs[i] = out{reward: sc.Total, solved: sc.Solved, comps: sc.Components, answer: ro.FinalText(), applied: counter == nil || counter.changed > 0}
		}()
	}
	wg.Wait()
	var sum, unsolved float64
	for i, o := range outs {
		if o.err != nil {
			s.Errors++
			if s.FirstError == "" {
				s.FirstError = o.err.Error()
			}
			continue
		}
		s.Rows++
		sum += o.reward
		if o.applied {
			s.Applied++
		}
		if o.solved {
			s.Solved++
			continue
		}
		unsolved += o.reward
		if o.applied && (s.Best == nil || o.reward > s.Best.Reward) {
			s.Best = &Example{ID: rows[i].ID, Reward: o.reward, Answer: textclip.Bytes(o.answer, 2000, textclip.Ellipsis), Comps: o.comps}
		}
	}
	if s.Rows > 0 {
		s.MeanReward = round(sum / float64(s.Rows))
		s.UnsolvedMean = round(unsolved / float64(s.Rows))
	}
}

func round(x float64) float64 { return math.Round(x*1e4) / 1e4 }
