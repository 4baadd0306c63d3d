package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/svbench/svbench/base/version"
	"github.com/svbench/svbench/env"
)

// OpenEnv (meta-pytorch/OpenEnv) serves an environment as: a WebSocket
// /ws carrying {"type": "reset"|"step"|"state"|"close", "data": {…}}
// and answering {"type": "observation"|"state"|"error", "data": {…}},
// where an observation's data is {"observation": {…}, "reward": number
// or null, "done": bool}; GET /schema, /metadata and /health; and
// HTTP POST /reset and /step. svbench maps it onto sessions:
//
//   - One WebSocket connection holds at most one session. reset's data
//     is a SessionCreate ({"env", "example_id" | "example" | "answer",
//     "rubric", "max_turns"}) plus OpenEnv's "seed" and "episode_id";
//     without an example, seed picks the served row (seed mod rows, a
//     random row without a seed). It opens the session (closing the one
//     before) and answers the prompt messages and the tools.
//   - step's data is the action: one assistant message, its fields at the
//     top level as /v1/sessions/{id}/step's "message" takes them
//     ("content", "tool_calls" in the OpenAI form, "reasoning_content"),
//     plus OpenEnv's "metadata" (ignored). It answers the tool results and
//     simulated turns as observation.messages; reward is null until done,
//     then the score's total, as `svbench score` gives the transcript, the
//     whole score (components, solved, …) in observation.score.
//   - state answers {"episode_id": the session id, "step_count": turns,
//     …}; close (or the socket closing) closes the session.
//
// OpenEnv's HTTP /reset and /step make a fresh environment per request,
// which cannot hold an episode; here /reset opens a session and answers
// its id in observation.session_id, /step takes it back as a top-level
// "session_id" (or in action.metadata.session_id), and the session closes
// when its episode ends (or idles out, as other sessions do).

// OpenEnv's WebSocket error codes.
const (
	openEnvInvalidJSON     = "INVALID_JSON"
	openEnvUnknownType     = "UNKNOWN_TYPE"
	openEnvValidationError = "VALIDATION_ERROR"
	openEnvExecutionError  = "EXECUTION_ERROR"
	openEnvCapacityReached = "CAPACITY_REACHED"
)

// openEnvRoutes are the paths OpenEnv takes (nemo gym tools may not use them).
var openEnvRoutes = []string{"ws", "reset", "step", "state", "schema", "metadata", "health"}

func (s *Server) openEnvRoutesAdd(add func(string, route)) {
	// A WebSocket lives as long as its session may.
	add("/ws", route{endpoint: "/ws", needData: true, timeout: s.cfg.SessionTTL,
		methods: map[string]http.HandlerFunc{"GET": s.handleOpenEnvWS}})
	add("/reset", route{endpoint: "/reset", needData: true, timeout: s.cfg.RolloutTimeout,
		methods: map[string]http.HandlerFunc{"POST": s.handleOpenEnvReset}})
	add("/step", route{endpoint: "/step", needData: true, timeout: s.cfg.RolloutTimeout,
		methods: map[string]http.HandlerFunc{"POST": s.handleOpenEnvStep}})
	add("/state", route{endpoint: "/state", methods: map[string]http.HandlerFunc{"GET": s.handleOpenEnvState}})
	add("/schema", route{endpoint: "/schema", methods: map[string]http.HandlerFunc{"GET": s.handleOpenEnvSchema}})
	add("/metadata", route{endpoint: "/metadata", methods: map[string]http.HandlerFunc{"GET": s.handleOpenEnvMetadata}})
	add("/health", route{endpoint: "/health", public: true, methods: map[string]http.HandlerFunc{"GET": s.handleOpenEnvHealth}})
}

// OpenEnvReset is reset's data (and POST /reset's body).
type OpenEnvReset struct {
	SessionCreate
	Seed      *int64 `json:"seed,omitempty"`
	EpisodeID string `json:"episode_id,omitempty"`
	// Split is where a reset without an example draws one from (""
	// = the served default, train unless serve --split says otherwise).
	Split string `json:"split,omitempty"`
}

// OpenEnvAction is step's data: one assistant message.
type OpenEnvAction struct {
	wireMessage
	Metadata map[string]any `json:"metadata,omitempty"`
}

// OpenEnvResult is an observation's data, /reset's and /step's body.
type OpenEnvResult struct {
	Observation OpenEnvObservation `json:"observation"`
	Reward      *float64           `json:"reward"`
	Done        bool               `json:"done"`
}

// OpenEnvObservation is what svbench observes: after reset the prompt and
// the tools, after a step the new messages and, when done, the score.
type OpenEnvObservation struct {
	SessionID string        `json:"session_id"`
	Env       string        `json:"env"`
	ExampleID string        `json:"example_id"`
	Turn      int           `json:"turn"`
	Messages  []env.Message `json:"messages"`
	// Tools (reset only) are the episode's tools in the OpenAI format.
	Tools    []map[string]any `json:"tools,omitempty"`
	MaxTurns int              `json:"max_turns,omitempty"`
	Reason   string           `json:"reason,omitempty"`
	Score    *ScoreResult     `json:"score,omitempty"`
}

// OpenEnvState is state's data.
type OpenEnvState struct {
	EpisodeID  *string       `json:"episode_id"`
	StepCount  int           `json:"step_count"`
	Env        string        `json:"env,omitempty"`
	ExampleID  string        `json:"example_id,omitempty"`
	MaxTurns   int           `json:"max_turns,omitempty"`
	Done       bool          `json:"done"`
	Transcript []env.Message `json:"transcript,omitempty"`
}

type openEnvMsg struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

// openEnvCode is OpenEnv's error code for an svbench error's HTTP status.
func openEnvCode(status int) string {
	switch status {
	case http.StatusTooManyRequests:
		return openEnvCapacityReached
	case http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge:
		return openEnvValidationError
	}
	return openEnvExecutionError
}

// openEnvOpen opens the session reset asks for, for owner in scope.
func (s *Server) openEnvOpen(ctx context.Context, req OpenEnvReset, owner string, scope sessionScope) (*session, OpenEnvResult, int, *APIError) {
	given := func(f json.RawMessage) bool { return len(f) > 0 && strings.TrimSpace(string(f)) != "null" }
	if !given(req.ExampleID) && !given(req.Example) && !given(req.Answer) {
		st, aerr := s.lookupEnv(req.Env)
		if aerr != nil {
			return nil, OpenEnvResult{}, http.StatusNotFound, aerr
		}
		if st.ds == nil || len(st.ds.Examples) == 0 {
			return nil, OpenEnvResult{}, http.StatusBadRequest, apiErrorf(CodeInvalidItem, "%s serves no rows: give \"example\" or \"answer\"", st.id)
		}
		rows, _, _, aerr := st.rowsOf(req.Split)
		if aerr != nil {
			return nil, OpenEnvResult{}, http.StatusBadRequest, aerr
		}
		n := int64(len(rows))
		i := rand.Int64N(n)
		if req.Seed != nil {
			i = (*req.Seed%n + n) % n
		}
		req.ExampleID, _ = json.Marshal(st.ds.Examples[rows[i]].ID)
	}
	sess, status, aerr := s.openSession(ctx, req.SessionCreate, owner, scope)
	if aerr != nil {
		return nil, OpenEnvResult{}, status, aerr
	}
	info := s.describe(sess, false)
	return sess, OpenEnvResult{Observation: OpenEnvObservation{SessionID: sess.id, Env: info.Env, ExampleID: info.ExampleID,
		Messages: info.Prompt, Tools: info.Tools, MaxTurns: info.MaxTurns}}, 0, nil
}

// openEnvStep plays one action on sess.
func (s *Server) openEnvStep(ctx context.Context, sess *session, data json.RawMessage) (OpenEnvResult, int, *APIError) {
	var act OpenEnvAction
	if err := json.Unmarshal(data, &act); err != nil {
		return OpenEnvResult{}, http.StatusBadRequest, apiErrorf(CodeInvalidJSON, "action: %v", err)
	}
	msg, aerr := act.message()
	if aerr != nil {
		return OpenEnvResult{}, http.StatusBadRequest, aerr
	}
	if !sess.mu.TryLock() {
		return OpenEnvResult{}, http.StatusConflict, apiErrorf(CodeSessionBusy, "session %s is running a step; send the next action after its answer", sess.id)
	}
	defer sess.mu.Unlock()
	res, status, aerr := s.stepLocked(ctx, sess, msg)
	if aerr != nil {
		return OpenEnvResult{}, status, aerr
	}
	out := OpenEnvResult{Done: res.Done, Observation: OpenEnvObservation{SessionID: sess.id, Env: sess.st.id, ExampleID: sess.ex.ID,
		Turn: res.Turn, Messages: res.Observations, Reason: res.Reason, Score: res.Score}}
	if res.Score != nil && res.Score.Error == nil {
		r := res.Score.Reward
		out.Reward = &r
	}
	return out, 0, nil
}

func openEnvState(sess *session) OpenEnvState {
	if sess == nil {
		return OpenEnvState{}
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	id := sess.id
	return OpenEnvState{EpisodeID: &id, StepCount: sess.turns, Env: sess.st.id, ExampleID: sess.ex.ID,
		MaxTurns: sess.maxTurns, Done: sess.done, Transcript: append([]env.Message(nil), sess.transcript...)}
}

func (s *Server) handleOpenEnvWS(w http.ResponseWriter, r *http.Request) {
	// Each socket may hold a session, so sockets are bounded as sessions
	// are; one that opens none still costs a goroutine and a buffer.
	if n := s.sockets.Add(1); n > int64(s.cfg.MaxSessions) {
		s.sockets.Add(-1)
		w.Header().Set("Retry-After", "1")
		writeError(w, r, http.StatusTooManyRequests, apiErrorf(CodeSessionsExhausted, "%d OpenEnv WebSockets open, the --max-sessions bound; close idle ones", s.cfg.MaxSessions))
		return
	}
	defer s.sockets.Add(-1)
	c, err := websocket.Accept(w, r, nil)
	if err != nil {
		return // Accept answered the client
	}
	c.SetReadLimit(s.cfg.MaxBody)
	ctx := r.Context()
	owner := s.ownerOf(r)
	var sess *session
	defer func() {
		if sess != nil {
			s.sessions.remove(sess)
		}
	}()
	send := func(typ string, data any) error {
		b, err := json.Marshal(map[string]any{"type": typ, "data": data})
		if err != nil {
			return err
		}
		return c.Write(ctx, websocket.MessageText, b)
	}
	fail := func(code string, aerr *APIError) error {
		data := map[string]any{"message": aerr.Message, "code": code, "svbench_code": aerr.Code}
		return send("error", data)
	}
	for {
		// A socket with nothing to say for the idle timeout is closed, as
		// an idle session is: it would otherwise hold its place an hour.
		rctx, cancel := context.WithTimeout(ctx, s.cfg.SessionIdle)
		_, raw, err := c.Read(rctx)
		idle := rctx.Err() != nil && ctx.Err() == nil
		cancel()
		if idle {
			_ = c.Close(websocket.StatusPolicyViolation, fmt.Sprintf("idle for %s", s.cfg.SessionIdle))
			return
		}
		if err != nil {
			if websocket.CloseStatus(err) == -1 && !errors.Is(err, context.Canceled) {
				s.log.Debug("openenv websocket read", "request_id", requestID(ctx), "err", err)
			}
			return
		}
		var m openEnvMsg
		if jerr := json.Unmarshal(raw, &m); jerr != nil {
			err = fail(openEnvInvalidJSON, apiErrorf(CodeInvalidJSON, "Invalid JSON: %v", jerr))
		} else {
			err = s.openEnvMessage(ctx, owner, &sess, m, send, fail)
		}
		if errors.Is(err, errOpenEnvClose) {
			_ = c.Close(websocket.StatusNormalClosure, "")
			return
		}
		if err != nil {
			return
		}
	}
}

var errOpenEnvClose = errors.New("close")

// openEnvMessage answers one WebSocket message; *sess is the connection's
// session.
func (s *Server) openEnvMessage(ctx context.Context, owner string, sess **session, m openEnvMsg, send func(string, any) error, fail func(string, *APIError) error) error {
	switch m.Type {
	case "reset":
		var req OpenEnvReset
		if len(m.Data) > 0 {
			if err := json.Unmarshal(m.Data, &req); err != nil {
				return fail(openEnvValidationError, apiErrorf(CodeInvalidJSON, "reset data: %v", err))
			}
		}
		if *sess != nil {
			s.sessions.remove(*sess)
			*sess = nil
		}
		ns, res, status, aerr := s.openEnvOpen(ctx, req, owner, scopeWS)
		if aerr != nil {
			return fail(openEnvCode(status), aerr)
		}
		*sess = ns
		return send("observation", res)
	case "step":
		if *sess == nil {
			return fail(openEnvExecutionError, apiErrorf(CodeSessionNotFound, "no episode on this connection: send reset first"))
		}
		res, status, aerr := s.openEnvStep(ctx, *sess, m.Data)
		if aerr != nil {
			return fail(openEnvCode(status), aerr)
		}
		return send("observation", res)
	case "state":
		return send("state", openEnvState(*sess))
	case "close":
		return errOpenEnvClose
	}
	return fail(openEnvUnknownType, apiErrorf(CodeBadRequest, "Unknown message type: %s", m.Type))
}

func (s *Server) handleOpenEnvReset(w http.ResponseWriter, r *http.Request) {
	var req OpenEnvReset
	if r.ContentLength != 0 {
		if status, aerr := decodeBody(r, &req); aerr != nil {
			writeError(w, r, status, aerr)
			return
		}
	}
	_, res, status, aerr := s.openEnvOpen(r.Context(), req, s.ownerOf(r), scopeHTTP)
	if aerr != nil {
		if status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		writeError(w, r, status, aerr)
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// OpenEnvStepRequest is POST /step's body: OpenEnv's StepRequest plus the
// session /reset opened.
type OpenEnvStepRequest struct {
	Action    json.RawMessage `json:"action"`
	TimeoutS  float64         `json:"timeout_s,omitempty"`
	RequestID string          `json:"request_id,omitempty"`
	SessionID string          `json:"session_id,omitempty"`
}

func (s *Server) handleOpenEnvStep(w http.ResponseWriter, r *http.Request) {
	var req OpenEnvStepRequest
	if status, aerr := decodeBody(r, &req); aerr != nil {
		writeError(w, r, status, aerr)
		return
	}
	if len(req.Action) == 0 {
		writeError(w, r, http.StatusUnprocessableEntity, apiErrorf(CodeBadRequest, `field "action" missing`))
		return
	}
	id := req.SessionID
	if id == "" {
		var meta struct {
			Metadata struct {
				SessionID string `json:"session_id"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(req.Action, &meta)
		id = meta.Metadata.SessionID
	}
	if id == "" {
		writeError(w, r, http.StatusUnprocessableEntity, apiErrorf(CodeBadRequest,
			`field "session_id" missing: an episode lives in the session POST /reset opened (its observation.session_id); or use the WebSocket /ws`))
		return
	}
	sess := s.sessions.get(id, s.ownerOf(r), scopeHTTP)
	if sess == nil {
		writeError(w, r, http.StatusNotFound, apiErrorf(CodeSessionNotFound,
			"session %q does not exist: it ended, was closed, expired (idle %s, age %s) or is held by another server process; POST /reset again", id, s.cfg.SessionIdle, s.cfg.SessionTTL))
		return
	}
	ctx := r.Context()
	if req.TimeoutS > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.TimeoutS*float64(time.Second)))
		defer cancel()
	}
	res, status, aerr := s.openEnvStep(ctx, sess, req.Action)
	if aerr != nil {
		writeError(w, r, status, aerr)
		return
	}
	if res.Done {
		// Nothing closes an HTTP episode but its end.
		s.sessions.remove(sess)
	}
	writeJSON(w, http.StatusOK, res)
}

func (s *Server) handleOpenEnvState(w http.ResponseWriter, r *http.Request) {
	id := r.URL.Query().Get("session_id")
	if id == "" {
		writeJSON(w, http.StatusOK, OpenEnvState{}) // OpenEnv's fresh environment
		return
	}
	sess := s.sessions.get(id, s.ownerOf(r), scopeHTTP)
	if sess == nil {
		writeError(w, r, http.StatusNotFound, apiErrorf(CodeSessionNotFound, "session %q does not exist", id))
		return
	}
	writeJSON(w, http.StatusOK, openEnvState(sess))
}

func (s *Server) handleOpenEnvHealth(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"status": "healthy"})
}

func (s *Server) handleOpenEnvMetadata(w http.ResponseWriter, r *http.Request) {
	var descs []string
	for _, id := range s.order {
		descs = append(descs, fmt.Sprintf("%s: %s", id, s.envs[id].info.Description))
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"name": "svbench",
		"description": "svbench security environments (" + strings.Join(s.order, ", ") + "): reset with {\"env\", \"example_id\"} opens an episode, " +
			"each step is one assistant message with tool calls; the final reward is what `svbench score` gives the transcript. " + strings.Join(descs, " "),
		"version":           version.Version,
		"documentation_url": "https://github.com/svbench/svbench/blob/main/server/README.md#openenv",
	})
}

// openEnvSchemas are /schema's JSON schemas, written by hand to match the
// types above.
func (s *Server) openEnvSchemas() map[string]any {
	str := map[string]any{"type": "string"}
	obj := map[string]any{"type": "object"}
	message := map[string]any{"type": "object", "properties": map[string]any{
		"role": str, "content": str, "reasoning": str, "tool_call_id": str, "name": str,
		"tool_calls": map[string]any{"type": "array", "items": obj},
	}}
	toolCall := map[string]any{"type": "object", "required": []string{"function"}, "properties": map[string]any{
		"id": str, "type": map[string]any{"const": "function"},
		"function": map[string]any{"type": "object", "required": []string{"name"}, "properties": map[string]any{
			"name": str, "arguments": map[string]any{"description": "JSON text (OpenAI) or a JSON object"}}},
	}}
	return map[string]any{
		"action": map[string]any{"title": "SvbenchAction", "type": "object",
			"description": "One assistant message; with tool_calls the tools run, without them it is the final answer",
			"properties": map[string]any{
				"content": map[string]any{"type": []string{"string", "null"}}, "reasoning_content": str, "reasoning": str,
				"tool_calls": map[string]any{"type": "array", "maxItems": MaxSessionToolCalls, "items": toolCall},
				"metadata":   obj,
			}},
		"observation": map[string]any{"title": "SvbenchObservation", "type": "object", "properties": map[string]any{
			"session_id": str, "env": map[string]any{"type": "string", "enum": s.order}, "example_id": str,
			"turn": map[string]any{"type": "integer"}, "messages": map[string]any{"type": "array", "items": message},
			"tools":     map[string]any{"type": "array", "items": obj, "description": "after reset: the OpenAI tools[]"},
			"max_turns": map[string]any{"type": "integer"}, "reason": str,
			"score": map[string]any{"type": "object", "description": "when done: /v1/score's result (reward, components, solved, …)"},
			"done":  map[string]any{"type": "boolean"}, "reward": map[string]any{"type": []string{"number", "null"}},
		}},
		"state": map[string]any{"title": "SvbenchState", "type": "object", "properties": map[string]any{
			"episode_id": map[string]any{"type": []string{"string", "null"}}, "step_count": map[string]any{"type": "integer", "minimum": 0},
			"env": str, "example_id": str, "max_turns": map[string]any{"type": "integer"}, "done": map[string]any{"type": "boolean"},
			"transcript": map[string]any{"type": "array", "items": message},
		}},
	}
}

func (s *Server) handleOpenEnvSchema(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.openEnvSchemas())
}
