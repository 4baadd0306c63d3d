package server

import (
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
	mismatch := make([]float64, n)
	results := make([]ScoreResult, n)
	items := make([]*ScoreItem, n)
	states := make([]*envState, n)
	// Labels are read before items queue: an item's environment decides
	// which queue it joins.
	parallel(n, s.cfg.Workers, func(i int) {
		start := time.Now()
		completion := req.Query[i]
		if req.Prompts != nil {
			if rest, ok := strings.CutPrefix(completion, req.Prompts[i]); ok {
				completion = rest
			} else {
				mismatch[i] = 1
			}
		}
		it, aerr := s.labelItem(req.Labels[i], defEnv)
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
	// own and must not write into the answer.
	var mu sync.Mutex
	closed := false
	err := s.scoreAll(r.Context(), states, func(i int) {
		start := time.Now()
		res := s.scoreItem(r.Context(), states[i], items[i])
		mu.Lock()
		defer mu.Unlock()
		if !closed {
			res.dur = results[i].dur + time.Since(start)
			results[i] = res
		}
	})
	mu.Lock()
	closed = true
	mu.Unlock()
	s.recordItems("/get_reward", results)
	if err != nil {
		status, aerr := contextError(r.Context())
		writeError(w, r, status, aerr)
		return
	}
	resp := RewardResponse{
		Rewards:   make([]float64, n),
		Scores:    make([]float64, n),
		ExtraLogs: map[string][]float64{},
		Errors:    make([]string, n),
	}
	names := map[string]bool{}
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
	writeJSON(w, http.StatusOK, resp)
}

// labelItem reads one OpenRLHF label: a JSON object
// {"env", "example_id" | "example" | "answer", "rubric"?}, or otherwise an
// example id of the default environment (?env= on the URL, else the
// server's default).
func (s *Server) labelItem(label, defEnv string) (*ScoreItem, *APIError) {
	t := strings.TrimSpace(label)
	if t == "" {
		return nil, apiErrorf(CodeInvalidItem, "label is empty: it must be an example id or a JSON object {\"env\", \"example_id\"|\"answer\"}")
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
