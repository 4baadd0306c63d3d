// Package redteam is E5 (red-team attack) and E6 (red-team defence), two
// environments over one scenario model: a behaviour category from a fixed
// taxonomy aligned with Llama Guard 3's hazard codes and HarmBench's
// semantic categories, a target profile and guardrail style, success
// conditions, and a benign twin for every harmful scenario. Safety is
// decided by a judge on the replies: rules (offline), Llama Guard 3 or a
// HarmBench-style classifier served over an OpenAI-compatible endpoint.
// svbench ships only sanitised placeholders; importers read the public
// corpora a user downloads. Transcripts judged unsafe are redacted before
// a runner writes them (env.Redactor).
package redteam

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"

	textclip "github.com/svbench/svbench/base/clip"
	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
)

// miniSet holds the 24 hand-written rows (the parity and reference rows);
// the evaluation set is miniSet followed by the generated test rows.
//
//go:embed data/mini.jsonl
var miniSet []byte

// The generated rows of each split (GenerateSplit's output, specs.go).
var (
	//go:embed data/test.jsonl
	testRows []byte
	//go:embed data/train.jsonl
	trainRows []byte
	//go:embed data/dev.jsonl
	devRows []byte
)

// evalSet is the evaluation set (the test split): what Load("") returns.
var evalSet = slices.Concat(miniSet, testRows)

// embeddedSplit is a split's rows as dataset.Load reads them.
func embeddedSplit(split string) (dataset.Embedded, error) {
	switch split {
	case "", env.SplitTest:
		return dataset.Embedded{Name: "embedded:redteam-test", Data: evalSet}, nil
	case env.SplitTrain:
		return dataset.Embedded{Name: "embedded:redteam-train", Data: trainRows}, nil
	case env.SplitDev:
		return dataset.Embedded{Name: "embedded:redteam-dev", Data: devRows}, nil
	}
	return dataset.Embedded{}, env.CheckSplit(split)
}

// Rubric names shared by both environments.
const (
	RubricDefault   = "default"
	RubricReference = "reference"
)

// Target kinds (the target parameter of E5).
const (
	TargetAuto      = "auto"
	TargetSimulator = "simulator"
	TargetModel     = "model"
)

// Llama Guard prompt modes.
const (
	LGChatTemplate = "chat-template"
	LGInline       = "inline"
)

// JudgeSettings are the parameters E5 and E6 share: the safety judge and
// the redaction policy.
type JudgeSettings struct {
	Judge            string `param:"judge" enum:"rules,llama-guard,classifier" doc:"safety judge: offline rules, Llama Guard 3 or a HarmBench-style yes/no classifier (both served with --judge-model)"`
	LlamaGuardPrompt string `param:"llama_guard_prompt" enum:"chat-template,inline" doc:"chat-template: send the conversation and let the server's Llama Guard chat template render the prompt (vLLM, Ollama); inline: svbench renders the documented template into one user message"`
	KeepUnsafe       string `param:"keep_unsafe" doc:"append the raw text of messages judged unsafe to this JSONL file (mode 0600); empty: raw unsafe text never reaches disk"`
}

func defaultJudgeSettings() JudgeSettings {
	return JudgeSettings{Judge: JudgeRules, LlamaGuardPrompt: LGChatTemplate}
}

// keepUnsafeFlag is E5's and E6's --keep-unsafe.
var keepUnsafeFlag = env.ParamFlag{Name: "keep-unsafe", Param: "keep_unsafe", Path: true,
	Usage: "E5/E6: append the raw text of messages judged unsafe to this file (mode 0600); by default it is redacted everywhere and never written"}

// common is what E5 and E6 share: the judge, the redaction policy and the
// scenarios this instance loaded (recorded examples find theirs there).
type common struct {
	judge      judge
	keepUnsafe string
	keepMu     sync.Mutex
	loaded     scenarioIndex
}

func newCommon(js JudgeSettings, models map[string]env.Model) (*common, error) {
	c := &common{keepUnsafe: js.KeepUnsafe}
	switch k := js.Judge; k {
	case JudgeRules:
		c.judge = rulesJudge{}
	default: // JudgeLlamaGuard, JudgeClassifier: the registry checked the enum
		m := models[env.ModelJudge]
		if m == nil {
			return nil, fmt.Errorf("judge=%s needs a served judge model: pass --judge-model (an alias from --endpoints works), or use judge=rules", k)
		}
		c.judge = newModelJudge(k, m, js.LlamaGuardPrompt == LGInline)
	}
	return c, nil
}

// loadScenarios reads rows (path "" = the embedded split, "" meaning the
// evaluation set) and keeps those keep accepts; the dataset revision is
// the file's.
func (c *common) loadScenarios(ctx context.Context, path, split string, build func(*Scenario) env.Example, keep func(*Scenario) bool) (*env.Dataset, error) {
	emb, err := embeddedSplit(split)
	if err != nil {
		return nil, err
	}
	ds, err := dataset.Load(ctx, path, emb, func(raw []byte) (env.Example, error) {
		s, err := ParseScenario(raw)
		if err != nil {
			return env.Example{}, err
		}
		return build(s), nil
	})
	if err != nil {
		return nil, err
	}
	kept := ds.Examples[:0]
	for _, ex := range ds.Examples {
		if keep(ex.Payload.(*Scenario)) {
			kept = append(kept, ex)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("dataset %s has no rows this environment plays (E5 needs harmful scenarios)", ds.Info.ID)
	}
	ds.Examples = kept
	ds.Info.Rows = len(kept)
	if path != "" {
		// Embedded rows are indexed once per process (embeddedIndex).
		for _, ex := range kept {
			c.loaded.add(ex.Payload.(*Scenario))
		}
	}
	return ds, nil
}

// parseExample reads a scenario row or, failing that, an example as the
// runner records it (id, prompt, answer, meta): a scenario's success
// conditions, refusal templates and escalation are not in a recorded
// example, so its scenario is found again by id among the embedded rows
// and the rows this instance loaded (env.Rehydrate's round trip).
func (c *common) parseExample(row json.RawMessage, build func(*Scenario) env.Example) (env.Example, error) {
	s, err := ParseScenario(row)
	if err == nil {
		return build(s), nil
	}
	if ex, ok, rerr := c.recorded(row, build); ok {
		return ex, rerr
	}
	return env.Example{}, err
}

// recorded resolves a recorded example; ok is false when the row is not
// one (no id, prompt messages and meta).
func (c *common) recorded(row json.RawMessage, build func(*Scenario) env.Example) (env.Example, bool, error) {
	var r struct {
		ID     string          `json:"id"`
		Prompt []env.Message   `json:"prompt"`
		Answer json.RawMessage `json:"answer"`
		Meta   map[string]any  `json:"meta"`
	}
	if json.Unmarshal(row, &r) != nil || r.ID == "" || len(r.Prompt) == 0 || r.Meta == nil {
		return env.Example{}, false, nil
	}
	// Ids are unique within a dataset, not across datasets: a candidate
	// must also give the recorded answer and meta (kind, category, pair,
	// source), and when several still do, the recorded prompt decides.
	var match, samePrompt []env.Example
	for _, s := range append(embeddedIndex().get(r.ID), c.loaded.get(r.ID)...) {
		ex := build(s)
		if !bytes.Equal(bytes.TrimSpace(ex.Answer), bytes.TrimSpace(r.Answer)) || !metaAgrees(ex.Meta, r.Meta) {
			continue
		}
		match = append(match, ex)
		if promptEqual(ex.Prompt, r.Prompt) {
			samePrompt = append(samePrompt, ex)
		}
	}
	if len(match) > 1 {
		match = samePrompt
	}
	switch len(match) {
	case 0:
		return env.Example{}, true, dataset.FieldError("id", "recorded example %q names no scenario this environment knows with its answer and meta: load its dataset first (the embedded splits are always known)", textclip.Prefix(r.ID, 80))
	case 1:
	default:
		return env.Example{}, true, dataset.FieldError("id", "recorded example %q matches %d different scenarios of the loaded datasets", textclip.Prefix(r.ID, 80), len(match))
	}
	ex := match[0]
	// The recorded prompt is what the model saw (a --system-prompt-file,
	// another turn budget): Start must show it again.
	ex.Prompt = r.Prompt
	return ex, true, nil
}

func metaAgrees(want, got map[string]any) bool {
	for k, v := range want {
		if fmt.Sprint(got[k]) != fmt.Sprint(v) {
			return false
		}
	}
	return true
}

func promptEqual(a, b []env.Message) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

// scenarioIndex holds scenarios by id, one copy of each distinct content.
type scenarioIndex struct {
	mu sync.RWMutex
	m  map[string]map[string]*Scenario
}

func (x *scenarioIndex) add(s *Scenario) {
	key, _ := json.Marshal(s)
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.m == nil {
		x.m = map[string]map[string]*Scenario{}
	}
	if x.m[s.ID] == nil {
		x.m[s.ID] = map[string]*Scenario{}
	}
	x.m[s.ID][string(key)] = s
}

func (x *scenarioIndex) get(id string) []*Scenario {
	x.mu.RLock()
	defer x.mu.RUnlock()
	out := make([]*Scenario, 0, len(x.m[id]))
	for _, s := range x.m[id] {
		out = append(out, s)
	}
	return out
}

// embeddedIndex is every embedded split's scenarios, parsed once: a
// results file of an embedded run re-scores in any process.
var embeddedIndex = sync.OnceValue(func() *scenarioIndex {
	x := &scenarioIndex{}
	for _, data := range [][]byte{evalSet, trainRows, devRows} {
		_ = dataset.EachLine(bytes.NewReader(data), "embedded:redteam", func(_ int, raw []byte) error {
			if s, err := ParseScenario(raw); err == nil {
				x.add(s)
			}
			return nil
		})
	}
	return x
})

// verdictLog collects what judging a transcript cost and found.
type verdictLog struct {
	calls, cached, errors int
	usage                 env.Usage
	errs                  []string
	cats                  map[string]bool
}

func (l *verdictLog) add(v Verdict) {
	if v.Called {
		l.calls++
	}
	if v.Cached {
		l.cached++
	}
	l.usage.Add(v.Usage)
	if v.Err != "" {
		l.errors++
		if len(l.errs) < 3 {
			l.errs = append(l.errs, textclip.Prefix(v.Err, 200))
		}
	}
	for _, c := range v.Categories {
		if l.cats == nil {
			l.cats = map[string]bool{}
		}
		l.cats[c] = true
	}
}

func (l *verdictLog) view(k string, view map[string]any) {
	view["judge"] = k
	// judge_calls are the calls scoring made; judge_cache_hits the verdicts
	// the episode (or an earlier score) had already obtained; the tokens
	// are those of every model verdict the row relies on.
	view["judge_calls"] = l.calls
	view["judge_cache_hits"] = l.cached
	if l.usage.TotalTokens > 0 || l.usage.PromptTokens > 0 {
		view["judge_prompt_tokens"] = l.usage.PromptTokens
		view["judge_completion_tokens"] = l.usage.CompletionTokens
	}
	if l.errors > 0 {
		view["judge_errors"] = l.errors
		view["judge_error"] = l.errs[0]
	}
	if len(l.cats) > 0 {
		var cs []string
		for _, c := range lgCodes {
			if l.cats[c.Code] {
				cs = append(cs, c.Code)
			}
		}
		view["judge_categories"] = cs
	}
}

// redactMessages replaces each flagged message's text by its hash, category
// and length, and hands the raw text to the keep-unsafe file when one was
// named. The rollout itself is left as it was.
func (c *common) redactMessages(exID string, sc *Scenario, msgs []env.Message, flagged map[int]bool) []env.Message {
	out := make([]env.Message, len(msgs))
	copy(out, msgs)
	var keep []map[string]any
	for i := range out {
		if !flagged[i] {
			continue
		}
		raw := out[i].Content
		out[i].Content = redacted(raw, sc.Category)
		if out[i].Reasoning != "" {
			out[i].Reasoning = redacted(out[i].Reasoning, sc.Category)
		}
		if c.keepUnsafe != "" {
			keep = append(keep, map[string]any{"example_id": exID, "category": sc.Category, "role": out[i].Role, "index": i, "content": raw})
		}
	}
	if len(keep) > 0 {
		c.keepMu.Lock()
		defer c.keepMu.Unlock()
		if f, err := os.OpenFile(c.keepUnsafe, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
			for _, k := range keep {
				b, _ := json.Marshal(k)
				_, _ = f.Write(append(b, '\n'))
			}
			_ = f.Close()
		}
	}
	return out
}

// ScoreCost is heavy when the judge is a model (llama-guard, classifier):
// scoring then asks it about every transcript, a remote call per item;
// the rules judge is in-process and light. E5 and E6 share it.
func (c *common) ScoreCost() env.ScoreCost {
	if _, ok := c.judge.(rulesJudge); ok {
		return env.CostLight
	}
	return env.CostHeavy
}
