package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/santhosh-tekuri/jsonschema/v6"

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
//   - OpenEnv's MCP tool actions are steps too: {"type": "list_tools"}
//     answers observation.tools (name, description, input_schema) and
//     spends no turn; {"type": "call_tool", "tool_name", "arguments"} is
//     the turn an assistant message calling that one tool would be, and
//     answers observation.tool_name, .result (the tool's text) and .error
//     beside a step's fields. An object that is the environment's answer
//     (it validates against output_schema, which names required fields)
//     is the final answer as it stands: verifiers' OpenEnv taskset sends
//     a JSON reply so. Anything else (another type, a field no assistant
//     message has) is a validation error and the episode stays as it was:
//     taking it as an answer scored list_tools as an empty one.
//   - A reset without "env" opens serve --openenv-default-env (default:
//     --default-env, else the first served environment): OpenEnv's
//     clients and harness factories reset with seed and episode_id only.
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

// OpenEnvCallTool is OpenEnv's CallToolAction: {"type": "call_tool",
// "tool_name", "arguments"}.
type OpenEnvCallTool struct {
	Type     string          `json:"type"`
	ToolName string          `json:"tool_name"`
	Args     json.RawMessage `json:"arguments"`
	Metadata map[string]any  `json:"metadata,omitempty"`
}

// OpenEnvTool is a tool as OpenEnv's ListToolsObservation carries it (MCP's
// tool spec, input_schema spelled as OpenEnv's Tool model spells it).
type OpenEnvTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// OpenEnvToolError is OpenEnv's ToolError: a call that did not reach a tool.
type OpenEnvToolError struct {
	ErrorType string `json:"error_type"`
	Message   string `json:"message"`
}

// openEnvMessageKeys are the fields a message action may carry: the
// assistant message svbench reads, plus the OpenAI message fields a
// trainer passing its whole choice.message along would include, which
// carry nothing svbench scores. Any other key means the sender meant
// something svbench does not do, and guessing that it is an answer is
// what scored {"type": "list_tools"} as an empty one.
var openEnvMessageKeys = map[string]bool{
	"content": true, "tool_calls": true, "reasoning_content": true, "reasoning": true, "metadata": true,
	"role": true, "name": true, "refusal": true, "annotations": true, "audio": true,
}

// openEnvCallToolKeys are CallToolAction's fields (OpenEnv forbids others).
var openEnvCallToolKeys = map[string]bool{"type": true, "tool_name": true, "arguments": true, "metadata": true}

// openEnvAction is a step's action, read: exactly one of listTools, call
// or msg.
type openEnvAction struct {
	listTools bool
	call      *OpenEnvCallTool
	msg       *env.Message
}

// openEnvAnswerSchemas caches compiled output schemas by their text.
var openEnvAnswerSchemas sync.Map // string -> *jsonschema.Schema (nil: none usable)

// openEnvAnswerSchema is the environment's answer schema, compiled, when
// it names required fields; an object that only satisfies "type":
// "object" says nothing about being meant as an answer.
func openEnvAnswerSchema(raw json.RawMessage) *jsonschema.Schema {
	if len(raw) == 0 {
		return nil
	}
	if v, ok := openEnvAnswerSchemas.Load(string(raw)); ok {
		sch, _ := v.(*jsonschema.Schema)
		return sch
	}
	var sch *jsonschema.Schema
	var top struct {
		Required []string `json:"required"`
	}
	if json.Unmarshal(raw, &top) == nil && len(top.Required) > 0 {
		if doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw)); err == nil {
			c := jsonschema.NewCompiler()
			if c.AddResource("answer.schema.json", doc) == nil {
				sch, _ = c.Compile("answer.schema.json")
			}
		}
	}
	openEnvAnswerSchemas.Store(string(raw), sch)
	return sch
}

// parseOpenEnvAction reads an action as the shapes svbench documents:
// OpenEnv's list_tools and call_tool, one assistant message, and the
// environment's own answer object (output_schema) sent as the action
// itself, which is what verifiers' OpenEnv taskset makes of a reply that
// is a JSON object. Everything else is a validation error, never an
// answer. answer is the episode's output schema (nil: no episode).
func parseOpenEnvAction(data json.RawMessage, answer *jsonschema.Schema) (openEnvAction, *APIError) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil || fields == nil {
		return openEnvAction{}, apiErrorf(CodeInvalidItem, "action: want a JSON object (an assistant message, {\"type\": \"list_tools\"} or {\"type\": \"call_tool\", \"tool_name\", \"arguments\"}), got %.60s", data)
	}
	if raw, ok := fields["type"]; ok {
		var typ string
		if err := json.Unmarshal(raw, &typ); err != nil {
			return openEnvAction{}, apiErrorf(CodeInvalidItem, "action field \"type\": want a string, got %.40s", raw)
		}
		switch typ {
		case "list_tools":
			for _, k := range slices.Sorted(maps.Keys(fields)) { // the first unknown field, every time
				if k != "type" && k != "metadata" {
					return openEnvAction{}, apiErrorf(CodeInvalidItem, "list_tools action: unknown field %q", k)
				}
			}
			return openEnvAction{listTools: true}, nil
		case "call_tool":
			for _, k := range slices.Sorted(maps.Keys(fields)) {
				if !openEnvCallToolKeys[k] {
					return openEnvAction{}, apiErrorf(CodeInvalidItem, "call_tool action: unknown field %q (fields: type, tool_name, arguments, metadata)", k)
				}
			}
			var c OpenEnvCallTool
			if err := json.Unmarshal(data, &c); err != nil {
				return openEnvAction{}, apiErrorf(CodeInvalidItem, "call_tool action: %v", err)
			}
			if c.ToolName == "" {
				return openEnvAction{}, apiErrorf(CodeInvalidItem, "call_tool action: field \"tool_name\" missing")
			}
			args := strings.TrimSpace(string(c.Args))
			if args == "" || args == "null" {
				c.Args = json.RawMessage("{}")
			} else if args[0] != '{' {
				return openEnvAction{}, apiErrorf(CodeInvalidItem, "call_tool action: field \"arguments\" must be a JSON object, got %.40s", args)
			}
			return openEnvAction{call: &c}, nil
		}
		return openEnvAction{}, apiErrorf(CodeInvalidItem,
			"action type %q is not one svbench serves: send {\"type\": \"list_tools\"}, {\"type\": \"call_tool\", \"tool_name\", \"arguments\"} or an assistant message {\"content\", \"tool_calls\"}", typ)
	}
	known := false
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		if !openEnvMessageKeys[k] {
			if answer != nil {
				inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
				if err == nil && answer.Validate(inst) == nil {
					return openEnvAction{msg: &env.Message{Role: env.RoleAssistant, Content: strings.TrimSpace(string(data))}}, nil
				}
			}
			return openEnvAction{}, apiErrorf(CodeInvalidItem,
				"action field %q is not an assistant message's and the action is not this environment's answer object (GET /v1/environments: output_schema): an answer is {\"content\": \"…\"} or that object, tool calls are \"tool_calls\" or {\"type\": \"call_tool\"}", k)
		}
		if k == "content" || k == "tool_calls" {
			known = true
		}
	}
	if !known {
		return openEnvAction{}, apiErrorf(CodeInvalidItem, "action carries neither \"content\" nor \"tool_calls\": an answer is {\"content\": \"…\"}")
	}
	if raw, ok := fields["role"]; ok {
		var role env.Role
		if json.Unmarshal(raw, &role) != nil || (role != "" && role != env.RoleAssistant) {
			return openEnvAction{}, apiErrorf(CodeInvalidItem, "action field \"role\": an action is the assistant's message, got %.40s", raw)
		}
	}
	var act OpenEnvAction
	if err := json.Unmarshal(data, &act); err != nil {
		return openEnvAction{}, apiErrorf(CodeInvalidItem, "action: %v", err)
	}
	msg, aerr := act.message()
	if aerr != nil {
		return openEnvAction{}, aerr
	}
	return openEnvAction{msg: &msg}, nil
}

// OpenEnvResult is an observation's data, /reset's and /step's body.
type OpenEnvResult struct {
	// Observation is an OpenEnvObservation, or what list_tools and
	// call_tool answer (OpenEnvToolsObservation, OpenEnvCallObservation).
	Observation any      `json:"observation"`
	Reward      *float64 `json:"reward"`
	Done        bool     `json:"done"`
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

// OpenEnvToolsObservation answers list_tools: OpenEnv's
// ListToolsObservation ("tools" in MCP's shape) plus where it came from.
type OpenEnvToolsObservation struct {
	Tools     []OpenEnvTool `json:"tools"`
	SessionID string        `json:"session_id,omitempty"`
	Env       string        `json:"env"`
	Turn      int           `json:"turn"`
}

// OpenEnvCallObservation answers call_tool: OpenEnv's CallToolObservation
// ("tool_name", "result", "error") plus a step's observation (the tool's
// message and any turn the environment played after it, the score when
// the call ended the episode).
type OpenEnvCallObservation struct {
	ToolName string            `json:"tool_name"`
	Result   any               `json:"result"`
	Error    *OpenEnvToolError `json:"error"`
	OpenEnvObservation
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
	case http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return openEnvValidationError
	}
	return openEnvExecutionError
}

// openEnvOpen opens the session reset asks for, for owner in scope.
func (s *Server) openEnvOpen(ctx context.Context, req OpenEnvReset, owner string, scope sessionScope) (*session, OpenEnvResult, int, *APIError) {
	given := func(f json.RawMessage) bool { return len(f) > 0 && strings.TrimSpace(string(f)) != "null" }
	if req.Env == "" {
		// OpenEnv's clients reset with a seed and an episode id only; the
		// instance, not the request, says which environment that is.
		st, aerr := s.openEnvDefault()
		if aerr != nil {
			return nil, OpenEnvResult{}, http.StatusUnprocessableEntity, aerr
		}
		req.Env = st.id
	}
	if !given(req.ExampleID) && !given(req.Example) && !given(req.Answer) {
		st, aerr := s.lookupEnv(req.Env)
		if aerr != nil {
			return nil, OpenEnvResult{}, http.StatusNotFound, aerr
		}
		if st.ds == nil || len(st.ds.Examples) == 0 {
			return nil, OpenEnvResult{}, http.StatusBadRequest, apiErrorf(CodeInvalidItem,
				"%s serves no rows: give \"example\" or \"answer\", or reset an environment that does (reset's \"env\"; svbench serve --openenv-default-env)", st.id)
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

// openEnvDefault is the environment a reset without "env" opens.
func (s *Server) openEnvDefault() (*envState, *APIError) {
	if s.openEnvDef == "" {
		return nil, apiErrorf(CodeUnknownEnv,
			"field \"env\" missing and this server has no default OpenEnv environment (served: %v): name one in reset's \"env\", or start svbench serve with --openenv-default-env ENV", s.order)
	}
	return s.envs[s.openEnvDef], nil
}

// openEnvStep plays one action on sess. A list_tools or a call_tool
// that reaches no tool leaves the episode as it was.
func (s *Server) openEnvStep(ctx context.Context, sess *session, data json.RawMessage) (any, bool, int, *APIError) {
	act, aerr := parseOpenEnvAction(data, openEnvAnswerSchema(sess.st.env.Info().OutputSchema))
	if aerr != nil {
		return nil, false, http.StatusUnprocessableEntity, aerr
	}
	if !sess.mu.TryLock() {
		return nil, false, http.StatusConflict, apiErrorf(CodeSessionBusy, "session %s is running a step; send the next action after its answer", sess.id)
	}
	defer sess.mu.Unlock()
	if act.listTools {
		return OpenEnvResult{Observation: OpenEnvToolsObservation{Tools: openEnvTools(sess.tools), SessionID: sess.id, Env: sess.st.id, Turn: sess.turns}}, false, 0, nil
	}
	msg := act.msg
	if act.call != nil {
		if !slices.ContainsFunc(sess.tools, func(t env.Tool) bool { return t.Name == act.call.ToolName }) {
			names := make([]string, 0, len(sess.tools))
			for _, t := range sess.tools {
				names = append(names, t.Name)
			}
			// OpenEnv answers an unknown tool in the observation, and the
			// episode goes on: the turn is not spent.
			return OpenEnvResult{Observation: OpenEnvCallObservation{ToolName: act.call.ToolName,
				Error:              &OpenEnvToolError{ErrorType: "tool_not_found", Message: fmt.Sprintf("tool %q is not one of this episode's tools %v", act.call.ToolName, names)},
				OpenEnvObservation: OpenEnvObservation{SessionID: sess.id, Env: sess.st.id, ExampleID: sess.ex.ID, Turn: sess.turns, Messages: []env.Message{}}}}, false, 0, nil
		}
		// The call is the assistant turn a tool-calling message would
		// have been, so budgets, turns and the scored transcript treat
		// both alike.
		msg = &env.Message{Role: env.RoleAssistant, ToolCalls: []env.ToolCall{
			{ID: fmt.Sprintf("call_%d", sess.turns+1), Name: act.call.ToolName, Arguments: string(act.call.Args)}}}
	}
	res, status, aerr := s.stepLocked(ctx, sess, *msg)
	if aerr != nil {
		return nil, false, status, aerr
	}
	obs := OpenEnvObservation{SessionID: sess.id, Env: sess.st.id, ExampleID: sess.ex.ID,
		Turn: res.Turn, Messages: res.Observations, Reason: res.Reason, Score: res.Score}
	out := OpenEnvResult{Done: res.Done, Observation: obs}
	if res.Score != nil && res.Score.Error == nil {
		r := res.Score.Reward
		out.Reward = &r
	}
	if act.call != nil {
		co := OpenEnvCallObservation{ToolName: act.call.ToolName, OpenEnvObservation: obs}
		for _, m := range res.Observations {
			if m.Role == env.RoleTool && m.ToolCallID == msg.ToolCalls[0].ID {
				co.Result = m.Content
			}
		}
		if co.Result == nil && strings.HasPrefix(res.Reason, "error: ") {
			co.Error = &OpenEnvToolError{ErrorType: "execution_error", Message: strings.TrimPrefix(res.Reason, "error: ")}
		}
		out.Observation = co
	}
	return out, res.Done, 0, nil
}

// openEnvTools renders tools as OpenEnv's list_tools answers them.
func openEnvTools(tools []env.Tool) []OpenEnvTool {
	out := make([]OpenEnvTool, 0, len(tools))
	for _, t := range tools {
		schema := t.Parameters
		if len(schema) == 0 {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		out = append(out, OpenEnvTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	return out
}

// openEnvListToolsFresh answers list_tools where no episode is open, as
// OpenEnv lets a client discover tools before reset: the tools the
// environment a bare reset would open declares.
func (s *Server) openEnvListToolsFresh(data json.RawMessage) (OpenEnvResult, bool, int, *APIError) {
	act, aerr := parseOpenEnvAction(data, nil)
	if aerr != nil {
		return OpenEnvResult{}, false, http.StatusUnprocessableEntity, aerr
	}
	if !act.listTools {
		return OpenEnvResult{}, false, 0, nil
	}
	st, aerr := s.openEnvDefault()
	if aerr != nil {
		return OpenEnvResult{}, true, http.StatusUnprocessableEntity, aerr
	}
	return OpenEnvResult{Observation: OpenEnvToolsObservation{Tools: openEnvTools(st.env.Info().Tools), Env: st.id}}, true, 0, nil
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
