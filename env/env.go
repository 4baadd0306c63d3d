package env

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Example is one task instance. Prompt holds the messages the model sees
// first (system and user); Answer is the gold label in the dataset's JSON
// form, kept raw so results files can echo it unchanged. Payload is the
// environment's own decoded view of the row (parsed answer, fixture, …); it is
// never serialised and only the environment that built it reads it.
type Example struct {
	ID      string          `json:"id"`
	Prompt  []Message       `json:"prompt"`
	Answer  json.RawMessage `json:"answer"`
	Meta    map[string]any  `json:"meta,omitempty"`
	Payload any             `json:"-"`
}

// Info describes an environment to runners, reports and trainers.
type Info struct {
	ID            string          `json:"id"`
	Aliases       []string        `json:"aliases"`
	Version       string          `json:"version"`
	Description   string          `json:"description"`
	Rubrics       []string        `json:"rubrics"`
	DefaultRubric string          `json:"default_rubric"`
	SystemPrompt  string          `json:"system_prompt"`
	OutputSchema  json.RawMessage `json:"output_schema,omitempty"`
	Tools         []Tool          `json:"tools,omitempty"`
	// MaxTurns bounds assistant turns per episode (1 for single-turn tasks).
	MaxTurns int `json:"max_turns"`
	// ToolBudget bounds tool calls per episode (0 when no tools are offered).
	ToolBudget int `json:"tool_budget"`
	// Policies lists the built-in policies usable as `builtin:<name>`.
	Policies []string `json:"policies,omitempty"`
	// Verifiers records the versions of the verifiers scoring depends on,
	// so run metadata can pin them.
	Verifiers map[string]string `json:"verifiers,omitempty"`
	// SolvedWhen states in one sentence what a solved rollout is (the
	// environment sets Score.Solved by it); reports print it beside pass@k.
	SolvedWhen string `json:"solved_when"`
	// CoreMetrics are the per-row quantities ("reward", "solved" or a
	// component name) a regression gate checks by default.
	CoreMetrics []string `json:"core_metrics,omitempty"`
}

// DatasetInfo identifies the rows an evaluation ran on.
type DatasetInfo struct {
	// ID is the dataset name: the file path, or "embedded:<name>".
	ID string `json:"id"`
	// Revision is "sha256:" + the first 16 hex digits of the content hash.
	Revision string `json:"revision"`
	Rows     int    `json:"rows"`
	// Split is the split the rows are (train, dev, test; env/split.go),
	// "" when a dataset file's name does not say.
	Split string `json:"split,omitempty"`
}

// Dataset is a loaded set of examples.
type Dataset struct {
	Info     DatasetInfo
	Examples []Example
}

// Environment is one security task. Implementations must be safe for
// concurrent use: the runner and the server call every method from many
// goroutines.
type Environment interface {
	Info() Info
	// Load reads a dataset; an empty path means the embedded public mini set.
	// Bad rows fail with an error naming the file, line and field.
	Load(ctx context.Context, path string) (*Dataset, error)
	// ParseExample turns one dataset row (the environment's row format, as
	// JSON) into an Example. Fields it does not know are ignored.
	ParseExample(row json.RawMessage) (Example, error)
	// Start opens an episode for the example.
	Start(ctx context.Context, ex Example) (Episode, error)
	// Score evaluates a finished rollout with the named rubric ("" = default).
	Score(ctx context.Context, ex Example, r *Rollout, rubric string) (Score, error)
}

// Episode is one interaction. The runner sends Prompt (and Tools) to the
// model, then passes every assistant message to Step until Done.
type Episode interface {
	Prompt() []Message
	Tools() []Tool
	// Step reacts to an assistant message: tool results, a simulated user's
	// reply, or nothing. A single-turn episode is done after its first step.
	Step(ctx context.Context, assistant Message) (StepResult, error)
	// Close releases what the episode holds (a sandbox, a simulated target,
	// a scratch directory). The runner calls it exactly once when the
	// episode ends for any reason — done, error, cancellation or a panic in
	// Step — so it must not depend on a live context.
	Close() error
}

// StepResult is an episode's reaction to one assistant turn.
type StepResult struct {
	Messages  []Message
	ToolCalls []ToolCallRecord
	Done      bool
	// Reason says why the episode ended ("answered", "tool_budget",
	// "max_turns", "attacker_violation", …).
	Reason string
}

// ToolCallRecord is one executed tool call, for tool-economy metrics.
type ToolCallRecord struct {
	Turn       int     `json:"turn"`
	Name       string  `json:"name"`
	Arguments  string  `json:"arguments"`
	DurationMS float64 `json:"duration_ms"`
	// Findings is how many findings a scanning tool reported (E2's
	// scanners, E3's static analysis); nil for a tool that reports none
	// (a file read, a test run, a simulated turn), so nothing shows "0
	// findings" for it.
	Findings *int   `json:"findings,omitempty"`
	Error    string `json:"error,omitempty"`
}

// Usage counts tokens as the model endpoint reported them.
type Usage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
	// ReasoningTokens is the part of CompletionTokens spent thinking, when
	// the endpoint reports it (completion_tokens_details.reasoning_tokens).
	ReasoningTokens int64 `json:"reasoning_tokens,omitempty"`
}

// Add accumulates another usage report.
func (u *Usage) Add(o Usage) {
	u.PromptTokens += o.PromptTokens
	u.CompletionTokens += o.CompletionTokens
	u.TotalTokens += o.TotalTokens
	u.ReasoningTokens += o.ReasoningTokens
}

// Rollout is everything that happened in one episode.
type Rollout struct {
	// Completion holds the turns after the prompt: assistant messages, tool
	// results and simulated replies, in order.
	Completion []Message         `json:"completion"`
	ToolCalls  []ToolCallRecord  `json:"tool_calls,omitempty"`
	Turns      int               `json:"turns"`
	StopReason string            `json:"stop_reason,omitempty"`
	Usage      Usage             `json:"usage"`
	Started    time.Time         `json:"started"`
	Duration   time.Duration     `json:"duration_ns"`
	Error      string            `json:"error,omitempty"`
	Info       map[string]string `json:"info,omitempty"`
}

// FinalText is the last assistant message's content.
func (r *Rollout) FinalText() string {
	if r == nil {
		return ""
	}
	return LastAssistantText(r.Completion)
}

// Score is a rubric's verdict. Components are the unweighted reward function
// values (trainers normalise per component); Weights says how Total was made;
// Parsed holds what the parser read from the model's output.
type Score struct {
	Total float64 `json:"reward"`
	// Solved says whether the rollout did the task, by the environment's own
	// definition (Info.SolvedWhen), independently of rubric weights; pass@k
	// counts it.
	Solved     bool               `json:"solved"`
	Components map[string]float64 `json:"components"`
	Weights    map[string]float64 `json:"weights,omitempty"`
	Parsed     map[string]any     `json:"parsed,omitempty"`
	Rubric     string             `json:"rubric,omitempty"`
}

// ErrUnverifiable marks a Score error meaning "this rollout cannot be
// re-verified here" (its verifier does not exist in svbench, e.g. a
// reference oracle built by semgrep), as opposed to a broken row. Callers
// report such rows apart and never count them as a zero reward.
var ErrUnverifiable = errors.New("cannot be re-verified")
