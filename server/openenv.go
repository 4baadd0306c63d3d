package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"strings"

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
