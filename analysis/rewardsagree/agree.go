// Package rewardsagree is the reward-source study: it re-scores the same
// rollouts with an environment's executable rubric, an LLM judge and the
// hybrid of both, and measures how far the sources agree — per-row reward
// agreement, correlation, solved × judge-verdict confusion, a breakdown by
// gold and predicted label — lists the rows where judge and verifier
// disagree, and states what judging cost.
//
// Because every source scores the very same rollouts, the budgets of the
// reference's compare_rewards.py (environment, dataset and revision,
// split, model, steps, rollouts, max tokens, max turns, tool budget,
// trainer) are equal by construction; the report records them, and a run
// that did not complete is refused as the reference refuses one.
package rewardsagree

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/env/judgeutil"
)

// Sources in report order.
var Sources = []string{judgeutil.SourceExecutable, judgeutil.SourceJudge, judgeutil.SourceHybrid}

// ErrNoJudgeSource is returned for an environment that offers no
// llm_judge/hybrid reward source.
var ErrNoJudgeSource = errors.New("environment has no llm_judge/hybrid reward source")

// Environments builds the named environment once per reward source with
// the run's other parameters. It refuses an environment whose declared
// reward_source parameter lacks llm_judge or hybrid.
func Environments(reg *env.Registry, name string, params map[string]string, judge env.Model) (map[string]env.Environment, error) {
	specs, err := reg.Params(name)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(specs, func(p env.ParamSpec) bool { return p.Name == "reward_source" })
	if i < 0 || !slices.Contains(specs[i].Values, judgeutil.SourceJudge) || !slices.Contains(specs[i].Values, judgeutil.SourceHybrid) {
		return nil, fmt.Errorf("%s: %w (only environments declaring reward_source=llm_judge|hybrid can be studied)", name, ErrNoJudgeSource)
	}
	if judge == nil {
		return nil, fmt.Errorf("the study needs a judge model (--judge-model)")
	}
	out := map[string]env.Environment{}
	for _, s := range Sources {
		p := maps.Clone(params)
		if p == nil {
			p = map[string]string{}
		}
		p["reward_source"] = s
		e, err := reg.New(name, env.Options{Params: p, Models: judgeutil.Models(judge)})
		if err != nil {
			return nil, fmt.Errorf("building %s with reward_source=%s: %w", name, s, err)
		}
		out[s] = e
	}
	return out, nil
}

// Run is a run directory's metadata and rows.
type Run struct {
	Dir      string
	Meta     *artifact.Metadata
	Manifest *artifact.Manifest
	Results  []artifact.Result
}

// Load reads a run directory (metadata.json and results.jsonl required;
// run_manifest.json when present).
func Load(dir string) (*Run, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("run %s: want a run directory (with metadata.json and results.jsonl)", dir)
	}
	meta, err := artifact.ReadMetadata(dir)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	rows, err := artifact.ReadResults(filepath.Join(dir, artifact.ResultsFile))
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", dir, err)
	}
	r := &Run{Dir: dir, Meta: meta, Results: rows}
	if b, err := os.ReadFile(filepath.Join(dir, artifact.ManifestFile)); err == nil {
		var m artifact.Manifest
		if json.Unmarshal(b, &m) == nil {
			r.Manifest = &m
		}
	}
	if r.Manifest == nil {
		turns, budget := meta.EpisodeLimits()
		r.Manifest = artifact.ManifestFor(meta, deref(turns), deref(budget))
	}
	return r, nil
}

// Verdict is one source's score of one rollout.
type Verdict struct {
	Reward     float64            `json:"reward"`
	Solved     bool               `json:"solved"`
	Components map[string]float64 `json:"components,omitempty"`
	// Judge is the judge component when the source has one.
	Judge *float64 `json:"judge,omitempty"`
	// Error is why the source could not score the row; JudgeFailed marks
	// the judge's failures (endpoint errors, replies neither yes nor no).
	Error       string `json:"error,omitempty"`
	JudgeFailed bool   `json:"judge_failed,omitempty"`
}

// Row is one rollout scored by every source.
type Row struct {
	Index     int                 `json:"index"`
	ExampleID string              `json:"example_id,omitempty"`
	Rollout   int                 `json:"rollout"`
	Gold      string              `json:"gold,omitempty"`
	Predicted string              `json:"predicted,omitempty"`
	FinalText string              `json:"final_text"`
	Sources   map[string]*Verdict `json:"sources"`
}

// scored says whether every source scored the row.
func (r *Row) scored() bool {
	for _, s := range Sources {
		if v := r.Sources[s]; v == nil || v.Error != "" {
			return false
		}
	}
	return true
}

// Rescore scores every row that has a model answer with each source,
// workers rows at a time. The sources of one row run in order, so the
// hybrid's judge question is answered from the cache the llm_judge source
// filled. Rows whose model call failed are skipped and counted.
func Rescore(ctx context.Context, envs map[string]env.Environment, results []artifact.Result, rubric string, workers int) (rows []Row, modelErrors int, err error) {
	var todo []int
	for i := range results {
		if results[i].Error != "" {
			modelErrors++
			continue
		}
		todo = append(todo, i)
	}
	rows = make([]Row, len(todo))
	workers = max(1, min(workers, len(todo)))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				rows[k] = rescoreOne(ctx, envs, &results[todo[k]], rubric)
			}
		}()
	}
	for k := range todo {
		select {
		case next <- k:
		case <-ctx.Done():
			close(next)
			wg.Wait()
			return nil, modelErrors, ctx.Err()
		}
	}
	close(next)
	wg.Wait()
	return rows, modelErrors, ctx.Err()
}

func rescoreOne(ctx context.Context, envs map[string]env.Environment, res *artifact.Result, rubric string) (row Row) {
	row = Row{Index: res.Index, ExampleID: res.ExampleID, Rollout: res.Rollout, FinalText: res.FinalText, Sources: map[string]*Verdict{}}
	if row.ExampleID == "" {
		row.ExampleID = "#" + strconv.Itoa(res.Index)
	}
	var gold string
	if json.Unmarshal(res.Answer, &gold) == nil {
		row.Gold = gold
	}
	ro := &env.Rollout{Completion: res.Completion, ToolCalls: res.ToolCalls, Turns: res.Turns, StopReason: res.StopReason, Usage: res.Usage}
	if len(ro.Completion) == 0 && res.FinalText != "" {
		ro.Completion = []env.Message{{Role: env.RoleAssistant, Content: res.FinalText}}
	}
	for _, s := range Sources {
		v, pred := scoreWith(ctx, envs[s], res, ro, rubric)
		row.Sources[s] = v
		if s == judgeutil.SourceExecutable {
			row.Predicted = pred
		}
	}
	return row
}

// scoreWith scores one rollout with one source and returns the verdict and
// the predicted label the parse read (when the environment reports one).
func scoreWith(ctx context.Context, e env.Environment, res *artifact.Result, ro *env.Rollout, rubric string) (v *Verdict, predicted string) {
	v = &Verdict{}
	defer func() {
		if r := recover(); r != nil {
			v = &Verdict{Error: fmt.Sprintf("internal error scoring this row: %v", r)}
		}
	}()
	ex, err := example(e, res)
	if err != nil {
		v.Error = err.Error()
		return v, ""
	}
	s, err := e.Score(ctx, ex, ro, rubric)
	if err != nil {
		v.Error = err.Error()
		v.JudgeFailed = errors.Is(err, judgeutil.ErrJudge)
		return v, ""
	}
	v.Reward, v.Solved, v.Components = s.Total, s.Solved, s.Components
	if j, ok := s.Components[judgeutil.Component]; ok {
		v.Judge = &j
	}
	if p, ok := s.Parsed["predicted_label"].(string); ok {
		predicted = p
	}
	return v, predicted
}

// example rebuilds the example a results row was scored on: the
// environment parses the row's id, answer, metadata and prompt, and keeps
// the recorded prompt when its row format has no place for one.
func example(e env.Environment, res *artifact.Result) (env.Example, error) {
	ex, err := env.Rehydrate(e, env.Example{ID: res.ExampleID, Answer: res.Answer, Meta: res.Meta, Prompt: res.Prompt})
	if err != nil {
		return env.Example{}, fmt.Errorf("row %d: %w", res.Index, err)
	}
	if len(ex.Prompt) == 0 {
		ex.Prompt = res.Prompt
	}
	if ex.ID == "" {
		ex.ID = res.ExampleID
	}
	return ex, nil
}

// deref is a limit the run may not have recorded; 0 (unknown) when it did not.
func deref(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}
