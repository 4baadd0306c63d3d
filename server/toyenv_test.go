package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/extract"
)

// toyEnv is a small environment exercising every server path: dataset rows
// with splits, a tool episode, two rubrics, and completions that make Score
// panic ("PANIC"), block until cancelled ("SLOW") or take a fixed time
// ("SLEEP").
type toyEnv struct{}

type toyRow struct {
	ID       string          `json:"id"`
	Question string          `json:"question"`
	Answer   json.RawMessage `json:"answer"`
	Split    string          `json:"split"`
}

func toyRegistry() *env.Registry {
	r := env.NewRegistry()
	r.Register(env.Spec{ID: "toy", Aliases: []string{"t1", "toy-env"}, New: func(env.Options) (env.Environment, error) { return toyEnv{}, nil }})
	return r
}

var lookupTool = env.Tool{Name: "lookup", Description: "Look the question up.", Parameters: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string"}}}`)}

func (toyEnv) Info() env.Info {
	return env.Info{ID: "toy", Aliases: []string{"t1", "toy-env"}, Version: "0.1.0", Rubrics: []string{"default", "strict"},
		DefaultRubric: "default", SystemPrompt: "Answer {\"answer\": \"yes\"|\"no\"}.", MaxTurns: 3, ToolBudget: 4,
		OutputSchema: json.RawMessage(`{"type":"object"}`), Tools: []env.Tool{lookupTool}}
}

func (e toyEnv) Load(ctx context.Context, path string) (*env.Dataset, error) {
	ds := &env.Dataset{}
	if path == "" {
		var raw strings.Builder
		for i := range 20 {
			ans, split := "yes", "train"
			if i%2 == 1 {
				ans = "no"
			}
			if i%5 == 0 {
				split = "test"
			}
			fmt.Fprintf(&raw, `{"id":"q%d","question":"Is %d even?","answer":%q,"split":%q}`+"\n", i, i, ans, split)
		}
		err := dataset.EachLine(strings.NewReader(raw.String()), "embedded:toy", func(_ int, b []byte) error {
			ex, err := e.ParseExample(b)
			ds.Examples = append(ds.Examples, ex)
			return err
		})
		ds.Info = env.DatasetInfo{ID: "embedded:toy", Revision: dataset.Revision([]byte(raw.String())), Rows: len(ds.Examples)}
		return ds, err
	}
	rev, err := dataset.ReadFile(path, func(_ int, b []byte) error {
		ex, err := e.ParseExample(b)
		ds.Examples = append(ds.Examples, ex)
		return err
	})
	ds.Info = env.DatasetInfo{ID: path, Revision: rev, Rows: len(ds.Examples)}
	return ds, err
}

func (toyEnv) ParseExample(raw json.RawMessage) (env.Example, error) {
	var row toyRow
	if err := json.Unmarshal(raw, &row); err != nil {
		return env.Example{}, err
	}
	var ans string
	if err := json.Unmarshal(row.Answer, &ans); err != nil || (ans != "yes" && ans != "no") {
		return env.Example{}, dataset.FieldError("answer", `must be "yes" or "no"`)
	}
	if row.ID == "" {
		row.ID = "inline"
	}
	ex := env.Example{ID: row.ID, Answer: row.Answer, Payload: ans,
		Prompt: []env.Message{{Role: env.RoleSystem, Content: "Answer yes or no."}, {Role: env.RoleUser, Content: row.Question}}}
	if row.Split != "" {
		ex.Meta = map[string]any{"split": row.Split}
	}
	return ex, nil
}

type toyEpisode struct {
	prompt []env.Message
	turns  int
}

func (toyEnv) Start(_ context.Context, ex env.Example) (env.Episode, error) {
	return &toyEpisode{prompt: ex.Prompt}, nil
}

func (t *toyEpisode) Prompt() []env.Message { return t.prompt }
func (t *toyEpisode) Close() error          { return nil }
func (t *toyEpisode) Tools() []env.Tool     { return []env.Tool{lookupTool} }
func (t *toyEpisode) Step(_ context.Context, m env.Message) (env.StepResult, error) {
	t.turns++
	if len(m.ToolCalls) == 0 {
		return env.StepResult{Done: true, Reason: "answered"}, nil
	}
	var res env.StepResult
	for _, tc := range m.ToolCalls {
		res.Messages = append(res.Messages, env.Message{Role: env.RoleTool, ToolCallID: tc.ID, Name: tc.Name, Content: "the encyclopedia says: think carefully"})
		res.ToolCalls = append(res.ToolCalls, env.ToolCallRecord{Name: tc.Name, Arguments: tc.Arguments})
	}
	return res, nil
}

func (toyEnv) Score(ctx context.Context, ex env.Example, r *env.Rollout, rubric string) (env.Score, error) {
	if rubric != "" && rubric != "default" && rubric != "strict" {
		return env.Score{}, fmt.Errorf("unknown rubric %q (rubrics: default, strict)", rubric)
	}
	text := r.FinalText()
	switch text {
	case "PANIC":
		panic("toy scorer exploded")
	case "SLOW":
		<-ctx.Done()
		return env.Score{}, ctx.Err()
	case "SLEEP":
		select {
		case <-time.After(300 * time.Millisecond):
		case <-ctx.Done():
			return env.Score{}, ctx.Err()
		}
	case "ERROR":
		return env.Score{}, errors.New("verifier unavailable")
	}
	want, _ := ex.Payload.(string)
	m, ok := extract.Map(text)
	got, _ := m["answer"].(string)
	components := map[string]float64{"correct": 0, "format": 0}
	if ok && (got == "yes" || got == "no") {
		components["format"] = 1
	}
	if got == want {
		components["correct"] = 1
	}
	w := map[string]float64{"correct": 1, "format": 0.1}
	if rubric == "strict" {
		w["format"] = 0
	}
	total := 0.0
	for k, v := range components {
		total += w[k] * v
	}
	return env.Score{Total: total, Components: components, Weights: w, Parsed: map[string]any{"answer": got}, Rubric: rubric}, nil
}
