package compare

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/ingest"
	"github.com/svbench/svbench/report"
)

// breakdownFields are the row metadata fields the run's environment
// declares for breakdowns (env.Spec.Breakdown); none when the run names no
// registered environment.
func breakdownFields(meta *artifact.Metadata) []string {
	if meta == nil {
		return nil
	}
	spec, err := env.Default.Lookup(meta.Environment)
	if err != nil {
		return nil
	}
	return spec.Breakdown
}

// Run is one run's rows, ready to pair.
type Run struct {
	Dir  string
	Meta *artifact.Metadata
	Rows []Row
	// Names lists the quantities present: reward, solved, then components.
	Names []string
	// Skipped counts rows without a score (model errors never scored,
	// scoring errors, unverifiable rows). A row whose model call failed and
	// that the runner scored as no answer is not skipped: it counts, as in
	// the run's report.
	Skipped int
	// Fields are the breakdown fields of the run's environment, in the
	// order its registration declares them.
	Fields []string
}

// Load reads an svbench run directory, or a trainer's run directory
// (recorded rewards and components, paired by problem and sample id).
func Load(path string) (*Run, error) {
	res := artifact.ResultsPath(path)
	if _, err := os.Stat(res); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	run := &Run{Dir: filepath.Dir(res)}
	names := map[string]bool{}
	trainer, err := ingest.IsTrainerFile(res)
	if err != nil {
		return nil, err
	}
	if trainer {
		man, err := ingest.ReadManifest(run.Dir)
		if err != nil {
			return nil, err
		}
		if man != nil {
			run.Meta = ingest.ManifestMetadata(man, man.EnvironmentID, "recorded")
		}
		err = eachTrainerRow(res, func(r *ingest.Row, err error) {
			if err != nil || r.Trainer.Reward == nil {
				run.Skipped++
				return
			}
			tr := r.Trainer
			key := tr.ProblemID + "/" + tr.SampleID
			if tr.Step != nil {
				key = strconv.FormatInt(*tr.Step, 10) + ":" + key
			}
			row := Row{Key: key, Values: map[string]float64{"reward": *tr.Reward}}
			for k, v := range tr.Components {
				row.Values[k] = v
			}
			for k := range row.Values {
				names[k] = true
			}
			run.Rows = append(run.Rows, row)
		})
		if err != nil {
			return nil, err
		}
	} else {
		if m, err := artifact.ReadMetadata(run.Dir); err == nil {
			run.Meta = m
		}
		run.Fields = breakdownFields(run.Meta)
		err = artifact.EachResult(res, func(r *artifact.Result) error {
			// A row whose model call failed but which was scored as no
			// answer counts, as it does in the run's report.
			if _, excluded := report.ExcludedRow(0, r); excluded || r.Unverifiable != "" {
				run.Skipped++
				return nil
			}
			id := r.ExampleID
			if id == "" {
				id = "#" + strconv.Itoa(r.Index)
			}
			row := Row{Key: id + "/" + strconv.Itoa(r.Rollout), Values: map[string]float64{"reward": r.Reward}}
			for k, v := range r.Components {
				row.Values[k] = v
			}
			if r.Solved != nil {
				row.Values["solved"] = b2f(*r.Solved)
			}
			row.Label = labelled(r)
			for _, f := range run.Fields {
				if v, ok := r.Meta[f]; ok {
					if row.Slices == nil {
						row.Slices = map[string]string{}
					}
					row.Slices[f] = fmt.Sprint(v)
				}
			}
			for k := range row.Values {
				names[k] = true
			}
			run.Rows = append(run.Rows, row)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if len(run.Rows) == 0 {
		return nil, fmt.Errorf("%s: no scored rows to compare (%d skipped)", path, run.Skipped)
	}
	delete(names, "reward")
	delete(names, "solved")
	run.Names = []string{"reward"}
	for _, r := range run.Rows {
		if _, ok := r.Values["solved"]; ok {
			run.Names = append(run.Names, "solved")
			break
		}
	}
	run.Names = append(run.Names, slices.Sorted(maps.Keys(names))...)
	return run, nil
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Mismatches lists what differs between two runs that makes their numbers
// incomparable: environment, dataset revision, rubric, parameters and the
// budget (Budget). Unknown values (a side without metadata, a field one
// side does not record) are not flagged; an unset sampling setting or
// system prompt is a value of its own ("server default"), since a run that
// sent temperature 0 is not one that let the server choose.
func Mismatches(a, b *artifact.Metadata) []Mismatch {
	if a == nil || b == nil {
		return nil
	}
	var out []Mismatch
	add := func(field, x, y string) {
		if x != "" && y != "" && x != y {
			out = append(out, Mismatch{Field: field, A: x, B: y})
		}
	}
	add("environment", a.Environment, b.Environment)
	add("rubric", a.Rubric, b.Rubric)
	ba, bb := Budget(a), Budget(b)
	for i := range ba {
		add(ba[i].Field, ba[i].Value, bb[i].Value)
	}
	// The configurations in force, defaults included: a run that set
	// tool_budget=4 and one that left the default are different
	// conditions, and one that gave a default explicitly is the same.
	ca, cb := a.Conditions(), b.Conditions()
	for _, k := range env.ChangedText(ca, cb) {
		if k == "tool_budget" || k == "max_turns" {
			continue
		}
		out = append(out, Mismatch{Field: "param " + k, A: env.ShowText(ca[k]), B: env.ShowText(cb[k])})
	}
	return out
}

// BudgetField is one setting of a run's budget with its value as shown.
type BudgetField struct {
	Field, Value string
}

// Budget is what two runs of one condition must share for their numbers to
// be comparable, always the same fields in the same order: dataset
// revision, rollouts per example, the sampling settings asked for (max
// tokens, temperature, top-p, the extra request body such as
// chat_template_kwargs.enable_thinking), max turns, tool budget and the
// system prompt. compare refuses runs that differ in it and the
// leaderboard grades by it, so both read this one list.
func Budget(m *artifact.Metadata) []BudgetField {
	var s struct {
		MaxTokens   int             `json:"max_tokens"`
		Temperature *float64        `json:"temperature"`
		TopP        *float64        `json:"top_p"`
		Extra       json.RawMessage `json:"extra"`
	}
	_ = json.Unmarshal(m.Sampling, &s)
	num := func(p *float64) string {
		if p == nil {
			return "(server default)"
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	maxTok := "(server default)"
	turns, budget := m.EpisodeLimits()
	if s.MaxTokens > 0 {
		maxTok = strconv.Itoa(s.MaxTokens)
	}
	return []BudgetField{
		{"dataset revision", m.DatasetRev},
		{"rollouts per example", itoa(m.Rollouts)},
		{"max tokens", maxTok},
		{"temperature", num(s.Temperature)},
		{"top_p", num(s.TopP)},
		{"extra request body", extraBody(s.Extra)},
		{"max turns", optInt(turns)},
		{"tool budget", optInt(budget)},
		{"system prompt sha256", cmpOr(m.Launch.SystemPromptSHA256, "(environment default)")},
	}
}

// extraBody is the extra request body in one canonical form (keys sorted
// at every depth), so the same settings written in another order match.
func extraBody(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil || v == nil {
		return "(none)"
	}
	if m, ok := v.(map[string]any); ok && len(m) == 0 {
		return "(none)"
	}
	b, _ := json.Marshal(v) // encoding/json sorts map keys
	return string(b)
}

func cmpOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func itoa(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// optInt is a recorded number as text, "" (unknown, never a mismatch)
// where the run did not record it.
func optInt(p *int) string {
	if p == nil {
		return ""
	}
	return strconv.Itoa(*p)
}

// eachTrainerRow reads a trainer's rows under artifact.EachRow's policy;
// a row that does not decode reaches fn with its error.
func eachTrainerRow(path string, fn func(*ingest.Row, error)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return artifact.EachRow(f, path, artifact.ReadOptions{BadRow: func(_ int, err error) error { fn(nil, err); return nil }},
		ingest.Decode, func(_ int, r *ingest.Row) error { fn(r, nil); return nil })
}

// labelled reads a classification row: a gold answer that is a JSON string
// and a predicted_label the parser recorded; nil otherwise.
func labelled(r *artifact.Result) *Labelled {
	pred, ok := r.Parsed["predicted_label"].(string)
	if !ok {
		return nil
	}
	var gold string
	if json.Unmarshal(r.Answer, &gold) != nil || gold == "" {
		return nil
	}
	l := &Labelled{Gold: gold, Predicted: pred}
	if c, ok := r.Parsed["confidence"].(float64); ok && !math.IsNaN(c) && !math.IsInf(c, 0) {
		l.Confidence, l.HasConfidence = c, true
	}
	if v, ok := r.Parsed["confidence_valid"].(bool); ok && !v {
		l.HasConfidence = false
	}
	return l
}
