// Package artifact defines the files an evaluation run leaves behind
// (results.jsonl rows and metadata.json) and reads them back. Runners write
// them; reports, scoreboards, the merger and the dashboard only read them.
package artifact

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/svbench/svbench/env"
)

// Result is one line of results.jsonl: one rollout of one example.
type Result struct {
	RunID     string `json:"run_id,omitempty"`
	Index     int    `json:"index"`
	ExampleID string `json:"example_id,omitempty"`
	Rollout   int    `json:"rollout"`
	Model     string `json:"model,omitempty"`

	Prompt     []env.Message   `json:"prompt,omitempty"`
	Answer     json.RawMessage `json:"answer,omitempty"`
	Meta       map[string]any  `json:"meta,omitempty"`
	Completion []env.Message   `json:"completion,omitempty"`
	// FinalText is the last assistant message, the text the parsers read.
	FinalText string `json:"final_text"`

	Reward     float64            `json:"reward"`
	Components map[string]float64 `json:"components,omitempty"`
	// Weights are the rubric's, so Reward = Σ Weights·Components can be
	// recomputed under other normalisations (advantage analysis).
	Weights map[string]float64 `json:"weights,omitempty"`
	Parsed  map[string]any     `json:"parsed,omitempty"`
	Rubric  string             `json:"rubric,omitempty"`
	// Solved is the environment's verdict (env.Score.Solved); nil in rows
	// written before environments declared it, or read from elsewhere.
	Solved *bool `json:"solved,omitempty"`

	ToolCalls  []env.ToolCallRecord `json:"tool_calls,omitempty"`
	Turns      int                  `json:"turns"`
	StopReason string               `json:"stop_reason,omitempty"`
	Usage      env.Usage            `json:"usage"`
	LatencyMS  float64              `json:"latency_ms"`
	// Error is set when the model call failed (completion_error in the
	// reference); such rows carry no reward and are retried on resume.
	Error      string `json:"error,omitempty"`
	ScoreError string `json:"score_error,omitempty"`
	// Unanswered says why the model gave no answer to this row although
	// the endpoint works: the server refused this row's request alone
	// (prompt + max_tokens over the model's context window). The row is
	// scored as the transcript stands, no answer by the environment's
	// rule, counts in every metric, and is not retried on resume.
	Unanswered string `json:"unanswered,omitempty"`
	// Unverifiable says why a row read from elsewhere could not be
	// re-scored (its verifier does not exist in svbench); Reward then holds
	// the reward recorded by the tool that wrote the row, not svbench's.
	Unverifiable string    `json:"unverifiable,omitempty"`
	Time         time.Time `json:"time"`
	// Trainer carries what a training pipeline recorded with the rollout.
	Trainer *Trainer `json:"trainer,omitempty"`
	// Segment is the session of the run that wrote the row (an index into
	// Metadata.Segments: 0 the first, then one per --resume).
	Segment int `json:"segment,omitempty"`
}

// FailedButScored reports a row whose model call failed (an API error that
// outlasted the client's retries) and which the runner then scored as no
// answer: it carries the environment's verdict and no score error.
// --resume retries such a row; until then it counts everywhere as an
// attempted row without an answer.
func (r *Result) FailedButScored() bool {
	return r.Error != "" && r.Solved != nil && r.ScoreError == ""
}

// Trainer is a training pipeline's bookkeeping for one rollout (verifiers,
// prime-rl): kept so learning curves and advantage analysis can read it.
type Trainer struct {
	Step      *int64   `json:"step,omitempty"`
	ProblemID string   `json:"problem_id,omitempty"`
	SampleID  string   `json:"sample_id,omitempty"`
	Advantage *float64 `json:"advantage,omitempty"`
	// Reward and Components are what the trainer recorded, components
	// renamed to svbench's names (reward_accuracy → accuracy).
	Reward     *float64           `json:"recorded_reward,omitempty"`
	Components map[string]float64 `json:"recorded_components,omitempty"`
	// Metrics are the other numbers it logged (num_turns, run_opa_calls, …).
	Metrics map[string]float64 `json:"metrics,omitempty"`
	RunID   string             `json:"run_id,omitempty"`
	EnvName string             `json:"env_name,omitempty"`
	// Rebuilt says how the completion was rebuilt into the text the
	// environment saw when it computed the recorded reward (a hosted
	// trainer's serving stack splits reasoning_content off afterwards).
	Rebuilt string `json:"rebuilt,omitempty"`
	// Kept names recorded components svbench kept rather than re-computed
	// (an LLM judge's verdict cannot be re-asked deterministically).
	Kept string `json:"kept,omitempty"`
	// Executable and ExecutableComponents are the executable verifier's
	// score of the rollout, whatever reward the trainer trained on: for a
	// judge-trained run they sit next to the judge reward (cross-scoring).
	Executable           *float64           `json:"executable_reward,omitempty"`
	ExecutableComponents map[string]float64 `json:"executable_components,omitempty"`
}

// Key identifies a (example, rollout) pair within a run.
type Key struct {
	Index   int
	Rollout int
}

// Key returns the row's pair.
func (r *Result) Key() Key { return Key{r.Index, r.Rollout} }

// Metadata is metadata.json: everything needed to reproduce and compare a
// run. It never holds an API key.
type Metadata struct {
	RunID string `json:"run_id"`
	// Source is "" for svbench's own runs and "trainer:<kind>" for rows a
	// training pipeline wrote and svbench re-scored.
	Source         string `json:"source,omitempty"`
	Environment    string `json:"environment"`
	EnvVersion     string `json:"env_version"`
	Rubric         string `json:"rubric"`
	Model          string `json:"model"`
	EffectiveModel string `json:"effective_model,omitempty"`
	BaseURL        string `json:"base_url,omitempty"`
	Dataset        string `json:"dataset"`
	DatasetRev     string `json:"dataset_revision"`
	DatasetRows    int    `json:"dataset_rows"`
	// Split is the split of the environment's data the run read (train,
	// dev, test; env/split.go), "" when a dataset file's name does not
	// say. Only test runs are evaluations: reports and the leaderboard say
	// so of any other.
	Split       string          `json:"split,omitempty"`
	NumExamples int             `json:"num_examples"`
	Rollouts    int             `json:"rollouts_per_example"`
	Seed        uint64          `json:"seed"`
	Shard       string          `json:"shard,omitempty"`
	Sampling    json.RawMessage `json:"sampling,omitempty"`
	// SamplingSent is what the endpoint was actually sent (reasoning models
	// get no temperature); absent for built-in policies, which sample
	// nothing.
	SamplingSent json.RawMessage `json:"sampling_sent,omitempty"`
	Concurrency  int             `json:"concurrency"`
	MaxConsecErr int             `json:"max_consecutive_errors"`
	// Params are the environment parameters as given (text, as the user
	// wrote them); Config is every parameter in force, defaults included,
	// as the registry resolved it, each value of its own JSON type (read
	// it as text through Conditions).
	Params         map[string]string `json:"params,omitempty"`
	Config         env.ConfigValues  `json:"config,omitempty"`
	Verifiers      map[string]string `json:"verifiers,omitempty"`
	GitCommit      string            `json:"git_commit,omitempty"`
	SvbenchVersion string            `json:"svbench_version"`
	GoVersion      string            `json:"go_version"`
	Started        time.Time         `json:"started"`
	Finished       *time.Time        `json:"finished,omitempty"`
	DurationS      float64           `json:"duration_s"`
	Status         string            `json:"status"`
	StatusDetail   string            `json:"status_detail,omitempty"`
	Completed      int               `json:"completed"`
	Errors         int               `json:"errors"`
	// Unanswered counts the completed rows the server refused to answer
	// (see Result.Unanswered): coverage is (Completed-Unanswered)/Completed.
	Unanswered    int                `json:"unanswered,omitempty"`
	Usage         env.Usage          `json:"usage"`
	AvgReward     float64            `json:"avg_reward"`
	AvgComponents map[string]float64 `json:"avg_components,omitempty"`
	PassAtK       map[string]float64 `json:"pass_at_k,omitempty"`
	// Launch is how the run was started, so --resume needs nothing else.
	Launch Launch `json:"launch"`
	// Limits are the episode limits every rollout was held to (the
	// environment's, or --max-turns), as numbers; nil for runs recorded
	// before they were (EpisodeLimits reads those).
	Limits *env.Limits `json:"limits,omitempty"`
	// SolvedWhen is the environment's definition of a solved rollout, the
	// one pass@k counts.
	SolvedWhen string `json:"solved_when,omitempty"`
	// CoreMetrics are the environment's default regression-gate metrics.
	CoreMetrics []string `json:"core_metrics,omitempty"`
	// RubricInfo is the rubric the run was scored with as the environment
	// declared it (components, weights, ranges, the total's range), so
	// reports read the reward's scale without building environments.
	// Absent in runs from before it was recorded.
	RubricInfo *env.RubricInfo `json:"rubric_info,omitempty"`

	// UsageByModel splits every model call of the run by role (policy,
	// judge, target) and model; Cost prices it when --prices was given.
	UsageByModel []ModelUsage `json:"usage_by_model,omitempty"`
	Cost         *Cost        `json:"cost,omitempty"`

	// Segments are the sessions of the run, the first and one per
	// --resume, each with where its model was served: a resumed run may
	// move to another endpoint (a restarted server), which changes nothing
	// the numbers mean. Rows name their segment (Result.Segment).
	Segments []Segment `json:"segments,omitempty"`
}

// Segment is one session of a run and the endpoint that served it.
type Segment struct {
	Started       time.Time `json:"started"`
	BaseURL       string    `json:"base_url,omitempty"`
	APIKeyEnv     string    `json:"api_key_env,omitempty"`
	EndpointsFile string    `json:"endpoints_file,omitempty"`
}

// Launch holds the settings `svbench eval` was started with that the runner
// itself does not use, so `svbench eval --resume RUN_DIR` can restart the run
// from metadata.json alone. It never holds a key, only the variable's name.
type Launch struct {
	DatasetPath string `json:"dataset_path,omitempty"` // "" = the embedded split below
	// Split is the embedded split asked for with --split ("" = test).
	Split         string `json:"split,omitempty"`
	APIKeyEnv     string `json:"api_key_env,omitempty"`
	EndpointsFile string `json:"endpoints_file,omitempty"`
	JudgeModel    string `json:"judge_model,omitempty"`
	// PolicyDirs is read from runs of svbench before E2's Rego directories
	// became its policy_dirs parameter; ReadMetadata moves it there.
	PolicyDirs       []string `json:"policy_dirs,omitempty"`
	MaxTurns         int      `json:"max_turns,omitempty"`
	SystemPromptFile string   `json:"system_prompt_file,omitempty"`
	// SystemPromptSHA256 pins the system prompt file's content: a resumed
	// run refuses a file that changed.
	SystemPromptSHA256 string `json:"system_prompt_sha256,omitempty"`
	// PricesFile prices the run's token usage (`--prices`); resumed runs
	// price with it again.
	PricesFile string `json:"prices_file,omitempty"`
	// BaseURLFromEnv says the base URL came from $OPENAI_BASE_URL, not
	// --base-url: a resumed run reads the variable again, so a corrected
	// value moves the run to the server's new address.
	BaseURLFromEnv bool `json:"base_url_from_env,omitempty"`
}

// SplitRead is the split the run read: the recorded one, else test for
// runs of an embedded set written before splits were recorded (the
// embedded set was the evaluation set then), else "" (unknown).
func (m *Metadata) SplitRead() string {
	if m.Split != "" {
		return m.Split
	}
	if m.Source == "" && strings.HasPrefix(m.Dataset, "embedded:") {
		return "test"
	}
	return ""
}

// NoRows reports a finished run that produced no scored row, every model
// call having failed (a wrong model name, a dead endpoint): it says nothing
// about the model, so view's run list, compare's pickers and the
// leaderboard leave it out unless asked.
func (m *Metadata) NoRows() bool {
	return m.Status != StatusRunning && m.Completed == 0 && m.Errors > 0
}

// Run statuses.
const (
	StatusRunning     = "running"
	StatusCompleted   = "completed"
	StatusInterrupted = "interrupted"
	StatusEarlyStop   = "stopped_consecutive_errors"
	StatusFailed      = "failed"
)
