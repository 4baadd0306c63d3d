package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
)

// NeMo Gym resources server (issue #30). NeMo Gym's agents (simple_agent
// and the like) drive a "resources server" over plain HTTP:
//
//	POST /seed_session       the dataset row, before the rollout
//	POST /<tool>             one per function call: the body is the
//	                         call's arguments object, the answer's body
//	                         text is what the model sees as its output
//	POST /verify             the row + {"response": <Responses API
//	                         response>}: answers the echo plus "reward"
//	POST /aggregate_metrics  {"verify_responses": [...]}
//	GET  /reverify_mode      "stateless" | "unsupported" | "unknown"
//
// Their servers tie the calls of one rollout together with a session
// cookie (Starlette's SessionMiddleware); the agent forwards whatever
// cookies the resources server's last answer set, so every answer here
// sets nemoGymCookie again. The cookie holds the svbench session id of
// the episode /seed_session started: a session as POST /v1/sessions
// makes, with the same bounds (count, idle time, age).
//
// The row names svbench's example in "verifier_metadata" (NeMo Gym's
// usual place for what a verifier needs), with /v1/score's field names:
//
//	"verifier_metadata": {"env": "e2", "example_id": "...", "rubric": "..."}
//
// ("example" for a whole dataset row or "answer" instead of
// "example_id"). /verify reads the same object, so it needs no session:
// it rebuilds the transcript from the response's output items and scores
// it as /v1/score does, which is why /reverify_mode says "stateless".

// NeMo Gym route names and wire constants.
const (
	nemoGymCookie       = "svbench_nemo_gym_session"
	nemoGymRolloutPath  = "ng-rollout" // NeMo Gym's rollout-correlation prefix
	nemoGymTaskIndex    = "_ng_task_index"
	nemoGymRolloutIndex = "_ng_rollout_index"
	CodeNotSeeded       = "session_not_seeded"
)

// nemoGymToolName is what a tool route may be called: one plain path
// segment.
var nemoGymToolName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

var nemoGymRolloutID = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,128}$`)

// nemoGymToolRoutes registers one route per tool of the served
// environments and returns their paths. reserved are the single-segment
// names other routes hold.
func (s *Server) nemoGymToolRoutes(add func(string, route), reserved []string) []string {
	paths := []string{}
	reg := func(p string, rt route) {
		add(p, rt)
		paths = append(paths, p)
	}
	seen := map[string]bool{}
	for _, id := range s.order {
		for _, t := range s.envs[id].info.Tools {
			switch {
			case seen[t.Name]:
				continue // another environment's tool of that name: one route serves both
			case !nemoGymToolName.MatchString(t.Name):
				s.log.Warn("NeMo Gym: tool not served as a route: its name is not one plain path segment", "env", id, "tool", t.Name)
				continue
			case slices.Contains(reserved, t.Name):
				s.log.Warn("NeMo Gym: tool not served as a route: its name is an existing route", "env", id, "tool", t.Name)
				continue
			}
			seen[t.Name] = true
			name := t.Name
			reg("/"+name, route{endpoint: "/" + name, needData: true, timeout: s.cfg.RolloutTimeout,
				methods: map[string]http.HandlerFunc{"POST": func(w http.ResponseWriter, r *http.Request) { s.handleNemoGymTool(w, r, name) }}})
		}
	}
	return paths
}

// nemoGymRolloutPrefix strips NeMo Gym's rollout-correlation prefix
// (/ng-rollout/<rollout id>/<path>, sent when their observability is on)
// from the paths of nemoGymRoutes and serves the rest with next.
func nemoGymRolloutPrefix(paths []string, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rest := "/" + r.PathValue("rest")
		if !nemoGymRolloutID.MatchString(r.PathValue("rid")) || !slices.Contains(paths, rest) {
			writeError(w, r, http.StatusNotFound, apiErrorf(CodeNotFound, "no such endpoint %s; under /%s/<rollout id>/ are NeMo Gym's routes only", r.URL.Path, nemoGymRolloutPath))
			return
		}
		r2 := r.Clone(r.Context())
		r2.URL.Path, r2.URL.RawPath = rest, ""
		next.ServeHTTP(w, r2)
	})
}

// nemoGymMeta is the row's "verifier_metadata": which svbench example
// the rollout is about (the fields of a /v1/score item).
type nemoGymMeta struct {
	Env       string          `json:"env"`
	ExampleID json.RawMessage `json:"example_id,omitempty"`
	Example   json.RawMessage `json:"example,omitempty"`
	Answer    json.RawMessage `json:"answer,omitempty"`
	Rubric    string          `json:"rubric,omitempty"`
	MaxTurns  int             `json:"max_turns,omitempty"`
}

// readNemoGymBody reads a JSON object body, keeping every field as sent
// (verify echoes them), and its verifier_metadata.
func readNemoGymBody(r *http.Request) (map[string]json.RawMessage, *nemoGymMeta, int, *APIError) {
	var body map[string]json.RawMessage
	if status, aerr := decodeBody(r, &body); aerr != nil {
		return nil, nil, status, aerr
	}
	if body == nil {
		return nil, nil, http.StatusBadRequest, apiErrorf(CodeBadRequest, "the body must be a JSON object (a NeMo Gym dataset row)")
	}
	raw, ok := body["verifier_metadata"]
	if !ok || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return body, nil, 0, nil
	}
	var m nemoGymMeta
	if err := json.Unmarshal(raw, &m); err != nil {
		_, aerr := decodeError(err)
		aerr.Message = `field "verifier_metadata": ` + aerr.Message
		return nil, nil, http.StatusBadRequest, aerr
	}
	return body, &m, 0, nil
}

func errNoMeta(route string) *APIError {
	return apiErrorf(CodeInvalidItem, `%s: the row names no svbench example: put {"env": ..., "example_id": ...} (or "example": <row>, or "answer") in its "verifier_metadata"`, route)
}

func setNemoGymCookie(w http.ResponseWriter, id string) {
	http.SetCookie(w, &http.Cookie{Name: nemoGymCookie, Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
}

// nemoGymSession is the live session the request's cookie names: nil
// and "" when it names none, nil and its id when that one is gone.
func (s *Server) nemoGymSession(r *http.Request) (*session, string) {
	c, err := r.Cookie(nemoGymCookie)
	if err != nil || c.Value == "" {
		return nil, ""
	}
	return s.sessions.get(c.Value, s.ownerOf(r), scopeNemoGym), c.Value
}

func (s *Server) handleNemoGymSeed(w http.ResponseWriter, r *http.Request) {
	_, meta, status, aerr := readNemoGymBody(r)
	if aerr != nil {
		writeError(w, r, status, aerr)
		return
	}
	if meta == nil {
		writeError(w, r, http.StatusBadRequest, errNoMeta("/seed_session"))
		return
	}
	// A new seed is a new rollout: the session the cookie held, if any,
	// ends here.
	if old, _ := s.nemoGymSession(r); old != nil {
		s.sessions.remove(old)
	}
	sess, status, aerr := s.openSession(r.Context(), SessionCreate{Env: meta.Env, ExampleID: meta.ExampleID, Example: meta.Example,
		Answer: meta.Answer, Rubric: meta.Rubric, MaxTurns: meta.MaxTurns}, s.ownerOf(r), scopeNemoGym)
	if aerr != nil {
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		writeError(w, r, status, aerr)
		return
	}
	setNemoGymCookie(w, sess.id)
	// BaseSeedSessionResponse is empty; agents ignore the body, and what
	// the episode is (prompt, tools) helps whoever checks a row by hand.
	writeJSON(w, http.StatusOK, s.describe(sess, false))
}

// handleNemoGymTool runs one call of tool in the cookie's session: the
// body is the call's arguments, the answer's body is the tool's output as
// text (what NeMo Gym's agents hand the model as function_call_output).
// Each call is one step of the episode, as an assistant message carrying
// that call alone.
func (s *Server) handleNemoGymTool(w http.ResponseWriter, r *http.Request, tool string) {
	sess, id := s.nemoGymSession(r)
	if sess == nil {
		if id == "" {
			writeError(w, r, http.StatusBadRequest, apiErrorf(CodeNotSeeded,
				"tool %s called outside a session: POST /seed_session with the row first and send back its cookie %s (NeMo Gym's agents forward the resources server's cookies)", tool, nemoGymCookie))
		} else {
			writeError(w, r, http.StatusNotFound, apiErrorf(CodeSessionNotFound,
				"session %q does not exist: it was closed, expired (idle %s, age %s) or held by another server process; seed a new one", id, s.cfg.SessionIdle, s.cfg.SessionTTL))
		}
		return
	}
	setNemoGymCookie(w, sess.id)
	var args json.RawMessage
	if status, aerr := decodeBody(r, &args); aerr != nil {
		writeError(w, r, status, aerr)
		return
	}
	if !sess.mu.TryLock() {
		writeError(w, r, http.StatusConflict, apiErrorf(CodeSessionBusy, "session %s is running a tool call; call the next tool after its answer", sess.id))
		return
	}
	defer sess.mu.Unlock()
	sess.lastUsed = time.Now()
	switch {
	case sess.closed:
		writeError(w, r, http.StatusNotFound, apiErrorf(CodeSessionNotFound, "session %s was closed; seed a new one", sess.id))
		return
	case sess.done:
		writeError(w, r, http.StatusConflict, apiErrorf(CodeSessionDone, "session %s is over: the episode takes no more tool calls; answer now", sess.id))
		return
	}
	call := env.ToolCall{ID: fmt.Sprintf("ng_call_%d", sess.turns+1), Name: tool, Arguments: strings.TrimSpace(string(args))}
	msg := env.Message{Role: env.RoleAssistant, ToolCalls: []env.ToolCall{call}}
	if aerr := s.checkCompletion(append(slices.Clone(sess.transcript), msg)); aerr != nil {
		writeError(w, r, http.StatusRequestEntityTooLarge, aerr)
		return
	}
	ctx := r.Context()
	sess.turns++
	sess.transcript = append(sess.transcript, msg)
	ae := admittedEpisode{Episode: sess.ep, adm: s.adm, lane: sess.st.lane}
	step, err := ae.Step(ctx, msg)
	if err != nil {
		if ctx.Err() != nil {
			s.sessions.removeLocked(sess)
			status, aerr := contextError(ctx)
			writeError(w, r, status, aerr)
			return
		}
		sess.done = true
		s.sessions.finish(sess)
		writeError(w, r, http.StatusUnprocessableEntity, apiErrorf(CodeScoreFailed, "tool %s: the episode failed: %v", tool, err))
		return
	}
	sess.transcript = append(sess.transcript, step.Messages...)
	s.sessions.grow(sess, transcriptBytes(append([]env.Message{msg}, step.Messages...)))
	var out []string
	for _, m := range step.Messages {
		if m.Role == env.RoleTool {
			out = append(out, m.Content)
		}
	}
	if len(out) > 0 {
		s.produced.add(sess.st.id, strings.Join(out, "\n"))
	}
	if step.Done || sess.turns >= sess.maxTurns {
		sess.done = true
		s.sessions.finish(sess)
	}
	if len(out) == 0 {
		reason := step.Reason
		if reason == "" {
			reason = "max_turns"
		}
		writeError(w, r, http.StatusConflict, apiErrorf(CodeSessionDone, "tool %s did not run: the episode ended (%s); answer now", tool, reason))
		return
	}
	text := strings.Join(out, "\n")
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(text)))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(text))
}

// handleNemoGymVerify scores the response as /v1/score scores the same
// transcript and answers NeMo Gym's verify response: the request as sent,
// "reward", "reward_components" (BaseMultiRewardVerifyResponse) and each
// component again as a top-level number, which is what their
// aggregate_metrics profiles.
func (s *Server) handleNemoGymVerify(w http.ResponseWriter, r *http.Request) {
	body, meta, status, aerr := readNemoGymBody(r)
	if aerr != nil {
		writeError(w, r, status, aerr)
		return
	}
	bound, _ := s.nemoGymSession(r)
	if bound != nil {
		setNemoGymCookie(w, bound.id)
		// The rollout is over: the episode's resources go now.
		defer s.sessions.remove(bound)
	}
	if _, ok := body["responses_create_params"]; !ok {
		writeError(w, r, http.StatusBadRequest, apiErrorf(CodeBadRequest, `field "responses_create_params" missing (NeMo Gym's BaseVerifyRequest)`))
		return
	}
	var resp struct {
		Output []llm.ResponseItem `json:"output"`
	}
	if raw, ok := body["response"]; !ok {
		writeError(w, r, http.StatusBadRequest, apiErrorf(CodeBadRequest, `field "response" missing: send the Responses API response of the rollout`))
		return
	} else if err := json.Unmarshal(raw, &resp); err != nil {
		_, aerr := decodeError(err)
		aerr.Message = `field "response": ` + aerr.Message
		writeError(w, r, http.StatusBadRequest, aerr)
		return
	}
	transcript, skipped := llm.TranscriptFromResponse(resp.Output)
	var st *envState
	envID := ""
	if meta != nil {
		if est, aerr := s.lookupEnv(meta.Env); aerr == nil {
			envID = est.id
		}
	} else if bound != nil {
		envID = bound.st.id
	}
	// A function_call_output is the agent's word for what a tool said:
	// only text svbench's own tools produced (in a NeMo Gym session) is
	// credited as tool output; anything else reaches the scorer empty.
	unverified := s.produced.redact(envID, transcript)
	var score func() ScoreResult
	switch {
	case meta != nil:
		// The /v1/score path: the item as /v1/score would receive it.
		st, aerr = s.lookupEnv(meta.Env)
		if aerr != nil {
			writeError(w, r, http.StatusNotFound, aerr)
			return
		}
		item := ScoreItem{Env: meta.Env, ExampleID: meta.ExampleID, Example: meta.Example, Answer: meta.Answer, Rubric: meta.Rubric,
			Completion: &env.Completion{Messages: transcript}}
		score = func() ScoreResult { return s.scoreItem(r.Context(), st, &item) }
	case bound != nil:
		// No metadata in the request: the seeded session's example, scored
		// as scoreItem scores a resolved one.
		st = bound.st
		score = func() ScoreResult {
			if aerr := s.checkCompletion(transcript); aerr != nil {
				return ScoreResult{Error: aerr}
			}
			sc, aerr := s.safeScore(r.Context(), st, bound.ex, env.OutsideRollout(transcript), bound.rubric)
			if aerr != nil {
				return ScoreResult{Error: aerr}
			}
			return ScoreResult{Reward: sc.Total, Components: sc.Components, Solved: sc.Solved, Parsed: sc.Parsed, Rubric: sc.Rubric}
		}
	default:
		writeError(w, r, http.StatusBadRequest, errNoMeta("/verify"))
		return
	}
	start := time.Now()
	var res ScoreResult
	if qerr := s.adm.run(r.Context(), st.lane, func() { res = score() }); qerr != nil {
		status, aerr := contextError(r.Context())
		writeError(w, r, status, aerr)
		return
	}
	res.env, res.dur = st.id, time.Since(start)
	s.recordItems("/verify", []ScoreResult{res})
	if res.Error != nil && res.Error.Code == CodeInvalidItem {
		// The row or the transcript is wrong, not the model: say so.
		writeError(w, r, http.StatusBadRequest, res.Error)
		return
	}
	out := make(map[string]any, len(body)+8)
	for k, v := range body {
		out[k] = v
	}
	comps := res.Components
	if comps == nil {
		comps = map[string]float64{}
	}
	out["reward"] = res.Reward
	out["reward_components"] = comps
	out["svbench_env"] = st.id
	out["svbench_solved"] = res.Solved
	// svbench report re-scores collected rollouts with the rubric that
	// paid them, not a guess; always present so every row has one shape.
	out["svbench_rubric"] = res.Rubric
	if skipped > 0 {
		out["svbench_skipped_output_items"] = skipped
	}
	if unverified > 0 {
		out["svbench_unverified_tool_outputs"] = unverified
	}
	if res.Error != nil {
		out["svbench_error"] = res.Error.Message
	}
	// Every row of an environment answers the same top-level keys: the
	// components its rubrics declare (0 when this score has none of one).
	top := maps.Clone(comps)
	for _, ri := range st.rubrics {
		for _, c := range ri.Components {
			if _, ok := top[c.Name]; !ok {
				top[c.Name] = 0
			}
		}
	}
	for k, v := range top {
		if _, clash := out[k]; !clash && k != nemoGymTaskIndex && k != nemoGymRolloutIndex {
			out[k] = v
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// handleNemoGymAggregate answers NeMo Gym's AggregateMetrics for a list
// of verify responses the way their RewardProfiler does: every numeric
// top-level field (booleans as 0/1) and the response's usage counts get
// mean/max/min/median/std, over all rollouts (agent_metrics) and per
// _ng_task_index (group_level_metrics); key_metrics are the means.
func (s *Server) handleNemoGymAggregate(w http.ResponseWriter, r *http.Request) {
	var req struct {
		VerifyResponses []map[string]any `json:"verify_responses"`
	}
	if status, aerr := decodeBody(r, &req); aerr != nil {
		writeError(w, r, status, aerr)
		return
	}
	m, aerr := nemoGymAggregate(req.VerifyResponses)
	if aerr != nil {
		writeError(w, r, http.StatusBadRequest, aerr)
		return
	}
	writeJSON(w, http.StatusOK, m)
}

// Bounds on /aggregate_metrics' work and answer: it runs on the request
// goroutine, outside the scoring queues, so what one body may cost is
// capped here. A real evaluation has tens of metrics; its groups are its
// tasks.
const (
	nemoGymMaxMetrics = 512     // distinct numeric fields
	nemoGymMaxCells   = 1 << 20 // groups × metrics, each five numbers in the answer
)

// NemoGymMetrics is NeMo Gym's AggregateMetrics.
type NemoGymMetrics struct {
	GroupLevelMetrics []map[string]any `json:"group_level_metrics"`
	AgentMetrics      map[string]any   `json:"agent_metrics"`
	KeyMetrics        map[string]any   `json:"key_metrics"`
}

func nemoGymNumbers(vr map[string]any) map[string]float64 {
	out := map[string]float64{}
	add := func(k string, v any) {
		switch x := v.(type) {
		case bool:
			if x {
				out[k] = 1
			} else {
				out[k] = 0
			}
		case float64:
			out[k] = x
		}
	}
	if resp, ok := vr["response"].(map[string]any); ok {
		if usage, ok := resp["usage"].(map[string]any); ok {
			for k, v := range usage {
				add(k, v)
			}
		}
	}
	for k, v := range vr {
		if k != nemoGymTaskIndex && k != nemoGymRolloutIndex && k != "response" {
			add(k, v)
		}
	}
	return out
}

func nemoGymStats(rows []map[string]float64, into map[string]any) {
	cols := map[string][]float64{}
	for _, row := range rows {
		for k, v := range row {
			cols[k] = append(cols[k], v)
		}
	}
	for k, vs := range cols {
		slices.Sort(vs)
		// Scaled sums: a plain sum of two 1e308s overflows to +Inf, which
		// JSON cannot carry; v/n summed stays within the values' range, and
		// the spread is taken on values scaled into [-1, 1].
		n := float64(len(vs))
		mean, scale := 0.0, max(math.Abs(vs[0]), math.Abs(vs[len(vs)-1]))
		for _, v := range vs {
			mean += v / n
		}
		ss := 0.0
		if scale > 0 {
			for _, v := range vs {
				d := v/scale - mean/scale
				ss += d * d
			}
		}
		med := vs[len(vs)/2]
		if len(vs)%2 == 0 {
			med = vs[len(vs)/2-1]/2 + vs[len(vs)/2]/2
		}
		std := 0.0 // one value: 0, as their profiler fills it
		if len(vs) > 1 {
			std = scale * math.Sqrt(ss/(n-1)) // sample std, as pandas
		}
		into["mean/"+k], into["max/"+k], into["min/"+k], into["median/"+k], into["std/"+k] =
			jsonNumber(mean), vs[len(vs)-1], vs[0], jsonNumber(med), jsonNumber(std)
	}
}

// jsonNumber is x, or null where x is not finite (a spread of values near
// the float64 limit can still overflow).
func jsonNumber(x float64) any {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return nil
	}
	return x
}

func nemoGymAggregate(vrs []map[string]any) (NemoGymMetrics, *APIError) {
	out := NemoGymMetrics{GroupLevelMetrics: []map[string]any{}, AgentMetrics: map[string]any{}, KeyMetrics: map[string]any{}}
	if len(vrs) == 0 {
		return out, nil
	}
	all := make([]map[string]float64, 0, len(vrs))
	byTask := map[float64][]map[string]float64{}
	metrics := map[string]bool{}
	for i, vr := range vrs {
		nums := nemoGymNumbers(vr)
		for k := range nums {
			metrics[k] = true
		}
		if len(metrics) > nemoGymMaxMetrics {
			return out, apiErrorf(CodeBadRequest, "verify_responses[%d]: more than %d distinct numeric fields across the responses; send the verify responses of one evaluation", i, nemoGymMaxMetrics)
		}
		all = append(all, nums)
		task, _ := vr[nemoGymTaskIndex].(float64)
		byTask[task] = append(byTask[task], nums)
	}
	if cells := len(byTask) * len(metrics); cells > nemoGymMaxCells {
		return out, apiErrorf(CodeBadRequest, "%d task groups × %d metrics = %d statistics, over the %d one answer carries; aggregate fewer tasks per request", len(byTask), len(metrics), cells, nemoGymMaxCells)
	}
	nemoGymStats(all, out.AgentMetrics)
	tasks := slices.Sorted(maps.Keys(byTask))
	for _, t := range tasks {
		g := map[string]any{nemoGymTaskIndex: t, "num_rollouts": len(byTask[t])}
		nemoGymStats(byTask[t], g)
		out.GroupLevelMetrics = append(out.GroupLevelMetrics, g)
	}
	for k, v := range out.AgentMetrics {
		if strings.HasPrefix(k, "mean/") {
			out.KeyMetrics[k] = v
		}
	}
	return out, nil
}

// handleNemoGymReverifyMode: /verify reads everything it scores from the
// request (the row's verifier_metadata and the response), so a rollout
// can be verified again without its session.
func (s *Server) handleNemoGymReverifyMode(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, "stateless")
}
