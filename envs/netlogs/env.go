package netlogs

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/env/judgeutil"
	"github.com/svbench/svbench/report"
)

// ID is the canonical environment id.
const ID = "network-logs"

// Version changes whenever prompts, parsing or scoring change in a way that
// moves numbers.
const Version = "1.1.0"

// SystemPrompt keeps the reference's answer schema (so reference-mode
// numbers stay comparable), states the site baseline the generator labels
// by (site.go; a flow's label depends on its activity and two facts read
// together, issue #41) and the semantics the default rubric scores:
// confidence is the probability the label is right, misses cost more than
// false alarms, and Abstain pays only where the record does not decide.
const SystemPrompt = `You are a network security analyst triaging network flow records (Zeek conn.log fields, sometimes with counters summarising the source's recent activity).

Classify the flow as "Malicious" or "Benign", or "Abstain" if the record does not contain enough evidence to decide.

Respond with only a JSON object:
{"label": "Benign|Malicious|Abstain", "confidence": 0.0-1.0, "rationale": "optional, one sentence"}

What is normal on this network. Hours are UTC: working hours 08:00-18:59, the batch window 00:00-05:59; other hours are in neither. Servers are devices "server", "database-server" and "file-server"; people's machines are "workstation" and "laptop". A cadence is machine-regular at interval_cv 0.15 or less and irregular at 0.60 or more.
- Large uploads (10 MB or more): from servers in the batch window (backups); from people's machines in working hours (cloud sync).
- Check-ins on a timer: from servers to the internet (vendor services); from people's machines to hosts inside the network (management agents).
- Repeated failed logins: machine-regular in the batch window (scheduled jobs with stale passwords); irregular in working hours (staff mistyping).
- Connections to many web hosts: to the internet in working hours (browsing); inside the network in the batch window (the inventory job).
- Port sweeps: from servers at a machine-regular pace (the vulnerability scanner); from people's machines irregularly (engineers by hand).
The same activity in any other context is an attack.

- "confidence" is your probability (a JSON number between 0 and 1) that your label is correct. Be calibrated: 0.9 should be right nine times out of ten.
- A missed attack (calling a malicious flow Benign) costs ten times more than a false alarm.
- Abstain only when the record does not show what the decision needs (the activity's counters, or a device, hour, peer or cadence it turns on, is "-" or in neither range). There it earns more than a guess; on a record that decides the flow it earns less than any honest guess, and always less than a right answer.
- "-" in a record means the sensor did not record that field; it is not evidence either way.`

// outputSchema documents the expected answer for tooling (structured output).
var outputSchema = json.RawMessage(`{"type":"object","required":["label","confidence"],"properties":{"label":{"type":"string","enum":["Benign","Malicious","Abstain"]},"confidence":{"type":"number","minimum":0,"maximum":1},"rationale":{"type":"string"}}}`)

//go:generate go test -run TestMiniSetReproducible -update .

//go:embed data/mini.jsonl
var miniSet []byte

// Environment is E1. It holds no mutable state and is safe for concurrent use.
type Environment struct {
	// rs is the reward source; the zero value is the executable rubric.
	rs judgeutil.Config
}

// Config is E1's configuration: the reward source study's switches.
type Config struct {
	judgeutil.Settings
}

// DefaultConfig is E1 as `svbench eval --env e1` runs it.
func DefaultConfig() Config { return Config{Settings: judgeutil.DefaultSettings()} }

func init() {
	report.Register(report.Spec{Env: env.Spec{
		ID: ID,
		// "sv-env-network-logs" needs no registration: the registry strips
		// the reference's sv-env- prefix when resolving names.
		Aliases: []string{"e1"},
		New:     func(opts env.Options) (env.Environment, error) { return NewWithOptions(opts) },
		Config:  DefaultConfig(),
		// Breakdown: the meta fields compare (and any generic report)
		// slice results by.
		Breakdown: []string{"difficulty", "scenario", "attack_family", "source"},
		// E1 prompts are mostly numbers (addresses, ports, byte counts):
		// with digits collapsed, distinct flows of one kind look alike, so
		// data validate reports near leakage but never fails on it.
		NearLeakLimit: 1,
		Data:          dataCommands,
	}, Build: BuildReport, KeyMetricsVersion: KeyMetricsVersion})
}

// New returns the environment scored by its executable rubric.
func New() *Environment {
	return &Environment{rs: judgeutil.Config{Source: judgeutil.SourceExecutable}}
}

// NewWithOptions builds E1 with parameters: reward_source (executable |
// llm_judge | hybrid, the judge from opts.Models[env.ModelJudge]) and judge_weight.
func NewWithOptions(opts env.Options) (*Environment, error) {
	c, err := env.ConfigOf(ID, opts, DefaultConfig())
	if err != nil {
		return nil, err
	}
	rs, err := judgeutil.New(c.Settings, opts.Models)
	if err != nil {
		return nil, err
	}
	return &Environment{rs: rs}, nil
}

// Info describes E1.
func (e *Environment) Info() env.Info {
	return env.Info{
		ID:            ID,
		Aliases:       env.Default.Aliases(ID),
		Version:       Version,
		Description:   "Network-log anomaly detection: classify one Zeek conn-style flow as Malicious, Benign or Abstain with a calibrated confidence.",
		Rubrics:       []string{RubricDefault, RubricReference},
		DefaultRubric: RubricDefault,
		SystemPrompt:  SystemPrompt,
		OutputSchema:  outputSchema,
		MaxTurns:      1,
		Policies:      []string{PolicyHeuristic, PolicyFeatures},
		SolvedWhen:    "the label is the gold label (Malicious or Benign); an abstention is never solved",
		CoreMetrics:   []string{"reward", "accuracy", "solved"},
	}
}

// payload is the decoded view of a row the scorer needs.
type payload struct {
	answer string
}

// Load reads a JSONL dataset in the reference row format; "" loads the
// embedded public mini set.
func (e *Environment) Load(ctx context.Context, path string) (*env.Dataset, error) {
	return dataset.Load(ctx, path, dataset.Embedded{Name: "embedded:e1-mini", Data: miniSet}, func(raw []byte) (env.Example, error) {
		return parseRow(raw, true)
	})
}

// ParseExample reads one row. Only "answer" is required: scoring rows from
// trainers ({completion, answer, …}) need not carry the question.
func (e *Environment) ParseExample(row json.RawMessage) (env.Example, error) {
	return parseRow(row, false)
}

func parseRow(raw []byte, needQuestion bool) (env.Example, error) {
	var r struct {
		ID       json.RawMessage `json:"id"`
		Question json.RawMessage `json:"question"`
		Prompt   json.RawMessage `json:"prompt"`
		Answer   json.RawMessage `json:"answer"`
		Meta     json.RawMessage `json:"meta"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return env.Example{}, dataset.FieldError("", "is not a JSON object: %v", err)
	}
	answer, err := parseAnswer(r.Answer)
	if err != nil {
		return env.Example{}, dataset.FieldError("answer", "%v", err)
	}
	var question string
	if len(r.Question) > 0 && string(r.Question) != "null" {
		if err := json.Unmarshal(r.Question, &question); err != nil {
			return env.Example{}, dataset.FieldError("question", "must be a string (the flow text shown to the model)")
		}
	}
	if needQuestion && question == "" {
		return env.Example{}, dataset.FieldError("question", "is missing or empty; each row needs the flow text shown to the model")
	}
	var meta map[string]any
	if len(r.Meta) > 0 && string(r.Meta) != "null" {
		if err := json.Unmarshal(r.Meta, &meta); err != nil {
			return env.Example{}, dataset.FieldError("meta", "must be a JSON object")
		}
	}
	ex := env.Example{
		Answer:  json.RawMessage(strconv.Quote(answer)),
		Meta:    meta,
		Payload: payload{answer: answer},
	}
	switch {
	case len(r.ID) > 0 && string(r.ID) != "null":
		var s string
		if err := json.Unmarshal(r.ID, &s); err != nil {
			ex.ID = string(bytes.TrimSpace(r.ID)) // numeric ids keep their digits
		} else {
			ex.ID = s
		}
	default:
		if h, ok := meta["hash"].(string); ok && h != "" {
			ex.ID = h
		}
	}
	if _, marked := meta["ambiguous"]; !marked && ex.ID != "" {
		// A row naming an embedded example by id without its meta (a
		// trainer's {"id", "answer"}) is scored as that example: whether
		// its record decides it is the example's, not the request's.
		if amb, ok := embeddedAmbiguity(ex.ID, answer); ok {
			ex.Meta = make(map[string]any, len(meta)+1)
			for k, v := range meta {
				ex.Meta[k] = v
			}
			ex.Meta["ambiguous"] = amb
		}
	}
	switch {
	case question != "":
		ex.Prompt = []env.Message{
			{Role: env.RoleSystem, Content: SystemPrompt},
			{Role: env.RoleUser, Content: question},
		}
	case bytes.HasPrefix(bytes.TrimSpace(r.Prompt), []byte("[")):
		// A recorded example (results rows, env.Rehydrate) keeps the
		// messages the model saw, a --system-prompt-file's included.
		// Scoring needs only the answer, so a trainer's prompt in another
		// shape is ignored as it always was, not refused.
		var msgs []env.Message
		if json.Unmarshal(r.Prompt, &msgs) == nil {
			ex.Prompt = msgs
		}
	}
	return ex, nil
}

// Start opens the single-turn episode.
func (e *Environment) Start(_ context.Context, ex env.Example) (env.Episode, error) {
	if len(ex.Prompt) == 0 {
		return nil, fmt.Errorf("example %s has no question to ask", ex.ID)
	}
	return &env.SingleTurn{Messages: ex.Prompt}, nil
}

// Score parses the final assistant message and applies the rubric, then
// the judge when the reward source asks for one. A judge failure is an
// error wrapping judgeutil.ErrJudge, never a zero verdict.
func (e *Environment) Score(ctx context.Context, ex env.Example, r *env.Rollout, rubric string) (env.Score, error) {
	p, err := env.PayloadOf[payload](e, ex)
	if err != nil {
		return env.Score{}, err
	}
	answer := p.answer
	text := r.FinalText()
	s, ok := scoreParsed(ex, Parse(text), answer, rubric)
	if !ok {
		return env.Score{}, fmt.Errorf("unknown rubric %q for %s (known: %s, %s)", rubric, ID, RubricDefault, RubricReference)
	}
	s.Solved = s.Components["accuracy"] >= 1
	return e.rs.Apply(s, func() (float64, error) {
		return judgeutil.Verdict(ctx, e.rs.Judge, judgeSystem, judgePrompt(ex.Prompt, answer, text))
	})
}

var _ env.ScoreCoster = (*Environment)(nil)

// ScoreCost is light for the executable rubric and heavy when the reward
// source asks the judge model (see judgeutil.Config.ScoreCost).
func (e *Environment) ScoreCost() env.ScoreCost { return e.rs.ScoreCost(env.CostLight) }
