package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
)

// NeMo Gym's ng_collect_rollouts (gym eval run) writes one line per
// rollout to its output JSONL: the agent's verify response, which is the
// verify request echoed (the dataset row with "responses_create_params",
// the Responses API "response" of the rollout) plus "reward" and whatever
// the resources server added (BaseMultiRewardVerifyResponse's
// "reward_components"), and the collector's "_ng_task_index",
// "_ng_rollout_index" and "agent_ref". svbench's resources server (svbench
// serve) also answers "svbench_env", "svbench_solved", "svbench_rubric"
// and the row's "verifier_metadata" names the example:
// {"env", "example_id" | "example" | "answer", "rubric"}.
const (
	ngTaskIndex    = "_ng_task_index"
	ngRolloutIndex = "_ng_rollout_index"
)

// isNemoGymRow: a verify response has the request's two fields and the
// reward; nothing else svbench reads has responses_create_params.
func isNemoGymRow(m map[string]json.RawMessage) bool {
	for _, k := range []string{"responses_create_params", "response", "reward"} {
		if _, ok := m[k]; !ok {
			return false
		}
	}
	return true
}

// fromNemoGym rewrites a NeMo Gym rollout line into the fields decodeMap
// reads (prompt, completion, answer, reward, problem_id, sample_id,
// env_name) and returns what only this format carries; nil for a row of
// another shape.
func fromNemoGym(m map[string]json.RawMessage) (*nemoGymRow, error) {
	if !isNemoGymRow(m) {
		return nil, nil
	}
	var params struct {
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(m["responses_create_params"], &params); err != nil {
		return nil, fmt.Errorf(`NeMo Gym rollout: field "responses_create_params": %w`, err)
	}
	var resp struct {
		Output []llm.ResponseItem `json:"output"`
	}
	if err := json.Unmarshal(m["response"], &resp); err != nil {
		return nil, fmt.Errorf(`NeMo Gym rollout: field "response": want a Responses API response: %w`, err)
	}
	prompt, err := responseInput(params.Input)
	if err != nil {
		return nil, fmt.Errorf(`NeMo Gym rollout: field "responses_create_params.input": %w`, err)
	}
	completion, _ := llm.TranscriptFromResponse(resp.Output)
	out := &nemoGymRow{}
	var meta struct {
		Env       string          `json:"env"`
		ExampleID json.RawMessage `json:"example_id"`
		Example   json.RawMessage `json:"example"`
		Answer    json.RawMessage `json:"answer"`
		Rubric    string          `json:"rubric"`
	}
	if raw, ok := m["verifier_metadata"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		if err := json.Unmarshal(raw, &meta); err != nil {
			return nil, fmt.Errorf(`NeMo Gym rollout: field "verifier_metadata": %w`, err)
		}
	}
	switch {
	case present(meta.Example):
		out.example = meta.Example
	case present(meta.ExampleID):
		id, err := idField(map[string]json.RawMessage{"example_id": meta.ExampleID}, "example_id")
		if err != nil {
			return nil, fmt.Errorf("NeMo Gym rollout: verifier_metadata: %w", err)
		}
		out.joinID = id
	case present(meta.Answer):
		if _, ok := m["answer"]; !ok {
			m["answer"] = meta.Answer
		}
	}
	out.rubric = meta.Rubric
	if s, ok := stringValue(m["svbench_rubric"]); ok && s != "" {
		out.rubric = s
	}
	envName := meta.Env
	if s, ok := stringValue(m["svbench_env"]); ok && s != "" {
		envName = s
		out.scoredBy = `NeMo Gym verify response of svbench serve ("svbench_env")`
	}
	if _, ok := m["env_name"]; !ok && envName != "" {
		m["env_name"], _ = json.Marshal(envName)
	}
	// reward_components are the resources server's own component names
	// (svbench's when svbench served them); the same values repeated as
	// top-level numbers are there only for NeMo Gym's metrics profiler.
	if raw, ok := m["reward_components"]; ok && string(bytes.TrimSpace(raw)) != "null" {
		var comps map[string]json.RawMessage
		if err := json.Unmarshal(raw, &comps); err != nil {
			return nil, fmt.Errorf(`NeMo Gym rollout: field "reward_components": want an object of numbers: %w`, err)
		}
		out.components = map[string]float64{}
		for k, v := range comps {
			if f, ok := number(v); ok {
				out.components[k] = f
			}
		}
	}
	for from, to := range map[string]string{ngTaskIndex: "problem_id", ngRolloutIndex: "sample_id"} {
		if v, ok := m[from]; ok {
			if _, taken := m[to]; !taken {
				m[to] = v
			}
		}
	}
	pb, _ := json.Marshal(prompt)
	cb, _ := json.Marshal(completion)
	m["prompt"], m["completion"] = pb, cb
	for _, k := range []string{"responses_create_params", "response", "reward_components", "verifier_metadata"} {
		delete(m, k)
	}
	return out, nil
}

type nemoGymRow struct {
	example    json.RawMessage
	joinID     string
	rubric     string
	scoredBy   string
	components map[string]float64
}

func present(v json.RawMessage) bool {
	t := bytes.TrimSpace(v)
	return len(t) > 0 && string(t) != "null"
}

// responseInput reads responses_create_params.input: a string (one user
// message) or a list of input items.
func responseInput(raw json.RawMessage) ([]env.Message, error) {
	if !present(raw) {
		return nil, nil
	}
	if s, ok := stringValue(raw); ok {
		return []env.Message{{Role: env.RoleUser, Content: s}}, nil
	}
	var items []llm.ResponseItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("want a string or a list of input items: %w", err)
	}
	msgs, _ := llm.TranscriptFromResponse(items)
	return msgs, nil
}
