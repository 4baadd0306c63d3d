package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/svbench/svbench/env"
)

// Sessions are episodes a trainer drives turn by turn: it generates every
// assistant message itself (keeping its own token ids, as on-policy
// trainers must) and svbench does the rest: the tools run here, in the
// sandbox and through the same fair queues as scoring, the simulated
// parties answer, and the final message is scored exactly as `svbench
// score` scores the same transcript. Every registered environment gets
// sessions from its registration: a session is its env.Episode held
// between requests.
//
// A session lives in the process that created it (its sandbox and
// simulated parties do); more than one server needs routing by session id
// (server/README.md, "Sessions").

// Session defaults.
const (
	DefaultMaxSessions    = 256
	DefaultSessionIdle    = 10 * time.Minute
	DefaultSessionTTL     = time.Hour
	MaxSessionToolCalls   = 16 // tool calls one assistant message may carry
	sessionSweepFraction  = 4  // the janitor runs every idle/4
	CodeSessionNotFound   = "session_not_found"
	CodeSessionDone       = "session_done"
	CodeSessionBusy       = "session_busy"
	CodeSessionsExhausted = "too_many_sessions"
)

// SessionCreate asks for a session on one example: by id (from the
// served split) or as a whole row, as /v1/score items name examples.
type SessionCreate struct {
	Env       string          `json:"env"`
	ExampleID json.RawMessage `json:"example_id,omitempty"`
	Example   json.RawMessage `json:"example,omitempty"`
	Answer    json.RawMessage `json:"answer,omitempty"`
	Rubric    string          `json:"rubric,omitempty"`
	// MaxTurns caps assistant turns below the environment's own limit
	// (0: the environment's).
	MaxTurns int `json:"max_turns,omitempty"`
	// IdleTimeoutS shortens the idle timeout of this session (0: the
	// server's --session-idle, which it can never exceed): a trainer
	// that abandons cut-off rollouts gets their slots back sooner.
	IdleTimeoutS float64 `json:"idle_timeout_s,omitempty"`
}

// SessionInfo is what creating (or reading) a session answers.
type SessionInfo struct {
	SessionID string        `json:"session_id"`
	Env       string        `json:"env"`
	ExampleID string        `json:"example_id"`
	Prompt    []env.Message `json:"prompt"`
	// Tools are the episode's tools in the OpenAI tools[] format.
	Tools      []map[string]any `json:"tools"`
	MaxTurns   int              `json:"max_turns"`
	ToolBudget int              `json:"tool_budget"`
	Turns      int              `json:"turns"`
	Done       bool             `json:"done"`
	// IdleTimeoutS and ExpiresAt bound the session: it is closed after
	// that long without a request, and at ExpiresAt whatever happens.
	IdleTimeoutS float64   `json:"idle_timeout_s"`
	ExpiresAt    time.Time `json:"expires_at"`
	// Transcript is the completion so far (GET only).
	Transcript []env.Message `json:"transcript,omitempty"`
}

// SessionStep is one assistant message, as the trainer decoded it.
type SessionStep struct {
	Message wireMessage `json:"message"`
}

// wireMessage reads an assistant message in the OpenAI chat format (tool
// calls as {"id", "type": "function", "function": {"name", "arguments"}},
// arguments a JSON string or object) or svbench's flat one, with the
// thinking in reasoning_content or reasoning.
type wireMessage struct {
	Content          *string        `json:"content"`
	ReasoningContent string         `json:"reasoning_content"`
	Reasoning        string         `json:"reasoning"`
	ToolCalls        []env.ToolCall `json:"tool_calls"`
}

func (m wireMessage) message() (env.Message, *APIError) {
	out := env.Message{Role: env.RoleAssistant, Reasoning: m.ReasoningContent}
	if out.Reasoning == "" {
		out.Reasoning = m.Reasoning
	}
	if m.Content != nil {
		out.Content = *m.Content
	}
	if len(m.ToolCalls) > MaxSessionToolCalls {
		return out, apiErrorf(CodeInvalidItem, "message carries %d tool calls; at most %d per turn", len(m.ToolCalls), MaxSessionToolCalls)
	}
	for i, tc := range m.ToolCalls {
		if tc.Name == "" {
			return out, apiErrorf(CodeInvalidItem, "tool call %d: field \"function.name\" missing", i)
		}
		if tc.ID == "" {
			tc.ID = fmt.Sprintf("call_%d", i)
		}
		out.ToolCalls = append(out.ToolCalls, tc)
	}
	return out, nil
}

// SessionStepResult is what one step answers: the observations svbench
// produced (tool results, the simulated party's turn), whether the episode
// is over, and then its score.
type SessionStepResult struct {
	SessionID    string        `json:"session_id"`
	Turn         int           `json:"turn"`
	Observations []env.Message `json:"observations"`
	Done         bool          `json:"done"`
	// Reason says why the episode ended ("answer", "max_turns", …).
	Reason string `json:"reason,omitempty"`
	// Score is set when Done: the reward with every component, as
	// `svbench score` gives the same transcript.
	Score *ScoreResult `json:"score,omitempty"`
}

func (s *Server) handleSessionCreate(w http.ResponseWriter, r *http.Request) {
	var req SessionCreate
	if status, aerr := decodeBody(r, &req); aerr != nil {
		writeError(w, r, status, aerr)
		return
	}
	sess, status, aerr := s.openSession(r.Context(), req, s.ownerOf(r), scopeHTTP)
	if aerr != nil {
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		writeError(w, r, status, aerr)
		return
	}
	writeJSON(w, http.StatusCreated, s.describe(sess, false))
}

// openSession starts an episode for req and registers it for owner in
// scope, or answers the HTTP status and error that say why not (429: no
// slot, or no byte budget, or owner holds its fair share while another
// client waits).
func (s *Server) openSession(ctx context.Context, req SessionCreate, owner string, scope sessionScope) (*session, int, *APIError) {
	st, aerr := s.lookupEnv(req.Env)
	if aerr != nil {
		return nil, http.StatusNotFound, aerr
	}
	ex, aerr := s.resolveExample(st, req.ExampleID, req.Example, req.Answer)
	if aerr != nil {
		return nil, http.StatusBadRequest, aerr
	}
	info := st.env.Info()
	maxTurns := max(info.MaxTurns, 1)
	if req.MaxTurns < 0 || req.MaxTurns > MaxRolloutTurns {
		return nil, http.StatusBadRequest, apiErrorf(CodeBadRequest, `field "max_turns" must be between 0 (environment default) and %d`, MaxRolloutTurns)
	}
	if req.MaxTurns > 0 {
		maxTurns = min(maxTurns, req.MaxTurns)
	}
	if req.Rubric != "" && !slices.Contains(info.Rubrics, req.Rubric) {
		return nil, http.StatusBadRequest, apiErrorf(CodeBadRequest, "rubric %q: %s has %s", req.Rubric, st.id, strings.Join(info.Rubrics, ", "))
	}
	if req.IdleTimeoutS < 0 || math.IsNaN(req.IdleTimeoutS) || math.IsInf(req.IdleTimeoutS, 0) {
		return nil, http.StatusBadRequest, apiErrorf(CodeBadRequest, `field "idle_timeout_s" must be a number of seconds >= 0 (0: the server's %s)`, s.cfg.SessionIdle)
	}
	idle := s.cfg.SessionIdle
	if req.IdleTimeoutS > 0 {
		idle = min(idle, max(time.Duration(req.IdleTimeoutS*float64(time.Second)), time.Second))
	}
	now := time.Now()
	sess := &session{id: newSessionID(), st: st, ex: ex, rubric: req.Rubric, maxTurns: maxTurns, owner: owner, scope: scope, idle: idle,
		inline: int64(len(req.Example) + len(req.Answer)), created: now, lastUsed: now}
	// The slot is taken before the episode starts (a start can take
	// seconds: a sandbox, a simulated target), so a burst of creates
	// cannot all start episodes past the bound.
	sess.ep = pendingEpisode{}
	if why := s.sessions.add(sess, now); why != slotOK {
		return nil, http.StatusTooManyRequests, s.slotError(why)
	}
	// Start holds a worker of the lane while it runs; the episode is kept
	// bare, because every step admits itself once (stepLocked, the NeMo
	// Gym tools): an episode wrapped here too would hold one worker and
	// wait for a second inside it, which on a one-worker lane never comes.
	var ep env.Episode
	var err error
	if qerr := s.adm.run(ctx, st.lane, func() { ep, err = st.env.Start(ctx, ex) }); qerr != nil {
		err = fmt.Errorf("waiting for a worker: %w", qerr)
	}
	if err != nil {
		s.sessions.remove(sess)
		if ctx.Err() != nil {
			status, aerr := contextError(ctx)
			return nil, status, aerr
		}
		return nil, http.StatusUnprocessableEntity, apiErrorf(CodeScoreFailed, "start episode %s: %v", ex.ID, err)
	}
	// The session's turn limit and the environment's tool budget hold
	// whatever the environment does (env.Limit).
	ep = env.Limit(ep, env.LimitsOf(info, maxTurns))
	sess.mu.Lock()
	closed := sess.closed
	if !closed {
		sess.ep, sess.prompt, sess.tools = ep, ep.Prompt(), ep.Tools()
	}
	sess.mu.Unlock()
	if closed {
		// Shut down or expired while starting.
		_ = ep.Close()
		return nil, http.StatusServiceUnavailable, apiErrorf(CodeSessionNotFound, "the session closed while its episode started (the server is stopping); create a new one")
	}
	return sess, 0, nil
}

// slotError says why no session slot was given, and what to do.
func (s *Server) slotError(why slotRefusal) *APIError {
	switch why {
	case slotBytes:
		return apiErrorf(CodeSessionsExhausted, "the open sessions hold %d bytes, the budget (--max-session-bytes); close finished ones (DELETE /v1/sessions/{id}), send examples by id instead of inline, or raise it", s.sessions.maxBytes)
	case slotFairShare:
		return apiErrorf(CodeSessionsExhausted, "this client holds its fair share of the %d session slots while another client waits for one; finish or close sessions first", s.cfg.MaxSessions)
	}
	return apiErrorf(CodeSessionsExhausted, "%d sessions open; close finished ones (DELETE /v1/sessions/{id}) or raise --max-sessions", s.cfg.MaxSessions)
}

// pendingEpisode stands in for an episode still starting: closing a
// session before its start returns must not touch a nil episode.
type pendingEpisode struct{ env.Episode }

func (pendingEpisode) Close() error { return nil }

func (s *Server) describe(sess *session, transcript bool) SessionInfo {
	tools := make([]map[string]any, 0, len(sess.tools))
	for _, t := range sess.tools {
		tools = append(tools, t.OpenAIFunction())
	}
	info := SessionInfo{SessionID: sess.id, Env: sess.st.id, ExampleID: sess.ex.ID, Prompt: sess.prompt, Tools: tools,
		MaxTurns: sess.maxTurns, ToolBudget: sess.st.env.Info().ToolBudget, Turns: sess.turns, Done: sess.done,
		IdleTimeoutS: sess.idleTimeout(s.cfg.SessionIdle).Seconds(), ExpiresAt: sess.created.Add(s.cfg.SessionTTL).UTC()}
	if transcript {
		info.Transcript = append([]env.Message(nil), sess.transcript...)
	}
	return info
}

// session finds a live session or answers why there is none.
func (s *Server) session(w http.ResponseWriter, r *http.Request) *session {
	id := r.PathValue("id")
	sess := s.sessions.get(id, s.ownerOf(r), scopeHTTP)
	if sess == nil {
		writeError(w, r, http.StatusNotFound, apiErrorf(CodeSessionNotFound,
			"session %q does not exist: it was closed, expired (idle %s, age %s) or held by another server process; create a new one", id, s.cfg.SessionIdle, s.cfg.SessionTTL))
		return nil
	}
	return sess
}

func (s *Server) handleSessionGet(w http.ResponseWriter, r *http.Request) {
	sess := s.session(w, r)
	if sess == nil {
		return
	}
	sess.mu.Lock()
	info := s.describe(sess, true)
	sess.mu.Unlock()
	writeJSON(w, http.StatusOK, info)
}

func (s *Server) handleSessionDelete(w http.ResponseWriter, r *http.Request) {
	sess := s.session(w, r)
	if sess == nil {
		return
	}
	s.sessions.remove(sess)
	writeJSON(w, http.StatusOK, map[string]any{"session_id": sess.id, "closed": true})
}

func (s *Server) handleSessionStep(w http.ResponseWriter, r *http.Request) {
	sess := s.session(w, r)
	if sess == nil {
		return
	}
	var req SessionStep
	if status, aerr := decodeBody(r, &req); aerr != nil {
		writeError(w, r, status, aerr)
		return
	}
	msg, aerr := req.Message.message()
	if aerr != nil {
		writeError(w, r, http.StatusBadRequest, aerr)
		return
	}
	if !sess.mu.TryLock() {
		writeError(w, r, http.StatusConflict, apiErrorf(CodeSessionBusy, "session %s is running a step; send the next message after its answer", sess.id))
		return
	}
	defer sess.mu.Unlock()
	res, status, aerr := s.stepLocked(r.Context(), sess, msg)
	if aerr != nil {
		writeError(w, r, status, aerr)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// stepLocked plays msg as the session's next assistant turn and, when the
// episode ends, scores it; the caller holds sess.mu. It answers the step,
// or the HTTP status and error that say why not (a step whose context
// ended closes the session).
func (s *Server) stepLocked(ctx context.Context, sess *session, msg env.Message) (SessionStepResult, int, *APIError) {
	sess.lastUsed = time.Now()
	switch {
	case sess.closed:
		return SessionStepResult{}, http.StatusNotFound, apiErrorf(CodeSessionNotFound, "session %s was closed; create a new one", sess.id)
	case sess.done:
		return SessionStepResult{}, http.StatusConflict, apiErrorf(CodeSessionDone, "session %s is over (its score was in the answer to turn %d); read it with GET /v1/sessions/%s", sess.id, sess.turns, sess.id)
	}
	if aerr := s.checkCompletion(append(append([]env.Message(nil), sess.transcript...), msg)); aerr != nil {
		return SessionStepResult{}, http.StatusRequestEntityTooLarge, aerr
	}
	sess.turns++
	sess.transcript = append(sess.transcript, msg)
	grown := len(sess.transcript) - 1
	defer func() { s.sessions.grow(sess, transcriptBytes(sess.transcript[grown:])) }()
	res := SessionStepResult{SessionID: sess.id, Turn: sess.turns, Observations: []env.Message{}}
	// The episode sees the answer the message commits to, as the final
	// score does (reasoning is not the answer).
	committed := env.CommitAnswers([]env.Message{msg})[0]
	ae := admittedEpisode{Episode: sess.ep, adm: s.adm, lane: sess.st.lane}
	step, err := ae.Step(ctx, committed)
	if err != nil {
		if ctx.Err() != nil {
			// The step did not finish: the turn is not taken back, the
			// episode may hold a half-run tool; the session is closed.
			s.sessions.removeLocked(sess)
			status, aerr := contextError(ctx)
			return SessionStepResult{}, status, aerr
		}
		res.Done, res.Reason = true, "error: "+err.Error()
	} else {
		res.Observations = append(res.Observations, step.Messages...)
		sess.transcript = append(sess.transcript, step.Messages...)
		res.Done, res.Reason = step.Done, step.Reason
	}
	if res.Done {
		sess.done = true
		res.Score = s.scoreSession(ctx, sess)
		sess.result = &res
		// The episode's resources and the session's slot go now; the
		// session stays readable until it is deleted, expires or the
		// finished store needs its room.
		s.sessions.finish(sess)
	}
	return res, 0, nil
}

// scoreSession scores the transcript as `svbench score` scores it:
// env.OutsideRollout of the completion, under the scoring queue.
func (s *Server) scoreSession(ctx context.Context, sess *session) *ScoreResult {
	start := time.Now()
	res := ScoreResult{env: sess.st.id}
	ro := env.OutsideRollout(sess.transcript)
	var sc env.Score
	var aerr *APIError
	if qerr := s.adm.run(ctx, sess.st.lane, func() { sc, aerr = s.safeScore(ctx, sess.st, sess.ex, ro, sess.rubric) }); qerr != nil {
		_, aerr = contextError(ctx)
	}
	if aerr != nil {
		res.Error = aerr
	} else {
		res.Reward, res.Components, res.Solved, res.Parsed, res.Rubric, res.weights = sc.Total, sc.Components, sc.Solved, sc.Parsed, sc.Rubric, sc.Weights
	}
	res.dur = time.Since(start)
	s.recordItems("/v1/sessions", []ScoreResult{res})
	return &res
}
