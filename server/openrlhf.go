package server

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/svbench/svbench/env"
)

// RewardRequest is OpenRLHF's remote reward model request
// (`--remote_rm_url http://host:port/get_reward`). Query holds prompt and
// response as one decoded string; Prompts the prompt part; Labels the
// dataset's label column (`--label_key`), which tells svbench what to score
// against (see labelRef).
type RewardRequest struct {
	Query   []string `json:"query"`
	Prompts []string `json:"prompts"`
	Labels  []string `json:"labels"`
}

// RewardResponse is what OpenRLHF reads back: rewards for the advantage,
// scores for dynamic filtering, extra_logs averaged into its logger. Errors
// is svbench's addition ("" for items that scored), ignored by OpenRLHF.
type RewardResponse struct {
	Rewards   []float64            `json:"rewards"`
	Scores    []float64            `json:"scores"`
	ExtraLogs map[string][]float64 `json:"extra_logs"`
	Errors    []string             `json:"errors"`
	// Unscored counts queries not scored before the server's deadline
	// (each has reward 0, svbench_error 1 and a "timeout" error).
	Unscored int `json:"unscored,omitempty"`
}

// labelRef is the JSON-object form of a label.
type labelRef struct {
	Env       string          `json:"env"`
	ExampleID json.RawMessage `json:"example_id"`
	Example   json.RawMessage `json:"example"`
	Answer    json.RawMessage `json:"answer"`
	Rubric    string          `json:"rubric"`
}

func (s *Server) handleGetReward(w http.ResponseWriter, r *http.Request) {
	var req RewardRequest
	if status, aerr := decodeBody(r, &req); aerr != nil {
		writeError(w, r, status, aerr)
		return
	}
	n := len(req.Query)
	switch {
	case req.Query == nil:
		writeError(w, r, http.StatusBadRequest, apiErrorf(CodeBadRequest, `field "query" missing: OpenRLHF sends {"query": [...], "prompts": [...], "labels": [...]}`))
		return
	case n > s.cfg.MaxBatch:
		writeError(w, r, http.StatusRequestEntityTooLarge, apiErrorf(CodeBatchTooLarge, "%d queries exceed the batch limit of %d: lower OpenRLHF's micro batch or raise --max-batch", n, s.cfg.MaxBatch))
		return
	case req.Prompts != nil && len(req.Prompts) != n:
		writeError(w, r, http.StatusBadRequest, apiErrorf(CodeBadRequest, `"prompts" has %d entries but "query" has %d`, len(req.Prompts), n))
		return
	case len(req.Labels) != n:
		writeError(w, r, http.StatusBadRequest, apiErrorf(CodeBadRequest, `"labels" has %d entries but "query" has %d: run OpenRLHF with --label_key naming a column of example ids or label objects (see server/README.md)`, len(req.Labels), n))
		return
	}
	defEnv := r.URL.Query().Get("env")
	if defEnv != "" {
		if _, aerr := s.lookupEnv(defEnv); aerr != nil {
			writeError(w, r, http.StatusBadRequest, aerr)
			return
		}
	}
	mode := r.URL.Query().Get("labels")
	if !slices.Contains(labelModes, mode) {
		writeError(w, r, http.StatusBadRequest, apiErrorf(CodeBadRequest,
			`labels=%q: declare how /get_reward reads every label, one of labels=id (the default: an example id or a JSON label object), labels=answer (the plain gold answer text) or labels=answer_json (the gold answer as JSON)`, mode))
		return
	}
	mismatch := make([]float64, n)
	truncated := make([]float64, n)
	results := make([]ScoreResult, n)
	items := make([]*ScoreItem, n)
	states := make([]*envState, n)
	// Labels are read before items queue: an item's environment decides
	// which queue it joins.
	parallel(n, s.cfg.Workers, func(i int) {
		start := time.Now()
		completion := req.Query[i]
		if req.Prompts != nil {
			var how promptMatch
			completion, how = cutPrompt(completion, req.Prompts[i])
			switch how {
			case promptTruncated:
				truncated[i] = 1
			case promptMismatch:
				mismatch[i] = 1
			}
		}
		it, aerr := s.labelItem(req.Labels[i], defEnv, mode)
		var st *envState
		if aerr == nil {
			st, aerr = s.lookupEnv(it.Env)
		}
		if aerr != nil {
			results[i] = ScoreResult{Error: aerr}
		} else {
			c := env.CompletionText(completion)
			it.Completion = &c
			items[i], states[i] = it, st
		}
		results[i].dur = time.Since(start)
	})
	// As in /v1/score: items still running at the deadline finish on their
	// own and must not write into the answer, and the answer comes before
	// the deadline with the unscored items failed. OpenRLHF's client
	// retries any non-2xx five times, scoring the batch again each time,
	// and then leaves the sample without a reward: a 200 whose items say
	// "timeout" is what it can use.
	scoreCtx := r.Context()
	if dl, ok := scoreCtx.Deadline(); ok {
		var cancel context.CancelFunc
		scoreCtx, cancel = context.WithDeadline(scoreCtx, dl.Add(-scoreMargin(s.cfg.Timeout)))
		defer cancel()
	}
	var mu sync.Mutex
	closed := false
	done := make([]bool, n)
	_ = s.scoreAll(scoreCtx, states, func(i int) {
		start := time.Now()
		res := s.scoreItem(scoreCtx, states[i], items[i])
		mu.Lock()
		defer mu.Unlock()
		if !closed {
			res.dur = results[i].dur + time.Since(start)
			results[i] = res
			done[i] = true
		}
	})
	mu.Lock()
	closed = true
	mu.Unlock()
	if r.Context().Err() != nil {
		// The client went away or the server is stopping: nobody reads it.
		s.recordItems("/get_reward", results)
		status, aerr := contextError(r.Context())
		writeError(w, r, status, aerr)
		return
	}
	unscored := 0
	for i := range results {
		if states[i] != nil && !done[i] {
			results[i] = ScoreResult{env: states[i].id, Error: apiErrorf(CodeTimeout,
				"query %d was not scored within the server's timeout; its reward is 0 (raise --timeout: OpenRLHF's own client waits 180 s)", i)}
			unscored++
		}
	}
	s.recordItems("/get_reward", results)
	resp := RewardResponse{
		Unscored:  unscored,
		Rewards:   make([]float64, n),
		Scores:    make([]float64, n),
		ExtraLogs: map[string][]float64{},
		Errors:    make([]string, n),
	}
	// OpenRLHF sends one item per request and stacks the items' extra_logs
	// by the first item's keys, so the keys must not depend on how an item
	// fared: every component any served environment declares, for every
	// item, 0 where it does not apply. Components an environment does not
	// declare (no env.RubricDescriber) join only when they occur.
	names := s.declaredComponents()
	for _, res := range results {
		for k := range res.Components {
			names[k] = true
		}
	}
	keys := slices.Sorted(maps.Keys(names))
	for _, k := range keys {
		resp.ExtraLogs[k] = make([]float64, n)
	}
	failed := make([]float64, n)
	for i, res := range results {
		resp.Rewards[i] = res.Reward
		resp.Scores[i] = res.Reward
		for _, k := range keys {
			resp.ExtraLogs[k][i] = res.Components[k]
		}
		if res.Error != nil {
			failed[i] = 1
			resp.Errors[i] = res.Error.Code + ": " + res.Error.Message
		}
	}
	resp.ExtraLogs["svbench_error"] = failed
	resp.ExtraLogs["svbench_prompt_mismatch"] = mismatch
	resp.ExtraLogs["svbench_prompt_truncated"] = truncated
	writeJSON(w, http.StatusOK, resp)
}

// labelModes are the values of /get_reward's ?labels=: "" and "id" read a
// label as an example id, or a JSON label object when it starts with "{";
// "answer" reads every label as the gold answer's text and "answer_json" as
// the gold answer's JSON. The mode is declared on the URL, never guessed
// from a label's look: an answer such as "42" or "benign" is also a
// plausible example id.
var labelModes = []string{"", "id", "answer", "answer_json"}

// labelItem reads one OpenRLHF label under mode (see labelModes): a JSON
// object {"env", "example_id" | "example" | "answer", "rubric"?}, or
// otherwise an example id of the default environment (?env= on the URL,
// else the server's default); with labels=answer or answer_json, the gold
// answer of an example of the default environment.
func (s *Server) labelItem(label, defEnv, mode string) (*ScoreItem, *APIError) {
	t := strings.TrimSpace(label)
	if t == "" {
		return nil, apiErrorf(CodeInvalidItem, "label is empty: it must be an example id or a JSON object {\"env\", \"example_id\"|\"answer\"} (or, with labels=answer, the gold answer)")
	}
	switch mode {
	case "answer":
		ans, _ := json.Marshal(t)
		return &ScoreItem{Env: defEnv, Answer: ans}, nil
	case "answer_json":
		if !json.Valid([]byte(t)) {
			return nil, apiErrorf(CodeInvalidItem, "label is not JSON, as labels=answer_json declares: use labels=answer for answers stored as plain text")
		}
		return &ScoreItem{Env: defEnv, Answer: json.RawMessage(t)}, nil
	}
	if strings.HasPrefix(t, "{") {
		var ref labelRef
		if err := json.Unmarshal([]byte(t), &ref); err != nil {
			_, aerr := decodeError(err)
			aerr.Code = CodeInvalidItem
			aerr.Message = "label: " + aerr.Message
			return nil, aerr
		}
		if ref.Env == "" {
			ref.Env = defEnv
		}
		return &ScoreItem{Env: ref.Env, ExampleID: ref.ExampleID, Example: ref.Example, Answer: ref.Answer, Rubric: ref.Rubric}, nil
	}
	id, _ := json.Marshal(t)
	return &ScoreItem{Env: defEnv, ExampleID: id}, nil
}

// declaredComponents is the set of component names every served
// environment declares for any of its rubrics.
func (s *Server) declaredComponents() map[string]bool {
	names := map[string]bool{}
	for _, st := range s.envs {
		for _, ri := range st.rubrics {
			for _, c := range ri.Components {
				names[c.Name] = true
			}
		}
	}
	return names
}

type promptMatch int

const (
	promptWhole     promptMatch = iota // the query starts with the prompt
	promptTruncated                    // the query starts with the prompt's tail
	promptMismatch                     // neither: the whole query is scored
)

// minPromptTail is the shortest tail of a prompt taken as the start of a
// left-truncated query: shorter overlaps (a newline, a role tag) are as
// likely chance as truncation.
const minPromptTail = 16

// cutPrompt returns the completion in an OpenRLHF query. OpenRLHF posts
// the untruncated prompt in "prompts" but decodes "query" from the tokens
// the model saw, and when the prompt is longer than max_prompt_length it
// keeps the prompt's last tokens: the query then starts inside the prompt.
// The completion follows the longest tail of the prompt that starts the
// query. Decoding from a cut token can leave U+FFFD for a character split
// across tokens and drops a SentencePiece word's leading space; the first
// is skipped, the second is absorbed by matching a shorter tail.
func cutPrompt(query, prompt string) (string, promptMatch) {
	if rest, ok := strings.CutPrefix(query, prompt); ok {
		return rest, promptWhole
	}
	q := query
	for range 3 {
		if rest, ok := strings.CutPrefix(q, "\uFFFD"); ok {
			q = rest
		}
	}
	if n := longestTailPrefix(prompt, q); n >= minPromptTail {
		return q[n:], promptTruncated
	}
	return query, promptMismatch
}

// longestTailPrefix is the length of the longest suffix of a that is a
// prefix of b, found in linear time (Knuth-Morris-Pratt: b's prefix
// function, then a run over a).
func longestTailPrefix(a, b string) int {
	if len(b) > len(a) {
		b = b[:len(a)]
	}
	if len(b) == 0 {
		return 0
	}
	fail := make([]int, len(b))
	for i, k := 1, 0; i < len(b); i++ {
		for k > 0 && b[i] != b[k] {
			k = fail[k-1]
		}
		if b[i] == b[k] {
			k++
		}
		fail[i] = k
	}
	k := 0
	for i := 0; i < len(a); i++ {
		for k > 0 && (k == len(b) || a[i] != b[k]) {
			k = fail[k-1]
		}
		if k < len(b) && a[i] == b[k] {
			k++
		}
	}
	return k
}
