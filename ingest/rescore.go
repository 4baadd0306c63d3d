package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
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
	for _, m := range row.Completion {
		if m.Role != env.RoleAssistant {
			continue
		}
		res.Turns++
		for _, c := range m.ToolCalls {
			res.ToolCalls = append(res.ToolCalls, env.ToolCallRecord{Turn: res.Turns, Name: c.Name, Arguments: c.Arguments})
		}
	}
	keepRecorded := func() {
		if tr.Reward != nil {
			res.Reward = *tr.Reward
		}
		res.Components = tr.Components
	}
	ex, err := e.ParseExample(row.Normalized)
	if err != nil {
		res.ScoreError = fmt.Sprintf("row does not parse as a %s example: %v", e.Info().ID, err)
		keepRecorded()
		return res
	}
	res.ExampleID, res.Meta = ex.ID, ex.Meta
	if len(res.Prompt) == 0 {
		res.Prompt = ex.Prompt
	}
	ro := &env.Rollout{Completion: row.Completion, Turns: res.Turns, ToolCalls: res.ToolCalls}
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
	solved := sc.Solved
	res.Reward, res.Components, res.Weights, res.Solved = sc.Total, sc.Components, sc.Weights, &solved
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
	for _, k := range SortedNames(res.Trainer.Components) {
		if v, ok := res.Components[k]; ok && math.Abs(v-res.Trainer.Components[k]) > RewardTolerance {
			a.Components = append(a.Components, k)
		}
	}
	return a
}
