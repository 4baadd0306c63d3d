package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svbench/svbench/analysis/advantage"
	"github.com/svbench/svbench/env"

	"github.com/svbench/svbench/base/clip"
)

// ScoreRequest is the body of POST /v1/score. Items stay raw until each is
// decoded on its own, so one malformed item fails alone.
type ScoreRequest struct {
	Items []json.RawMessage `json:"items"`
}

// ScoreItem is one completion to score. Exactly one of ExampleID, Example
// and Answer names the task: a dataset example id, a full dataset row in the
// environment's format, or only the gold answer (for environments whose row
// format needs nothing else).
type ScoreItem struct {
	Env        string          `json:"env"`
	ExampleID  json.RawMessage `json:"example_id,omitempty"`
	Example    json.RawMessage `json:"example,omitempty"`
	Answer     json.RawMessage `json:"answer,omitempty"`
	Completion *env.Completion `json:"completion"`
	Rubric     string          `json:"rubric,omitempty"`
	// Group ties the rollouts of one prompt (a string or a number): each
	// item of a group gets its group-relative advantages back.
	Group json.RawMessage `json:"group,omitempty"`
}

// ScoreResult is one item's verdict, in request order. On error Reward is 0
// and Error says why.
type ScoreResult struct {
	Reward     float64            `json:"reward"`
	Components map[string]float64 `json:"components"`
	// Solved is the environment's verdict on the rollout (what pass@k
	// counts), independent of rubric weights.
	Solved bool           `json:"solved"`
	Parsed map[string]any `json:"parsed,omitempty"`
	Rubric string         `json:"rubric,omitempty"`
	// Advantages are set for items sent with a group: the advantage under
	// each scheme (grpo, grpo_std, per_component, gdpo) and each
	// component's own group-standardised value (the decoupled signal).
	Advantages          map[string]float64 `json:"advantages,omitempty"`
	ComponentAdvantages map[string]float64 `json:"component_advantages,omitempty"`
	Error               *APIError          `json:"error,omitempty"`

	group   string
	weights map[string]float64

	env string
	dur time.Duration
}

// ScoreResponse is the body of a successful POST /v1/score.
type ScoreResponse struct {
	Results []ScoreResult `json:"results"`
	// Unscored counts items that did not finish before the server's
	// timeout: each carries an error with code "timeout" and can be sent
	// again on its own; every other item's result stands.
	Unscored int `json:"unscored,omitempty"`
}

// scoreMargin is how long before the request's deadline /v1/score stops
// scoring so the results already computed can still be written: a batch
// that overruns loses only its unfinished items, never the whole batch.
func scoreMargin(timeout time.Duration) time.Duration {
	return min(2*time.Second, timeout/10)
}

func (s *Server) handleScore(w http.ResponseWriter, r *http.Request) {
	var req ScoreRequest
	if status, aerr := decodeBody(r, &req); aerr != nil {
		writeError(w, r, status, aerr)
		return
	}
	if req.Items == nil {
		writeError(w, r, http.StatusBadRequest, apiErrorf(CodeBadRequest, `field "items" missing: send {"items": [{"env": ..., "example_id": ..., "completion": ...}]}`))
		return
	}
	if len(req.Items) > s.cfg.MaxBatch {
		writeError(w, r, http.StatusRequestEntityTooLarge, apiErrorf(CodeBatchTooLarge, "%d items exceed the batch limit of %d: split the batch or raise --max-batch", len(req.Items), s.cfg.MaxBatch))
		return
	}
	n := len(req.Items)
	results := make([]ScoreResult, n)
	items := make([]ScoreItem, n)
	states := make([]*envState, n)
	// Items are decoded before they queue, since an item's environment
	// decides which queue it joins. Decoding costs about what reading the
	// body did, so it holds no scoring worker.
	parallel(n, s.cfg.Workers, func(i int) {
		raw := req.Items[i]
		start := time.Now()
		if err := json.Unmarshal(raw, &items[i]); err != nil {
			_, aerr := decodeError(err)
			aerr.Code = CodeInvalidItem
			results[i] = ScoreResult{Error: aerr}
		} else if st, aerr := s.lookupEnv(items[i].Env); aerr != nil {
			// Failed items keep their group too, so the group is reported
			// as incomplete instead of normalised without them.
			results[i] = ScoreResult{Error: aerr, group: groupKey(items[i].Group)}
		} else {
			states[i] = st
		}
		results[i].dur = time.Since(start)
	})
	done := make([]bool, n)
	scoreCtx := r.Context()
	if dl, ok := scoreCtx.Deadline(); ok {
		var cancel context.CancelFunc
		scoreCtx, cancel = context.WithDeadline(scoreCtx, dl.Add(-scoreMargin(s.cfg.Timeout)))
		defer cancel()
	}
	// Items still being scored when scoreCtx ends are left to finish on
	// their own (a verifier need not honour its context); closed keeps
	// their late results out of the answer being written.
	var mu sync.Mutex
	closed := false
	_ = s.scoreAll(scoreCtx, states, func(i int) {
		start := time.Now()
		res := s.scoreItem(scoreCtx, states[i], &items[i])
		mu.Lock()
		defer mu.Unlock()
		if closed {
			return
		}
		res.group = groupKey(items[i].Group)
		res.dur = results[i].dur + time.Since(start)
		results[i] = res
		done[i] = true
	})
	mu.Lock()
	closed = true
	mu.Unlock()
	if err := r.Context().Err(); err != nil {
		// The client went away or the server is shutting down: nobody
		// reads the answer.
		s.recordItems("/v1/score", results)
		status, aerr := contextError(r.Context())
		writeError(w, r, status, aerr)
		return
	}
	unscored := 0
	for i := range results {
		if states[i] != nil && !done[i] {
			// The group is kept so the rest of its group is reported as
			// incomplete instead of normalised without it.
			results[i] = ScoreResult{group: groupKey(items[i].Group), env: states[i].id,
				Error: apiErrorf(CodeTimeout, "item %d was not scored within the server's timeout (the rest of the batch was); send it again, send smaller batches or raise --timeout", i)}
		}
		if results[i].Error != nil && results[i].Error.Code == CodeTimeout {
			unscored++
		}
		if results[i].Components == nil {
			// Trainers iterate components; a failed item has none, not null.
			results[i].Components = map[string]float64{}
		}
	}
	groupAdvantages(results)
	s.recordItems("/v1/score", results)
	writeJSON(w, http.StatusOK, ScoreResponse{Results: results, Unscored: unscored})
}

func (s *Server) recordItems(endpoint string, results []ScoreResult) {
	b := newBatchStats(endpoint)
	for i := range results {
		code := ""
		if results[i].Error != nil {
			code = results[i].Error.Code
		}
		envID := results[i].env
		if envID == "" {
			envID = "unknown"
		}
		b.observe(envID, results[i].dur, code)
	}
	s.metrics.addBatch(b)
}

// scoreAll calls score(i) for every item with an environment (states[i]
// not nil), each call holding a scoring worker its environment's lane
// admitted it to (see admission). The items of each environment queue
// apart, on at most the lane's limit of goroutines, so within a request as
// across requests a slow environment's items do not hold up a fast one's.
// It returns the context's error as soon as ctx ends, without waiting for
// calls already running: a verifier that ignores its context (a parser
// deep in a hostile file) must not hold the answer past the request's
// deadline. Such calls finish in the background, keeping their worker
// until they do, and score must not publish their results once scoreAll
// has returned.
func (s *Server) scoreAll(ctx context.Context, states []*envState, score func(i int)) error {
	byLane := map[*lane][]int{}
	var order []*lane
	for i, st := range states {
		if st == nil {
			continue
		}
		if _, ok := byLane[st.lane]; !ok {
			order = append(order, st.lane)
		}
		byLane[st.lane] = append(byLane[st.lane], i)
	}
	var wg sync.WaitGroup
	for _, l := range order {
		idx := byLane[l]
		b := s.adm.submit(l, len(idx))
		var next atomic.Int64
		var lw sync.WaitGroup
		for range min(l.limit, len(idx)) {
			lw.Go(func() {
				for {
					k := int(next.Add(1) - 1)
					if k >= len(idx) || s.adm.acquire(ctx, b) != nil {
						return
					}
					func() {
						defer s.adm.release(l)
						score(idx[k])
					}()
				}
			})
		}
		wg.Go(func() {
			lw.Wait()
			s.adm.finish(b)
		})
	}
	finished := make(chan struct{})
	go func() {
		wg.Wait()
		close(finished)
	}()
	select {
	case <-finished:
	case <-ctx.Done():
	}
	return ctx.Err()
}

// decodeChunk is the fewest items a decoding goroutine is started for.
const decodeChunk = 64

// parallel calls fn(i) for every i in [0, n) on at most workers goroutines,
// each taking a contiguous chunk; small batches stay on the caller's.
func parallel(n, workers int, fn func(i int)) {
	g := min(workers, (n+decodeChunk-1)/decodeChunk)
	if g <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	chunk := (n + g - 1) / g
	var wg sync.WaitGroup
	for lo := 0; lo < n; lo += chunk {
		wg.Go(func() {
			for i := lo; i < min(lo+chunk, n); i++ {
				fn(i)
			}
		})
	}
	wg.Wait()
}

// scoreItem resolves the item's example and scores it in environment st.
// It never panics: an environment that does is reported as this item's
// error.
func (s *Server) scoreItem(ctx context.Context, st *envState, it *ScoreItem) ScoreResult {
	fail := func(e *APIError) ScoreResult { return ScoreResult{Error: e, env: st.id} }
	if it.Completion == nil {
		return fail(apiErrorf(CodeInvalidItem, `field "completion" missing: send the model's output as a string or a list of messages`))
	}
	if aerr := s.checkCompletion(it.Completion.Messages); aerr != nil {
		return fail(aerr)
	}
	if err := st.limits.Check(it.Completion.Messages); err != nil {
		return fail(apiErrorf(CodeInvalidItem, "%s: %v", st.id, err))
	}
	ex, aerr := s.resolveExample(st, it.ExampleID, it.Example, it.Answer)
	if aerr != nil {
		return fail(aerr)
	}
	ro := env.OutsideRollout(it.Completion.Messages)
	sc, aerr := s.safeScore(ctx, st, ex, ro, it.Rubric)
	if aerr != nil {
		return fail(aerr)
	}
	return ScoreResult{Reward: sc.Total, Components: sc.Components, Solved: sc.Solved, Parsed: sc.Parsed, Rubric: sc.Rubric, env: st.id,
		weights: sc.Weights}
}

// groupKey is the group's value as text ("7" for 7 and "7").
func groupKey(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// groupAdvantages fills each grouped item's advantages. Items of one
// request's groups must share components and weights (one environment and
// rubric); a group holding a failed item gets an error on every item rather
// than advantages computed from part of it. GDPO's batch normalisation runs
// over every group of the request.
func groupAdvantages(results []ScoreResult) {
	var order []string
	members := map[string][]int{}
	for i, r := range results {
		if r.group == "" {
			continue
		}
		if _, ok := members[r.group]; !ok {
			order = append(order, r.group)
		}
		members[r.group] = append(members[r.group], i)
	}
	if len(order) == 0 {
		return
	}
	var names []string
	var weights map[string]float64
	in := &advantage.Input{}
	var placed [][]int
	for _, g := range order {
		idx := members[g]
		reason := ""
		for _, i := range idx {
			r := &results[i]
			switch {
			case r.Error != nil:
				reason = fmt.Sprintf("item %d of the group failed to score", i)
			case names == nil:
				names = slices.Sorted(maps.Keys(r.Components))
				weights = r.weights
			case !slices.Equal(names, slices.Sorted(maps.Keys(r.Components))) || !maps.Equal(weights, r.weights):
				reason = "the request's grouped items mix environments or rubrics (different components or weights); send one kind per request"
			}
			if reason != "" {
				break
			}
		}
		if reason != "" {
			for _, i := range idx {
				if results[i].Error == nil {
					results[i].Error = apiErrorf(CodeInvalidItem, "group %q: no advantages: %s", g, reason)
				}
			}
			continue
		}
		grp := advantage.Group{Key: g}
		for _, i := range idx {
			c := make([]float64, len(names))
			for k, n := range names {
				c[k] = results[i].Components[n]
			}
			grp.Rollouts = append(grp.Rollouts, advantage.Rollout{Components: c})
		}
		in.Groups = append(in.Groups, grp)
		placed = append(placed, idx)
	}
	if len(in.Groups) == 0 {
		return
	}
	in.Names = names
	for _, n := range names {
		in.Weights = append(in.Weights, weights[n])
	}
	adv := advantage.Advantages(in)
	for gi, idx := range placed {
		z := advantage.ComponentScores(in.Groups[gi], len(names))
		for j, i := range idx {
			r := &results[i]
			r.Advantages = map[string]float64{}
			for _, s := range advantage.Schemes {
				r.Advantages[s] = adv[s][gi][j]
			}
			r.ComponentAdvantages = map[string]float64{}
			for k, n := range names {
				r.ComponentAdvantages[n] = z[j][k]
			}
		}
	}
}

// checkCompletion bounds what a scorer is handed: model output is hostile
// and a verifier should never see a 100 MB answer.
func (s *Server) checkCompletion(msgs []env.Message) *APIError {
	if len(msgs) > s.cfg.MaxMessages {
		return apiErrorf(CodeCompletionSize, "completion has %d messages; the limit is %d", len(msgs), s.cfg.MaxMessages)
	}
	total := 0
	for _, m := range msgs {
		total += len(m.Content)
		for _, tc := range m.ToolCalls {
			total += len(tc.Arguments) + len(tc.Name)
		}
	}
	if total > s.cfg.MaxCompletionBytes {
		return apiErrorf(CodeCompletionSize, "completion holds %d bytes of text; the limit is %d (truncate the generation or raise --max-completion)", total, s.cfg.MaxCompletionBytes)
	}
	return nil
}

// resolveExample turns an item's task reference into an Example.
func (s *Server) resolveExample(st *envState, id, row, answer json.RawMessage) (env.Example, *APIError) {
	given := 0
	for _, f := range []json.RawMessage{id, row, answer} {
		if len(f) > 0 && !bytes.Equal(bytes.TrimSpace(f), []byte("null")) {
			given++
		}
	}
	if given != 1 {
		return env.Example{}, apiErrorf(CodeInvalidItem, `give exactly one of "example_id", "example" (a dataset row) or "answer" (got %d)`, given)
	}
	switch {
	case len(id) > 0 && string(id) != "null":
		key, err := exampleIDString(id)
		if err != nil {
			return env.Example{}, apiErrorf(CodeInvalidItem, `field "example_id": %v`, err)
		}
		return st.example(key)
	case len(row) > 0 && string(row) != "null":
		return parseRow(st, row, `field "example"`)
	default:
		// The answer-only form builds the smallest row; environments whose
		// rows need more (a fixture, a file) reject it and the message says
		// to send the whole row.
		synth, _ := json.Marshal(map[string]json.RawMessage{"id": json.RawMessage(`"inline"`), "answer": answer})
		ex, aerr := parseRow(st, synth, `field "answer"`)
		if aerr != nil {
			aerr.Message += `; this environment needs more than the answer: send the full dataset row as "example"`
		}
		return ex, aerr
	}
}

func parseRow(st *envState, row json.RawMessage, what string) (ex env.Example, aerr *APIError) {
	defer func() {
		if p := recover(); p != nil {
			aerr = apiErrorf(CodeInvalidItem, "%s: environment %s could not parse the row: %v", what, st.id, p)
		}
	}()
	ex, err := st.env.ParseExample(row)
	if err != nil {
		return env.Example{}, apiErrorf(CodeInvalidItem, "%s is not a valid %s dataset row: %v", what, st.id, err)
	}
	return ex, nil
}

// exampleIDString accepts ids as JSON strings or integers (datasets written
// by other tools often number their rows).
func exampleIDString(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var n json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&n); err == nil {
		if _, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
			return n.String(), nil
		}
	}
	return "", fmt.Errorf("must be a string or an integer, got %s", clip.Bytes(string(raw), 40, clip.Ellipsis))
}

// safeScore calls the environment's Score with panic recovery: a verifier bug
// fails one item, not the request or the process.
func (s *Server) safeScore(ctx context.Context, st *envState, ex env.Example, ro *env.Rollout, rubric string) (sc env.Score, aerr *APIError) {
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic in environment Score", "env", st.id, "example", ex.ID, "panic", fmt.Sprint(p))
			aerr = apiErrorf(CodeScoreFailed, "environment %s failed while scoring example %q (internal error, logged)", st.id, ex.ID)
		}
	}()
	sc, err := st.env.Score(ctx, ex, ro, rubric)
	if err != nil {
		if ctx.Err() != nil {
			_, aerr := contextError(ctx)
			return env.Score{}, aerr
		}
		return env.Score{}, apiErrorf(CodeScoreFailed, "%s: %v", st.id, err)
	}
	if sc.Components == nil {
		sc.Components = map[string]float64{}
	}
	return sc, nil
}
