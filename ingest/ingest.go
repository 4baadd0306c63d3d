// Package ingest reads rollout rows that other tools wrote — the verifiers /
// prime-rl training pipeline the reference uses, vf-eval result files — and
// turns them into svbench's own forms: an environment row ParseExample
// accepts, the completion as messages, and the trainer's bookkeeping (step,
// problem and sample ids, advantage, the reward and components it recorded)
// kept for later analysis.
//
// Those rows store several fields as JSON text inside a JSON string
// ("prompt", "completion", "info", "metrics"); a reader that takes them at
// face value scores a chat transcript as if it were the answer. Normalize
// decodes them, bounded by the row size the caller already enforced.
package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/base/clip"
	"github.com/svbench/svbench/env"
)

// trainerKeys mark a row as a trainer's: svbench's own rows never carry them.
var trainerKeys = []string{"metrics", "step", "problem_id", "sample_id", "advantage", "env_name"}

// IsTrainerRow reports whether a decoded row looks like a trainer's rollout
// row rather than svbench's results row or a plain scoring row.
func IsTrainerRow(m map[string]json.RawMessage) bool {
	if _, ok := m["final_text"]; ok {
		return false // svbench's artifact.Result
	}
	if isNemoGymRow(m) {
		return true
	}
	for _, k := range trainerKeys {
		if _, ok := m[k]; ok {
			return true
		}
	}
	for _, k := range []string{"prompt", "completion"} {
		if v, ok := m[k]; ok {
			if _, isMsgs := messagesInString(v); isMsgs {
				return true
			}
		}
	}
	// vf-eval's rows: a completion with the reward the environment gave
	// it at the top level. Read as a trainer's row, the recorded reward
	// is compared with svbench's re-score instead of dropped unchecked.
	if _, ok := m["completion"]; ok {
		var reward float64
		if v, ok := m["reward"]; ok && json.Unmarshal(v, &reward) == nil {
			return true
		}
	}
	return false
}

// Row is one decoded trainer row.
type Row struct {
	// Normalized is the row with string-encoded JSON fields decoded, ready
	// for an environment's ParseExample.
	Normalized json.RawMessage
	Prompt     []env.Message
	Completion []env.Message
	Answer     json.RawMessage
	Trainer    artifact.Trainer
	// Format names the writer the row's shape identifies (Format*).
	Format string
	// ExampleRow is the dataset row the trainer sent with the rollout
	// (NeMo Gym's verifier_metadata.example); when set it is parsed
	// instead of Normalized.
	ExampleRow json.RawMessage
	// JoinID is the dataset example the row answered when the row itself
	// holds no more than its id (a TRL completions table, NeMo Gym's
	// verifier_metadata.example_id); Load joins it to the dataset.
	JoinID string
	// Example is the joined example; Rescore scores against it.
	Example *env.Example
	// Rubric is the rubric the row records it was scored with ("" when it
	// records none).
	Rubric string
	// ScoredBy names what marks the row as scored by svbench itself (its
	// server or its Python client), "" otherwise. Such rows were scored on
	// the content svbench saw, with svbench's default rubric unless they
	// name another.
	ScoredBy string
}

// The formats Decode tells apart.
const (
	FormatVerifiers = "verifiers" // verifiers / prime-rl rows, vf-eval results
	FormatVerl      = "verl"      // verl's rollout_data_dir/{step}.jsonl
	FormatTRL       = "trl"       // TRL's completions_<step>.parquet
	FormatNemoGym   = "nemo-gym"  // ng_collect_rollouts output
)

// Decode parses one trainer row. It fails only when the row is not a JSON
// object or a field has a type no trainer writes; the error names the field.
func Decode(raw []byte) (*Row, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", err)
	}
	return decodeMap(m)
}

func decodeMap(m map[string]json.RawMessage) (*Row, error) {
	row := &Row{Format: FormatVerifiers}
	ng, nerr := fromNemoGym(m)
	if nerr != nil {
		return nil, nerr
	}
	verl, verr := fromVerlDump(m)
	if verr != nil {
		return nil, verr
	}
	if verl != nil {
		row.Format = FormatVerl
		if _, ok := m["svbench_error"]; ok {
			row.ScoredBy = `svbench's verl compute_score ("svbench_error" column)`
		}
	}
	if s, ok := stringValue(m["svbench_rubric"]); ok {
		row.Rubric = s
	}
	for _, k := range []string{"prompt", "completion"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		if msgs, isMsgs := messagesInString(v); isMsgs {
			b, err := json.Marshal(msgs)
			if err != nil {
				return nil, fmt.Errorf("field %q: %w", k, err)
			}
			m[k] = b
		}
		var c env.Completion
		if err := json.Unmarshal(m[k], &c); err != nil {
			return nil, fmt.Errorf("field %q: %w", k, err)
		}
		if k == "prompt" {
			row.Prompt = c.Messages
		} else {
			row.Completion = c.Messages
		}
	}
	// "info" and "answer" may hold an object as JSON text; "" means none.
	for _, k := range []string{"info", "answer"} {
		v, ok := m[k]
		if !ok {
			continue
		}
		if s, isStr := stringValue(v); isStr {
			t := strings.TrimSpace(s)
			switch {
			case t == "":
				// verifiers writes "" for "none"; an environment reads
				// its labels from elsewhere in the row (E2: info).
				delete(m, k)
			case strings.HasPrefix(t, "{") && json.Valid([]byte(t)):
				m[k] = json.RawMessage(t)
			}
		}
	}
	row.Answer = m["answer"]

	tr := &row.Trainer
	var err error
	if tr.Step, err = intField(m, "step"); err != nil {
		return nil, err
	}
	if tr.ProblemID, err = idField(m, "problem_id"); err != nil {
		return nil, err
	}
	if tr.SampleID, err = idField(m, "sample_id"); err != nil {
		return nil, err
	}
	if tr.Advantage, err = floatField(m, "advantage"); err != nil {
		return nil, err
	}
	if tr.Reward, err = floatField(m, "reward"); err != nil {
		return nil, err
	}
	tr.RunID, _ = stringValue(m["run_id"])
	tr.EnvName, _ = stringValue(m["env_name"])

	metrics, err := metricsField(m)
	if err != nil {
		return nil, err
	}
	// verl's reward_extra_info columns are the reward function's own
	// components (svbench's compute_score: one per component, and
	// svbench_error, which is a flag, not a component).
	for k, v := range verl {
		if strings.HasPrefix(k, "svbench_") {
			metrics[k] = v
			continue
		}
		if tr.Components == nil {
			tr.Components = map[string]float64{}
		}
		tr.Components[k] = v
	}
	for name, v := range metrics {
		if envID, comp, ok := ClientName(name); ok {
			row.ScoredBy = fmt.Sprintf("svbench's Python client (%q)", name)
			if tr.EnvName == "" {
				tr.EnvName = envID
			}
			if comp == "reward" {
				// The total (one function with components=False): the
				// reward the trainer trained on.
				if tr.Reward == nil {
					x := v
					tr.Reward = &x
				}
				continue
			}
		}
		if comp, ok := ComponentName(name); ok {
			if tr.Components == nil {
				tr.Components = map[string]float64{}
			}
			tr.Components[comp] = v
			continue
		}
		if tr.Metrics == nil {
			tr.Metrics = map[string]float64{}
		}
		tr.Metrics[name] = v
	}
	if ng != nil {
		row.Format = FormatNemoGym
		row.ExampleRow, row.JoinID = ng.example, ng.joinID
		if ng.rubric != "" {
			row.Rubric = ng.rubric
		}
		if ng.scoredBy != "" {
			row.ScoredBy = ng.scoredBy
		}
		if len(ng.components) > 0 {
			tr.Components = ng.components
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	row.Normalized = b
	return row, nil
}

// verlDumpKeys are the fields verl's trainer writes to each line of
// rollout_data_dir/{step}.jsonl (RayPPOTrainer._dump_generations): the
// decoded prompt and response, the ground truth, the summed token-level
// score and the step; every other key is a list its reward function
// returned in reward_extra_info (svbench's compute_score: one per
// component, and svbench_error).
var verlDumpKeys = []string{"input", "output", "gts", "score", "step"}

// fromVerlDump rewrites a verl rollout dump line into the fields the rest
// of decodeMap reads (prompt, completion, answer, reward) and returns its
// numeric reward_extra_info values; nil, nil for a row of another shape.
func fromVerlDump(m map[string]json.RawMessage) (map[string]float64, error) {
	for _, k := range verlDumpKeys {
		if _, ok := m[k]; !ok {
			return nil, nil
		}
	}
	if _, ok := m["completion"]; ok {
		return nil, nil
	}
	in, okIn := stringValue(m["input"])
	out, okOut := stringValue(m["output"])
	if !okIn || !okOut {
		return nil, fmt.Errorf(`verl rollout dump: fields "input" and "output" must be strings (the decoded prompt and response)`)
	}
	msg := func(role env.Role, text string) json.RawMessage {
		b, _ := json.Marshal([]env.Message{{Role: role, Content: text}})
		return b
	}
	m["prompt"], m["completion"] = msg(env.RoleUser, in), msg(env.RoleAssistant, out)
	if _, ok := m["answer"]; !ok {
		m["answer"] = m["gts"]
	}
	if _, ok := m["reward"]; !ok {
		m["reward"] = m["score"]
	}
	extra := map[string]float64{}
	for k, v := range m {
		if slices.Contains(verlDumpKeys, k) || k == "prompt" || k == "completion" || k == "answer" || k == "reward" {
			continue
		}
		if x, ok := number(v); ok {
			extra[k] = x
		}
	}
	return extra, nil
}

// ComponentName maps a reference reward function's name to svbench's
// component name: reward_accuracy → accuracy, format_reward → format,
// reward_config_auditing → config_auditing, judge_reward → judge. Names that
// are not reward functions (num_turns, run_opa_calls) report false.
func ComponentName(name string) (string, bool) {
	switch {
	case name == "reward":
		return "", false
	case strings.HasPrefix(name, "svbench_"):
		// svbench's own names: the Python client's functions, or flags
		// (svbench_error) that are not components.
		if _, comp, ok := ClientName(name); ok && comp != "reward" {
			return comp, true
		}
		return "", false
	case strings.HasPrefix(name, "reward_"):
		return strings.TrimPrefix(name, "reward_"), true
	case strings.HasSuffix(name, "_reward"):
		return strings.TrimSuffix(name, "_reward"), true
	}
	return "", false
}

// metricsField collects numeric metrics from "metrics" (an object, or one
// as JSON text) and from top-level reward columns (vf-eval writes each
// reward function as its own column).
func metricsField(m map[string]json.RawMessage) (map[string]float64, error) {
	out := map[string]float64{}
	if v, ok := m["metrics"]; ok {
		raw := []byte(v)
		if s, isStr := stringValue(v); isStr {
			raw = []byte(s)
			if strings.TrimSpace(s) == "" {
				raw = nil
			}
		}
		if len(raw) > 0 && string(bytes.TrimSpace(raw)) != "null" {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(raw, &obj); err != nil {
				return nil, fmt.Errorf("field \"metrics\": want an object of numbers (or one as JSON text): %w", err)
			}
			for k, x := range obj {
				if f, ok := number(x); ok {
					out[k] = f
				}
			}
		}
	}
	for k, v := range m {
		_, isComp := ComponentName(k)
		_, _, isClient := ClientName(k)
		if !isComp && !isClient {
			continue
		}
		if f, ok := number(v); ok {
			out[k] = f
		}
	}
	return out, nil
}

// messagesInString reports whether v is a JSON string whose text is a list
// of chat messages (every element an object with a known role).
func messagesInString(v json.RawMessage) ([]env.Message, bool) {
	s, ok := stringValue(v)
	if !ok {
		return nil, false
	}
	t := strings.TrimSpace(s)
	if !strings.HasPrefix(t, "[") {
		return nil, false
	}
	msgs, err := decodeMessages([]byte(t))
	if err != nil || len(msgs) == 0 {
		return nil, false
	}
	for _, m := range msgs {
		switch m.Role {
		case env.RoleSystem, env.RoleUser, env.RoleAssistant, env.RoleTool:
		default:
			return nil, false
		}
	}
	return msgs, true
}

func stringValue(v json.RawMessage) (string, bool) {
	if len(v) == 0 || v[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		return "", false
	}
	return s, true
}

// number reads a JSON number, a boolean (verifiers logs some metrics as
// booleans) or a numeric string; non-finite values are dropped.
func number(v json.RawMessage) (float64, bool) {
	var x any
	if json.Unmarshal(v, &x) != nil {
		return 0, false
	}
	var f float64
	switch t := x.(type) {
	case float64:
		f = t
	case bool:
		if t {
			f = 1
		}
	case string:
		p, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
		if err != nil {
			return 0, false
		}
		f = p
	default:
		return 0, false
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, false
	}
	return f, true
}

func floatField(m map[string]json.RawMessage, k string) (*float64, error) {
	v, ok := m[k]
	if !ok || string(v) == "null" {
		return nil, nil
	}
	f, ok := number(v)
	if !ok {
		return nil, fmt.Errorf("field %q: want a number, got %s", k, clip.Bytes(string(v), 40, clip.Ellipsis))
	}
	return &f, nil
}

func intField(m map[string]json.RawMessage, k string) (*int64, error) {
	f, err := floatField(m, k)
	if err != nil || f == nil {
		return nil, err
	}
	if *f != math.Trunc(*f) {
		return nil, fmt.Errorf("field %q: want an integer, got %v", k, *f)
	}
	i := int64(*f)
	return &i, nil
}

// idField accepts a number or a string id (trainers write both).
func idField(m map[string]json.RawMessage, k string) (string, error) {
	v, ok := m[k]
	if !ok || string(v) == "null" {
		return "", nil
	}
	if s, isStr := stringValue(v); isStr {
		return s, nil
	}
	f, ok := number(v)
	if !ok {
		return "", fmt.Errorf("field %q: want a number or a string, got %s", k, clip.Bytes(string(v), 40, clip.Ellipsis))
	}
	return strconv.FormatFloat(f, 'f', -1, 64), nil
}

// decodeMessages reads a list of chat messages as trainers write them. Some
// (verifiers' hosted exports) store each tool call as JSON text inside a
// string ("tool_calls": ["{\"id\": …, \"name\": …, \"arguments\": …}"]), others
// in OpenAI's nested form ({"id", "type", "function": {"name", "arguments"}});
// both become env.ToolCall.
func decodeMessages(b []byte) ([]env.Message, error) {
	var msgs []env.Message
	err := json.Unmarshal(b, &msgs)
	if err == nil {
		return msgs, nil
	}
	var raw []map[string]json.RawMessage
	if json.Unmarshal(b, &raw) != nil {
		return nil, err
	}
	for i, m := range raw {
		tc, ok := m["tool_calls"]
		if !ok || string(tc) == "null" {
			continue
		}
		var items []json.RawMessage
		if json.Unmarshal(tc, &items) != nil {
			return nil, fmt.Errorf("message %d: field \"tool_calls\": want a list", i)
		}
		calls := make([]env.ToolCall, 0, len(items))
		for k, it := range items {
			c, cerr := toolCall(it)
			if cerr != nil {
				return nil, fmt.Errorf("message %d: tool_calls[%d]: %w", i, k, cerr)
			}
			calls = append(calls, c)
		}
		enc, merr := json.Marshal(calls)
		if merr != nil {
			return nil, merr
		}
		raw[i]["tool_calls"] = enc
	}
	fixed, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	msgs = nil
	if err := json.Unmarshal(fixed, &msgs); err != nil {
		return nil, err
	}
	return msgs, nil
}

// toolCall reads one tool call: an object, or one as JSON text, flat
// ({"id", "name", "arguments"}) or nested under "function"; arguments given
// as an object are kept as their JSON text.
func toolCall(it json.RawMessage) (env.ToolCall, error) {
	if s, ok := stringValue(it); ok {
		it = json.RawMessage(s)
	}
	// env.ToolCall reads both forms, as every other route does.
	var c env.ToolCall
	if err := json.Unmarshal(it, &c); err != nil {
		return env.ToolCall{}, fmt.Errorf("want an object (or one as JSON text): %w", err)
	}
	return c, nil
}
