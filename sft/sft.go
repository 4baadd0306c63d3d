// Package sft turns verified rollouts into supervised fine-tuning data: chat
// JSONL in OpenAI's messages format (tool calls included), one conversation
// per kept rollout, each with the provenance that makes it auditable (run,
// model, rubric, example, rollout, reward and components), and with prompts
// that overlap an evaluation set refused, so a model is never trained on
// what it will be tested on.
package sft

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
)

// Options select rollouts.
type Options struct {
	// MinReward keeps rollouts whose reward is at least this.
	MinReward float64
	// SolvedOnly keeps rollouts the environment judged solved.
	SolvedOnly bool
	// BestOfK keeps at most K rollouts per example, highest reward first
	// (0 = all that pass the filters).
	BestOfK int
}

// Provenance says where a training row came from.
type Provenance struct {
	Source     string             `json:"source"` // results file
	RunID      string             `json:"run_id,omitempty"`
	Env        string             `json:"env,omitempty"`
	Model      string             `json:"model,omitempty"`
	Rubric     string             `json:"rubric,omitempty"`
	ExampleID  string             `json:"example_id,omitempty"`
	Index      int                `json:"index"`
	Rollout    int                `json:"rollout"`
	Reward     float64            `json:"reward"`
	Components map[string]float64 `json:"components,omitempty"`
	Solved     *bool              `json:"solved,omitempty"`
	// PromptSHA256 is the hash of the normalised user prompt, the key of
	// the overlap check.
	PromptSHA256 string `json:"prompt_sha256"`
}

// Row is one line of the exported JSONL.
type Row struct {
	Messages   []Message  `json:"messages"`
	Provenance Provenance `json:"provenance"`
}

// Message is OpenAI's chat message, tool calls in its nested form.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Name       string     `json:"name,omitempty"`
}

// ToolCall is an OpenAI tool call.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and its JSON arguments.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// Candidate is a rollout with where it came from.
type Candidate struct {
	Result *artifact.Result
	Meta   *artifact.Metadata
	Source string
}

// Stats counts what selection did.
type Stats struct {
	Read        int `json:"read"`
	Errors      int `json:"skipped_errors"`
	BelowReward int `json:"skipped_below_min_reward"`
	Unsolved    int `json:"skipped_unsolved"`
	NoAnswer    int `json:"skipped_no_assistant_answer"`
	BeyondK     int `json:"skipped_beyond_best_of_k"`
	Overlap     int `json:"overlapping_eval_prompts"`
	Kept        int `json:"kept"`
}

// Select filters candidates and converts the kept ones.
func Select(cands []Candidate, opts Options, st *Stats) []Row {
	type keyed struct {
		key string
		c   Candidate
	}
	var pass []keyed
	for _, c := range cands {
		st.Read++
		r := c.Result
		switch {
		case r.Error != "" || r.ScoreError != "" || r.Unverifiable != "":
			st.Errors++
			continue
		case r.Reward < opts.MinReward:
			st.BelowReward++
			continue
		case opts.SolvedOnly && (r.Solved == nil || !*r.Solved):
			st.Unsolved++
			continue
		case strings.TrimSpace(env.LastAssistantText(r.Completion)) == "" && !hasToolCalls(r.Completion):
			st.NoAnswer++
			continue
		}
		pass = append(pass, keyed{key: promptKey(r.Prompt), c: c})
	}
	// Best-of-k per prompt: highest reward first, then the earlier rollout.
	slices.SortStableFunc(pass, func(a, b keyed) int {
		if c := strings.Compare(a.key, b.key); c != 0 {
			return c
		}
		if c := cmp.Compare(b.c.Result.Reward, a.c.Result.Reward); c != 0 {
			return c
		}
		return cmp.Compare(a.c.Result.Rollout, b.c.Result.Rollout)
	})
	var out []Row
	taken := map[string]int{}
	for _, p := range pass {
		if opts.BestOfK > 0 && taken[p.key] >= opts.BestOfK {
			st.BeyondK++
			continue
		}
		taken[p.key]++
		out = append(out, convert(p.c, p.key))
	}
	st.Kept = len(out)
	return out
}

func hasToolCalls(msgs []env.Message) bool {
	for _, m := range msgs {
		if len(m.ToolCalls) > 0 {
			return true
		}
	}
	return false
}

// PromptText is the text an overlap check compares: the user turns of a
// prompt, lower-cased with spacing collapsed. Digits are kept: E1's prompts
// are one template filled with numbers, so the digit-blind near-duplicate
// key of `data validate` would call every flow the same prompt.
func PromptText(prompt []env.Message) string {
	var parts []string
	for _, m := range prompt {
		if m.Role == env.RoleUser {
			parts = append(parts, m.Content)
		}
	}
	return strings.Join(strings.Fields(strings.ToLower(strings.Join(parts, "\n"))), " ")
}

func promptKey(prompt []env.Message) string {
	h := sha256.Sum256([]byte(PromptText(prompt)))
	return hex.EncodeToString(h[:])
}

// PromptKey is the overlap key of a prompt.
func PromptKey(prompt []env.Message) string { return promptKey(prompt) }

func convert(c Candidate, key string) Row {
	r := c.Result
	row := Row{Provenance: Provenance{
		Source: c.Source, RunID: r.RunID, Model: r.Model, Rubric: r.Rubric, ExampleID: r.ExampleID,
		Index: r.Index, Rollout: r.Rollout, Reward: r.Reward, Components: r.Components, Solved: r.Solved, PromptSHA256: key,
	}}
	if c.Meta != nil {
		row.Provenance.Env = c.Meta.Environment
		if row.Provenance.Model == "" {
			row.Provenance.Model = c.Meta.Model
		}
		if row.Provenance.RunID == "" {
			row.Provenance.RunID = c.Meta.RunID
		}
	}
	for _, m := range append(slices.Clone(r.Prompt), r.Completion...) {
		row.Messages = append(row.Messages, message(m))
	}
	return row
}

// message converts one message; the thinking text (reasoning_content) is
// left out: it was never shown to the user and trainers' chat templates
// put reasoning elsewhere.
func message(m env.Message) Message {
	out := Message{Role: string(m.Role), Content: m.Content, ToolCallID: m.ToolCallID, Name: m.Name}
	for _, tc := range m.ToolCalls {
		out.ToolCalls = append(out.ToolCalls, ToolCall{ID: tc.ID, Type: "function", Function: FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
	}
	return out
}

// Overlapping drops rows whose prompt key is in evalKeys and returns them
// apart, so the caller can refuse or report them.
func Overlapping(rows []Row, evalKeys map[string]bool) (kept, overlapping []Row) {
	for _, r := range rows {
		if evalKeys[r.Provenance.PromptSHA256] {
			overlapping = append(overlapping, r)
		} else {
			kept = append(kept, r)
		}
	}
	return kept, overlapping
}

// Describe is a one-line account of the selection.
func (s Stats) Describe() string {
	return fmt.Sprintf("read %d rollouts, kept %d (skipped: %d errors, %d below min reward, %d unsolved, %d without an answer, %d beyond best-of-k; %d overlapping an evaluation set)",
		s.Read, s.Kept, s.Errors, s.BelowReward, s.Unsolved, s.NoAnswer, s.BeyondK, s.Overlap)
}
