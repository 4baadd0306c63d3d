package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/env/judgeutil"
)

// RewardTolerance is how far a re-scored reward may sit from the recorded
// one and still count as reproduced (float formatting in trainer logs).
const RewardTolerance = 1e-6

// Rescore turns a decoded trainer row into svbench's result row: the
// environment parses the example and scores the completion with the rubric.
// pos is the row's position in its file; it stands in for the example index
// when the trainer recorded no numeric problem id.
//
// A row the environment cannot re-verify keeps the trainer's recorded
// reward and components and says why in Unverifiable; a broken row keeps
// them too, with ScoreError set. Nothing is scored 0 silently.
func Rescore(ctx context.Context, e env.Environment, rubric string, row *Row, pos int) artifact.Result {
	tr := row.Trainer
	res := artifact.Result{
		Index:      pos,
		Prompt:     row.Prompt,
		Answer:     row.Answer,
		Completion: row.Completion,
		FinalText:  env.LastAssistantText(row.Completion),
		Rubric:     rubric,
		Trainer:    &tr,
		RunID:      tr.RunID,
	}
	if id, err := strconv.Atoi(tr.ProblemID); err == nil && id >= 0 {
		res.Index = id
	}
	if s, err := strconv.Atoi(tr.SampleID); err == nil && s >= 0 {
		res.Rollout = s
	}
	counted := env.RecordedRollout(row.Completion)
	res.Turns, res.ToolCalls = counted.Turns, counted.ToolCalls
	keepRecorded := func() {
		if tr.Reward != nil {
			res.Reward = *tr.Reward
		}
		res.Components = tr.Components
	}
	var ex env.Example
	var err error
	switch {
	case row.Example != nil:
		ex = *row.Example
	case row.JoinID != "":
		res.ScoreError = fmt.Sprintf("example %q was not joined to a dataset (ingest.Load joins rows by id)", row.JoinID)
		keepRecorded()
		return res
	case row.ExampleRow != nil:
		ex, err = e.ParseExample(row.ExampleRow)
	default:
		ex, err = e.ParseExample(row.Normalized)
	}
	if err != nil {
		res.ScoreError = fmt.Sprintf("row does not parse as a %s example: %v", e.Info().ID, err)
		keepRecorded()
		return res
	}
	res.ExampleID, res.Meta = ex.ID, ex.Meta
	if len(res.Answer) == 0 {
		res.Answer = ex.Answer // joined by id: the row held no answer
	}
	if len(res.Prompt) == 0 {
		res.Prompt = ex.Prompt
	}
	seen := row.Completion
	if row.ScoredBy == "" {
		// The recorded reward was computed on the text the environment
		// saw, which the export may no longer show as such (reasoning
		// split off afterwards): score that text, and show it. svbench's
		// own scoring never read reasoning, so its rows stay as they are.
		var how string
		seen, how = SeenCompletion(e, row.Completion)
		tr.Rebuilt = how
	}
	res.Completion, res.FinalText = seen, env.LastAssistantText(seen)
	ro := env.RecordedRollout(seen)
	sc, err := e.Score(ctx, ex, ro, rubric)
	switch {
	case errors.Is(err, env.ErrUnverifiable):
		res.Unverifiable = err.Error()
		keepRecorded()
		return res
	case err != nil:
		res.ScoreError = err.Error()
		keepRecorded()
		return res
	}
	if tr.Reward == nil {
		deriveRecordedReward(&tr, sc)
	}
	solved := sc.Solved
	res.Reward, res.Components, res.Weights, res.Solved = sc.Total, sc.Components, sc.Weights, &solved
	exec := sc.Total
	tr.Executable, tr.ExecutableComponents = &exec, sc.Components
	keepJudge(&res, &tr, sc)
	// Reports read Parsed as results.jsonl gives it back (JSON values, not
	// the environment's Go types): round-trip it so a re-scored row looks
	// exactly like one read from a run.
	if b, err := json.Marshal(sc.Parsed); err == nil {
		_ = json.Unmarshal(b, &res.Parsed)
	}
	if sc.Rubric != "" {
		res.Rubric = sc.Rubric
	}
	return res
}

// Agreement compares a re-scored row with what the trainer recorded.
type Agreement struct {
	Recorded  float64 `json:"recorded_reward"`
	Rescored  float64 `json:"rescored_reward"`
	Delta     float64 `json:"delta"`
	Reproduce bool    `json:"reproduced"`
	// Components lists the components whose recorded and re-scored values
	// differ beyond RewardTolerance.
	Components []string `json:"differing_components,omitempty"`
}

// Compare reports how a re-scored row agrees with the recorded reward; nil
// when the trainer recorded none or the row was not re-scored.
func Compare(res *artifact.Result) *Agreement {
	if res.Trainer == nil || res.Trainer.Reward == nil || res.Unverifiable != "" || res.ScoreError != "" {
		return nil
	}
	a := &Agreement{Recorded: *res.Trainer.Reward, Rescored: res.Reward}
	a.Delta = a.Rescored - a.Recorded
	a.Reproduce = math.Abs(a.Delta) <= RewardTolerance
	for _, k := range slices.Sorted(maps.Keys(res.Trainer.Components)) {
		if v, ok := res.Components[k]; ok && math.Abs(v-res.Trainer.Components[k]) > RewardTolerance {
			a.Components = append(a.Components, k)
		}
	}
	return a
}

// JudgeWeight is the weight of a recorded judge component in the reward the
// reference trained on: its hybrid rubric is a RubricGroup of the executable
// rubric and a judge rubric whose one function has weight 1.0, and its
// llm_judge rubric is that judge rubric alone.
const JudgeWeight = 1.0

// keepJudge carries a recorded LLM-judge verdict into the re-scored row: a
// judge cannot be re-asked deterministically, so its component is kept as
// recorded and said so. A row whose only recorded component is the judge's
// (reward_source=llm_judge) keeps the judge reward as its reward; a hybrid
// row gets the executable re-score plus the recorded judge. Either way
// Trainer.Executable keeps the executable verifier's own score.
func keepJudge(res *artifact.Result, tr *artifact.Trainer, sc env.Score) {
	j, ok := tr.Components[judgeutil.Component]
	if !ok {
		return
	}
	if _, scored := sc.Components[judgeutil.Component]; scored {
		return
	}
	if len(tr.Components) == 1 {
		res.Reward = JudgeWeight * j
		res.Components = map[string]float64{judgeutil.Component: j}
		res.Weights = map[string]float64{judgeutil.Component: JudgeWeight}
		tr.Kept = "reward is the recorded LLM-judge verdict (reward_source llm_judge; a judge cannot be re-asked deterministically); executable_reward is svbench's executable re-score"
		return
	}
	comps := make(map[string]float64, len(sc.Components)+1)
	weights := make(map[string]float64, len(sc.Weights)+1)
	maps.Copy(comps, sc.Components)
	maps.Copy(weights, sc.Weights)
	comps[judgeutil.Component], weights[judgeutil.Component] = j, JudgeWeight
	res.Components, res.Weights = comps, weights
	res.Reward = sc.Total + JudgeWeight*j
	tr.Kept = "judge component kept as recorded (a judge cannot be re-asked deterministically); the other components re-scored"
}

// deriveRecordedReward gives a row that logged its components but no total
// (TRL: one column per reward function; the weights live in GRPOConfig)
// the total those components make under the rubric's weights, which is the
// reward TRL trained on when reward_weights were the rubric's
// (svbench.trl_reward_weights). Only when every weighted component was
// recorded; Load says so of the run (Run.Derived).
func deriveRecordedReward(tr *artifact.Trainer, sc env.Score) {
	if len(tr.Components) == 0 || len(sc.Weights) == 0 {
		return
	}
	total := 0.0
	for k, w := range sc.Weights {
		v, ok := tr.Components[k]
		if !ok {
			return
		}
		total += w * v
	}
	tr.Reward = &total
}
