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
