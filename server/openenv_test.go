package server

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/codevuln"
	"github.com/svbench/svbench/envs/configaudit"
)

// openEnvWS is a test client of /ws speaking OpenEnv's envelopes.
type openEnvWS struct {
	t *testing.T
	c *websocket.Conn
}

func dialOpenEnv(t *testing.T, ls *liveServer, hdr http.Header) (*openEnvWS, *http.Response, error) {
	t.Helper()
	c, resp, err := websocket.Dial(t.Context(), "ws"+strings.TrimPrefix(ls.URL, "http")+"/ws", &websocket.DialOptions{HTTPHeader: hdr})
	if err != nil {
		return nil, resp, err
	}
	c.SetReadLimit(64 << 20)
	return &openEnvWS{t: t, c: c}, resp, nil
}

// send writes {"type", "data"} (raw text when msg is a string) and reads
// the answer's type and data.
func (o *openEnvWS) send(msg any) (string, map[string]any) {
	o.t.Helper()
	b, ok := msg.(string)
	var raw []byte
	if ok {
		raw = []byte(b)
	} else {
		var err error
		if raw, err = json.Marshal(msg); err != nil {
			o.t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(o.t.Context(), 5*time.Minute)
	defer cancel()
	if err := o.c.Write(ctx, websocket.MessageText, raw); err != nil {
		o.t.Fatal(err)
	}
	_, ans, err := o.c.Read(ctx)
	if err != nil {
		o.t.Fatal(err)
	}
	var out struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(ans, &out); err != nil {
		o.t.Fatalf("answer %s: %v", ans, err)
	}
	return out.Type, out.Data
}

// call sends a message that must be answered with want.
func (o *openEnvWS) call(typ string, data any, want string) map[string]any {
	o.t.Helper()
	msg := map[string]any{"type": typ}
	if data != nil {
		msg["data"] = data
	}
	got, ans := o.send(msg)
	if got != want {
		o.t.Fatalf("%s: answered %s %v, want %s", typ, got, ans, want)
	}
	return ans
}

// playOpenEnv plays an episode through reset and step (each answering an
// observation's data: {"observation", "reward", "done"}); next writes each
// assistant message. It returns the transcript and the final observation.
func playOpenEnv(t *testing.T, reset func() map[string]any, step func(action map[string]any) map[string]any,
	next func(conv []env.Message, tools []env.Tool) env.Message) ([]env.Message, map[string]any, OpenEnvObservation) {
	t.Helper()
	first := reset()
	if first["done"] != false || first["reward"] != nil {
		t.Fatalf("reset: %v", first)
	}
	var obs OpenEnvObservation
	decode(t, first["observation"], &obs)
	var tools []env.Tool
	for _, raw := range obs.Tools {
		var tool struct{ Function env.Tool }
		decode(t, raw, &tool)
		tools = append(tools, tool.Function)
	}
	if len(obs.Messages) == 0 || len(tools) == 0 || obs.SessionID == "" {
		t.Fatalf("reset observation without prompt, tools or session: %+v", obs)
	}
	conv := slices.Clone(obs.Messages)
	var transcript []env.Message
	for turn := 1; turn <= obs.MaxTurns; turn++ {
		msg := next(conv, tools)
		res := step(wire(msg))
		var o OpenEnvObservation
		decode(t, res["observation"], &o)
		if o.Turn != turn {
			t.Errorf("step %d answered turn %d", turn, o.Turn)
		}
		msg.Role = env.RoleAssistant
		conv = append(append(conv, msg), o.Messages...)
		transcript = append(append(transcript, msg), o.Messages...)
		if res["done"] == true {
			if o.Score == nil || o.Score.Error != nil || res["reward"] != o.Score.Reward {
				t.Fatalf("done without a score or with reward %v: %+v", res["reward"], o.Score)
			}
			var score map[string]any
			decode(t, o.Score, &score)
			return transcript, score, o
		}
		if res["reward"] != nil {
			t.Errorf("reward %v before done", res["reward"])
		}
	}
	t.Fatalf("episode not done after %d turns", obs.MaxTurns)
	return nil, nil, OpenEnvObservation{}
}

func waitNoSessions(t *testing.T, ls *liveServer) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ls.sessions.count() != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still open after the socket closed", ls.sessions.count())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestOpenEnvE2WebSocket: E2 episodes (kube-linter on a k8s row, trivy on
// a Terraform row) played by the tool-autofix policy through /ws end with
// the reward /v1/score gives the transcript; state follows the episode;
// closing (by message, or by dropping the socket) releases the session.
// One more row is played through the HTTP /reset and /step.
func TestOpenEnvE2WebSocket(t *testing.T) {
	ls, ds, act := e2Rig(t)
	seen := map[string]string{}
	for _, ex := range ds.Examples {
		kind, _ := ex.Meta["fixture_type"].(string)
		if _, ok := seen[kind]; ok || (kind != "k8s" && kind != "tf") {
			continue
		}
		seen[kind] = ex.ID
		ws, _, err := dialOpenEnv(t, ls, nil)
		if err != nil {
			t.Fatal(err)
		}
		if st := ws.call("state", nil, "state"); st["episode_id"] != nil || st["step_count"] != float64(0) {
			t.Errorf("state before reset: %v", st)
		}
		transcript, got, last := playOpenEnv(t,
			func() map[string]any {
				return ws.call("reset", map[string]any{"env": "e2", "example_id": ex.ID}, "observation")
			},
			func(a map[string]any) map[string]any { return ws.call("step", a, "observation") }, act)
		want := map[string]string{"k8s": configaudit.FnKubeLinter, "tf": configaudit.FnTrivy}[kind]
		if tools := calledTools(transcript); !slices.Contains(tools, want) {
			t.Errorf("%s row %s: tools called %v, want %s", kind, ex.ID, tools, want)
		}
		sameScore(t, "openenv e2 "+kind, got, scoreTranscript(t, ls, "e2", ex.ID, transcript))
		st := ws.call("state", nil, "state")
		if st["episode_id"] != last.SessionID || st["done"] != true || st["step_count"] != float64(last.Turn) {
			t.Errorf("state after the episode: %v (session %s, %d turns)", st, last.SessionID, last.Turn)
		}
		if typ, ans := ws.send(map[string]any{"type": "step", "data": map[string]any{"content": "again"}}); typ != "error" || ans["svbench_code"] != CodeSessionDone {
			t.Errorf("step after done: %s %v", typ, ans)
		}
		// The ended episode holds no slot (its session is kept for state).
		if ls.sessions.count() != 0 {
			t.Errorf("%d live sessions after the episode ended, want 0", ls.sessions.count())
		}
		if kind == "k8s" {
			b, _ := json.Marshal(map[string]any{"type": "close"})
			if err := ws.c.Write(t.Context(), websocket.MessageText, b); err != nil {
				t.Fatal(err)
			}
			if _, _, err := ws.c.Read(t.Context()); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
				t.Errorf("after close: %v, want a normal closure", err)
			}
		} else {
			_ = ws.c.CloseNow() // the client goes away without a word
		}
		waitNoSessions(t, ls)
	}
	if seen["k8s"] == "" || seen["tf"] == "" {
		t.Fatalf("fixture kinds seen: %v", seen)
	}

	// The HTTP mapping: /reset opens a session, /step names it.
	id := seen["k8s"]
	var sid string
	transcript, got, _ := playOpenEnv(t,
		func() map[string]any {
			st, body := ls.do(t, "POST", "/reset", map[string]any{"env": "e2", "example_id": id, "seed": 7})
			if st != http.StatusOK {
				t.Fatalf("/reset: %d %v", st, body)
			}
			sid, _ = body["observation"].(map[string]any)["session_id"].(string)
			return body
		},
		func(a map[string]any) map[string]any {
			st, body := ls.do(t, "POST", "/step", map[string]any{"action": a, "session_id": sid})
			if st != http.StatusOK {
				t.Fatalf("/step: %d %v", st, body)
			}
			return body
		}, act)
	sameScore(t, "openenv http e2", got, scoreTranscript(t, ls, "e2", id, transcript))
	if ls.sessions.count() != 0 {
		t.Errorf("HTTP episode's session still open after done")
	}
	if st, body := ls.do(t, "POST", "/step", map[string]any{"action": map[string]any{"content": "x"}}); st != http.StatusUnprocessableEntity {
		t.Errorf("/step without session_id: %d %v", st, body)
	}
	if st, body := ls.do(t, "POST", "/step", map[string]any{"action": map[string]any{"content": "x"}, "session_id": sid}); st != http.StatusNotFound {
		t.Errorf("/step on an ended session: %d %v", st, body)
	}
	// Without an example, the seed picks the row.
	st1, b1 := ls.do(t, "POST", "/reset", map[string]any{"seed": 3})
	st2, b2 := ls.do(t, "POST", "/reset", map[string]any{"seed": 3})
	if st1 != 200 || st2 != 200 || b1["observation"].(map[string]any)["example_id"] != b2["observation"].(map[string]any)["example_id"] {
		t.Errorf("seeded resets: %d %v / %d %v", st1, b1, st2, b2)
	}
}

// TestOpenEnvE3RunTests: an E3 episode through /ws whose first step runs
// the visible tests and whose next steps are the reference fix ends with
// /v1/score's reward of the transcript.
func TestOpenEnvE3RunTests(t *testing.T) {
	ls, ex, act := e3Rig(t)
	ws, _, err := dialOpenEnv(t, ls, nil)
	if err != nil {
		t.Fatal(err)
	}
	transcript, got, _ := playOpenEnv(t,
		func() map[string]any {
			return ws.call("reset", map[string]any{"env": "e3", "example_id": ex.ID}, "observation")
		},
		func(a map[string]any) map[string]any { return ws.call("step", a, "observation") },
		act)
	if tools := calledTools(transcript); len(tools) == 0 || tools[0] != codevuln.FnRunTests {
		t.Fatalf("tools called %v, want run_tests first", tools)
	}
	sameScore(t, "openenv e3", got, scoreTranscript(t, ls, "e3", ex.ID, transcript))
	if got["solved"] != true {
		t.Errorf("the reference fix played through /ws is not solved: %v", got)
	}
	_ = ws.c.Close(websocket.StatusNormalClosure, "")
	waitNoSessions(t, ls)
}

// TestOpenEnvProtocol: errors come back as OpenEnv's error messages (a
// step before reset, bad JSON, an unknown type, a bad reset); the socket
// needs the token as other routes do; /health, /schema and /metadata
// answer OpenEnv's shapes.
func TestOpenEnvProtocol(t *testing.T) {
	ls := startServer(t, Config{Envs: []string{"e2"}, Logger: quietLog, Token: "sekrit"})
	if _, resp, err := dialOpenEnv(t, ls, nil); err == nil || resp == nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("dial without the token: %v %v", resp, err)
	}
	ws, _, err := dialOpenEnv(t, ls, http.Header{"Authorization": {"Bearer sekrit"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		msg  any
		code string
	}{
		{map[string]any{"type": "step", "data": map[string]any{"content": "hi"}}, openEnvExecutionError},
		{"{not json", openEnvInvalidJSON},
		{map[string]any{"type": "dance"}, openEnvUnknownType},
		{map[string]any{"type": "reset", "data": map[string]any{"env": "nope", "example_id": "x"}}, openEnvValidationError},
		{map[string]any{"type": "reset", "data": map[string]any{"env": "e2", "example_id": "no-such-row"}}, openEnvValidationError},
	} {
		typ, ans := ws.send(c.msg)
		if typ != "error" || ans["code"] != c.code || ans["message"] == "" {
			t.Errorf("%v: answered %s %v, want error %s", c.msg, typ, ans, c.code)
		}
	}
	if n := ls.sessions.count(); n != 0 {
		t.Errorf("%d sessions after failed resets", n)
	}
	_ = ws.c.Close(websocket.StatusNormalClosure, "")

	if st, body := ls.do(t, "GET", "/health", nil); st != 200 || body["status"] != "healthy" {
		t.Errorf("/health: %d %v", st, body)
	}
	auth := []string{"Authorization", "Bearer sekrit"}
	st, body := ls.do(t, "GET", "/schema", nil, auth...)
	if st != 200 {
		t.Fatalf("/schema: %d %v", st, body)
	}
	for _, k := range []string{"action", "observation", "state"} {
		if m, _ := body[k].(map[string]any); m["type"] != "object" || m["properties"] == nil {
			t.Errorf("/schema %s: %v", k, body[k])
		}
	}
	if st, body := ls.do(t, "GET", "/metadata", nil, auth...); st != 200 || body["name"] != "svbench" || !strings.Contains(body["description"].(string), ls.order[0]) {
		t.Errorf("/metadata: %d %v", st, body)
	}
	if st, _ := ls.do(t, "GET", "/metadata", nil); st != http.StatusUnauthorized {
		t.Errorf("/metadata without the token: %d", st)
	}
}

// openEnvTransport is one OpenEnv route's reset and step: the WebSocket
// /ws or the HTTP /reset and /step. step answers ("observation", data) or
// ("error", {"code", …}) as the socket does; HTTP errors map onto the
// socket's codes (422 is VALIDATION_ERROR) and keep their status.
type openEnvTransport struct {
	name  string
	reset func(t *testing.T, ls *liveServer, data map[string]any) map[string]any
	step  func(t *testing.T, ls *liveServer, action any) (string, map[string]any, int)
	state func(t *testing.T, ls *liveServer) map[string]any
}

func openEnvTransports(t *testing.T, ls *liveServer) []openEnvTransport {
	var ws *openEnvWS
	var sid string
	return []openEnvTransport{
		{name: "ws",
			reset: func(t *testing.T, ls *liveServer, data map[string]any) map[string]any {
				if ws == nil {
					var err error
					if ws, _, err = dialOpenEnv(t, ls, nil); err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { _ = ws.c.CloseNow() })
				}
				return ws.call("reset", data, "observation")
			},
			step: func(t *testing.T, ls *liveServer, action any) (string, map[string]any, int) {
				typ, ans := ws.send(map[string]any{"type": "step", "data": action})
				return typ, ans, 0
			},
			state: func(t *testing.T, ls *liveServer) map[string]any { return ws.call("state", nil, "state") },
		},
		{name: "http",
			reset: func(t *testing.T, ls *liveServer, data map[string]any) map[string]any {
				st, body := ls.do(t, "POST", "/reset", data)
				if st != http.StatusOK {
					t.Fatalf("/reset: %d %v", st, body)
				}
				sid, _ = body["observation"].(map[string]any)["session_id"].(string)
				return body
			},
			step: func(t *testing.T, ls *liveServer, action any) (string, map[string]any, int) {
				st, body := ls.do(t, "POST", "/step", map[string]any{"action": action, "session_id": sid})
				if st != http.StatusOK {
					code := openEnvExecutionError
					if st == http.StatusUnprocessableEntity {
						code = openEnvValidationError
					}
					errBody, _ := body["error"].(map[string]any)
					return "error", map[string]any{"code": code, "svbench_code": errBody["code"], "message": errBody["message"]}, st
				}
				return "observation", body, st
			},
			state: func(t *testing.T, ls *liveServer) map[string]any {
				st, body := ls.do(t, "GET", "/state?session_id="+sid, nil)
				if st != http.StatusOK {
					t.Fatalf("/state: %d %v", st, body)
				}
				return body
			},
		},
	}
}

// TestOpenEnvToolActions: on /ws and on HTTP /step, OpenEnv's list_tools
// answers the episode's tools in MCP's shape without a turn or a reward;
// call_tool runs E2's real kube-linter tool as a turn of the episode; an
// unknown tool is answered in the observation; actions svbench does not
// understand (another type, a JSON answer sent as the action itself, a
// user message) are validation errors that leave the episode open; the
// episode then plays on to the reward /v1/score gives its transcript.
func TestOpenEnvToolActions(t *testing.T) {
	ls, ds, act := e2Rig(t)
	var ex env.Example
	for _, e := range ds.Examples {
		if kind, _ := e.Meta["fixture_type"].(string); kind == "k8s" {
			ex = e
			break
		}
	}
	if ex.ID == "" {
		t.Fatal("no k8s row")
	}
	for _, tr := range openEnvTransports(t, ls) {
		t.Run(tr.name, func(t *testing.T) {
			first := tr.reset(t, ls, map[string]any{"env": "e2", "example_id": ex.ID})
			var obs OpenEnvObservation
			decode(t, first["observation"], &obs)
			var tools []env.Tool
			for _, raw := range obs.Tools {
				var tool struct{ Function env.Tool }
				decode(t, raw, &tool)
				tools = append(tools, tool.Function)
			}

			typ, ans, _ := tr.step(t, ls, map[string]any{"type": "list_tools"})
			var listed struct {
				Observation struct {
					Tools []OpenEnvTool `json:"tools"`
				} `json:"observation"`
				Reward *float64 `json:"reward"`
				Done   bool     `json:"done"`
			}
			decode(t, ans, &listed)
			if typ != "observation" || listed.Done || listed.Reward != nil || len(listed.Observation.Tools) != len(tools) {
				t.Fatalf("list_tools: %s %v", typ, ans)
			}
			for i, tool := range listed.Observation.Tools {
				var schema map[string]any
				if tool.Name != tools[i].Name || tool.Description == "" || json.Unmarshal(tool.InputSchema, &schema) != nil || schema["type"] != "object" {
					t.Errorf("list_tools tool %d: %+v, reset offered %s", i, tool, tools[i].Name)
				}
			}
			if !slices.ContainsFunc(listed.Observation.Tools, func(tool OpenEnvTool) bool { return tool.Name == configaudit.FnKubeLinter }) {
				t.Errorf("list_tools lacks %s: %+v", configaudit.FnKubeLinter, listed.Observation.Tools)
			}

			// Nothing below may spend a turn, end or score the episode.
			for _, c := range []struct {
				name   string
				action any
			}{
				{"unknown type", map[string]any{"type": "dance"}},
				{"type not a string", map[string]any{"type": 3}},
				{"JSON answer as the action", map[string]any{"verdict": "vulnerable", "findings": []any{"privileged"}}},
				{"empty object", map[string]any{}},
				{"metadata only", map[string]any{"metadata": map[string]any{"k": "v"}}},
				{"user message", map[string]any{"role": "user", "content": "hi"}},
				{"message with a stray field", map[string]any{"content": "done", "answer": "x"}},
				{"not an object", "just text"},
				{"list_tools with arguments", map[string]any{"type": "list_tools", "tool_name": "x"}},
				{"call_tool without tool_name", map[string]any{"type": "call_tool", "arguments": map[string]any{}}},
				{"call_tool with text arguments", map[string]any{"type": "call_tool", "tool_name": configaudit.FnKubeLinter, "arguments": "{}"}},
				{"call_tool with a stray field", map[string]any{"type": "call_tool", "tool_name": configaudit.FnKubeLinter, "args": map[string]any{}}},
			} {
				typ, ans, status := tr.step(t, ls, c.action)
				if typ != "error" || ans["code"] != openEnvValidationError || ans["message"] == "" || (tr.name == "http" && status != http.StatusUnprocessableEntity) {
					t.Errorf("%s: answered %s %d %v, want a validation error", c.name, typ, status, ans)
				}
			}
			typ, ans, _ = tr.step(t, ls, map[string]any{"type": "call_tool", "tool_name": "rm_rf", "arguments": map[string]any{}})
			var missing struct {
				Observation OpenEnvCallObservation `json:"observation"`
				Done        bool                   `json:"done"`
			}
			decode(t, ans, &missing)
			if typ != "observation" || missing.Done || missing.Observation.Error == nil || missing.Observation.Error.ErrorType != "tool_not_found" || missing.Observation.Turn != 0 {
				t.Errorf("call_tool of an unknown tool: %s %v", typ, ans)
			}
			if st := tr.state(t, ls); st["step_count"] != float64(0) || st["done"] != false {
				t.Fatalf("state after actions that are no turn: %v", st)
			}

			// The policy's first turn calls kube-linter; play it as call_tool.
			conv := slices.Clone(obs.Messages)
			first1 := act(conv, tools)
			if len(first1.ToolCalls) == 0 {
				t.Fatalf("the policy's first turn calls no tool: %+v", first1)
			}
			call := first1.ToolCalls[0]
			var args map[string]any
			if err := json.Unmarshal([]byte(call.Arguments), &args); err != nil {
				t.Fatalf("tool call arguments %q: %v", call.Arguments, err)
			}
			typ, ans, _ = tr.step(t, ls, map[string]any{"type": "call_tool", "tool_name": call.Name, "arguments": args})
			var called struct {
				Observation OpenEnvCallObservation `json:"observation"`
				Reward      *float64               `json:"reward"`
				Done        bool                   `json:"done"`
			}
			decode(t, ans, &called)
			co := called.Observation
			result, _ := co.Result.(string)
			if typ != "observation" || called.Done || called.Reward != nil || co.ToolName != call.Name || co.Error != nil || result == "" || co.Turn != 1 ||
				len(co.Messages) == 0 || co.Messages[0].Role != env.RoleTool || co.Messages[0].Content != result {
				t.Fatalf("call_tool %s: %s %v", call.Name, typ, ans)
			}
			sent := env.Message{Role: env.RoleAssistant, ToolCalls: []env.ToolCall{{ID: co.Messages[0].ToolCallID, Name: call.Name, Arguments: call.Arguments}}}
			conv = append(append(conv, sent), co.Messages...)
			transcript := append([]env.Message{sent}, co.Messages...)

			// The episode is still open and plays on with messages.
			for turn := 2; ; turn++ {
				msg := act(conv, tools)
				typ, ans, _ := tr.step(t, ls, wire(msg))
				if typ != "observation" {
					t.Fatalf("turn %d: %s %v", turn, typ, ans)
				}
				var o OpenEnvObservation
				decode(t, ans["observation"], &o)
				msg.Role = env.RoleAssistant
				conv = append(append(conv, msg), o.Messages...)
				transcript = append(append(transcript, msg), o.Messages...)
				if ans["done"] == true {
					var got map[string]any
					decode(t, o.Score, &got)
					sameScore(t, "openenv "+tr.name+" after tool actions", got, scoreTranscript(t, ls, "e2", ex.ID, transcript))
					if ans["reward"] != got["reward"] {
						t.Errorf("reward %v, score %v", ans["reward"], got["reward"])
					}
					break
				}
				if turn > obs.MaxTurns {
					t.Fatalf("not done after %d turns", turn)
				}
			}
		})
	}
}

// TestOpenEnvDefaultEnv: a reset with only a seed (OpenEnv's clients and
// harness session factories send no "env") opens the first served
// environment on a server that serves several, --openenv-default-env
// pins another, and with none pinned the error says how to pin one.
// list_tools before any reset answers the default environment's tools.
func TestOpenEnvDefaultEnv(t *testing.T) {
	cases := []struct {
		name, def string
		want      int // index into the served order; -1: none
	}{
		{"first served", "", 0},
		{"pinned", "e1", 1},
		{"none", "none", -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ls := startServer(t, Config{Envs: []string{"e2", "e1"}, OpenEnvDefaultEnv: tc.def, Logger: quietLog})
			c := struct{ want, other string }{}
			if tc.want >= 0 {
				c.want, c.other = ls.order[tc.want], ls.order[1-tc.want]
			}
			st, body := ls.do(t, "POST", "/reset", map[string]any{"seed": 5})
			ws, _, err := dialOpenEnv(t, ls, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = ws.c.CloseNow() }()
			typ, wsAns := ws.send(map[string]any{"type": "reset", "data": map[string]any{"seed": 5, "episode_id": "ep-1"}})
			if c.want == "" {
				e, _ := body["error"].(map[string]any)
				msg, _ := e["message"].(string)
				if st != http.StatusUnprocessableEntity || !strings.Contains(msg, "--openenv-default-env") || !strings.Contains(msg, `"env"`) {
					t.Errorf("/reset without a default: %d %v", st, body)
				}
				if typ != "error" || wsAns["code"] != openEnvValidationError || !strings.Contains(wsAns["message"].(string), "--openenv-default-env") {
					t.Errorf("ws reset without a default: %s %v", typ, wsAns)
				}
				if st, body := ls.do(t, "POST", "/reset", map[string]any{"seed": 5, "env": "e1"}); st != http.StatusOK || body["observation"].(map[string]any)["env"] != ls.order[1] {
					t.Errorf("/reset naming env: %d %v", st, body)
				}
				return
			}
			obs, _ := body["observation"].(map[string]any)
			if st != http.StatusOK || obs["env"] != c.want {
				t.Fatalf("/reset {seed}: %d %v, want env %s", st, body, c.want)
			}
			wsObs, _ := wsAns["observation"].(map[string]any)
			if typ != "observation" || wsObs["env"] != c.want || wsObs["example_id"] != obs["example_id"] {
				t.Errorf("ws reset {seed}: %s %v, want %s row %v", typ, wsAns, c.want, obs["example_id"])
			}
			// Naming env still wins over the default.
			other := c.other
			if st, body := ls.do(t, "POST", "/reset", map[string]any{"seed": 5, "env": other}); st != http.StatusOK || body["observation"].(map[string]any)["env"] != other {
				t.Errorf("/reset naming %s: %d %v", other, st, body)
			}
			// Tools can be listed before any episode (OpenEnv allows it).
			ws2, _, err := dialOpenEnv(t, ls, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = ws2.c.CloseNow() }()
			typ, ans := ws2.send(map[string]any{"type": "step", "data": map[string]any{"type": "list_tools"}})
			o, _ := ans["observation"].(map[string]any)
			if typ != "observation" || o["env"] != c.want || ans["done"] != false {
				t.Errorf("list_tools before reset: %s %v", typ, ans)
			}
			if st, body := ls.do(t, "POST", "/step", map[string]any{"action": map[string]any{"type": "list_tools"}}); st != http.StatusOK || body["observation"].(map[string]any)["env"] != c.want {
				t.Errorf("HTTP list_tools without a session: %d %v", st, body)
			}
			if typ, ans := ws2.send(map[string]any{"type": "step", "data": map[string]any{"content": "hi"}}); typ != "error" || ans["code"] != openEnvExecutionError {
				t.Errorf("answer before reset: %s %v", typ, ans)
			}
		})
	}
	if _, err := New(Config{Envs: []string{"e2"}, OpenEnvDefaultEnv: "e1"}); err == nil || !strings.Contains(err.Error(), "not served") {
		t.Errorf("default env not served: %v", err)
	}
}

// TestOpenEnvAnswerObject: verifiers' OpenEnv taskset sends a reply that
// is a JSON object as the action itself. One that is the environment's
// answer (E2's output_schema) is taken as the final answer, its JSON as
// the message's content, and scores as /v1/score scores that transcript;
// one that is not stays a validation error.
func TestOpenEnvAnswerObject(t *testing.T) {
	ls, ds, _ := e2Rig(t)
	ex := ds.Examples[0]
	for _, tr := range openEnvTransports(t, ls) {
		t.Run(tr.name, func(t *testing.T) {
			tr.reset(t, ls, map[string]any{"env": "e2", "example_id": ex.ID})
			if typ, ans, _ := tr.step(t, ls, map[string]any{"violations": "none"}); typ != "error" || ans["code"] != openEnvValidationError {
				t.Errorf("object against the answer schema: %s %v", typ, ans)
			}
			answer := map[string]any{"violations": []any{map[string]any{"id": "K8S_PRIVILEGED", "severity": "high"}}, "confidence": 0.6}
			typ, ans, _ := tr.step(t, ls, answer)
			if typ != "observation" || ans["done"] != true {
				t.Fatalf("answer object: %s %v", typ, ans)
			}
			var o OpenEnvObservation
			decode(t, ans["observation"], &o)
			var got map[string]any
			decode(t, o.Score, &got)
			text, _ := json.Marshal(answer)
			want := scoreTranscript(t, ls, "e2", ex.ID, []env.Message{{Role: env.RoleAssistant, Content: string(text)}})
			sameScore(t, "answer object via "+tr.name, got, want)
			if ans["reward"] != want["reward"] || o.Turn != 1 {
				t.Errorf("reward %v turn %d, /v1/score %v", ans["reward"], o.Turn, want["reward"])
			}
		})
	}
}
