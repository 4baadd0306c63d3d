package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/svbench/svbench/base/version"
)

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
			res, ok, status, aerr := s.openEnvListToolsFresh(m.Data)
			if aerr != nil {
				return fail(openEnvCode(status), aerr)
			}
			if ok {
				return send("observation", res)
			}
			return fail(openEnvExecutionError, apiErrorf(CodeSessionNotFound, "no episode on this connection: send reset first"))
		}
		res, _, status, aerr := s.openEnvStep(ctx, *sess, m.Data)
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
		if res, ok, status, aerr := s.openEnvListToolsFresh(req.Action); aerr != nil {
			writeError(w, r, status, aerr)
			return
		} else if ok {
			writeJSON(w, http.StatusOK, res)
			return
		}
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
	res, done, status, aerr := s.openEnvStep(ctx, sess, req.Action)
	if aerr != nil {
		writeError(w, r, status, aerr)
		return
	}
	if done {
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
		// The message is the action's top level, content required, so a
		// client that wraps a plain-text reply into the one required field
		// (verifiers' OpenEnv taskset) sends it as the answer; OpenEnv's
		// tool actions are in $defs.
		"action": map[string]any{"title": "SvbenchAction", "type": "object", "required": []string{"content"},
			"description": "One assistant message {\"content\", \"tool_calls\"}: with tool_calls the tools run, without them content is the final answer " +
				"(a JSON answer goes in content as text; content may be null beside tool_calls). " +
				"OpenEnv's tool actions are also served: {\"type\": \"list_tools\"} answers the tools, {\"type\": \"call_tool\", \"tool_name\", \"arguments\"} runs one as a turn. " +
				"The environment's answer object (GET /v1/environments: output_schema) sent as the action itself is the final answer. " +
				"Any other field or type is a validation error, never an answer.",
			"properties": map[string]any{
				"role":    map[string]any{"const": "assistant"},
				"content": map[string]any{"type": []string{"string", "null"}}, "reasoning_content": str, "reasoning": str,
				"tool_calls": map[string]any{"type": "array", "maxItems": MaxSessionToolCalls, "items": toolCall},
				"metadata":   obj,
			},
			"$defs": map[string]any{
				"ListToolsAction": map[string]any{"type": "object", "required": []string{"type"}, "additionalProperties": false,
					"properties": map[string]any{"type": map[string]any{"const": "list_tools"}, "metadata": obj}},
				"CallToolAction": map[string]any{"type": "object", "required": []string{"type", "tool_name"}, "additionalProperties": false,
					"properties": map[string]any{"type": map[string]any{"const": "call_tool"}, "tool_name": str, "arguments": obj, "metadata": obj}},
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
