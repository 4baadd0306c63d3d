package server

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/codevuln"
	"github.com/svbench/svbench/envs/configaudit"
)

// wire renders an assistant message as an OpenAI-format trainer sends it:
// tool calls as {"id", "type": "function", "function": {"name",
// "arguments": "<JSON text>"}}.
func wire(m env.Message) map[string]any {
	out := map[string]any{"role": "assistant", "content": m.Content}
	if m.Reasoning != "" {
		out["reasoning_content"] = m.Reasoning
	}
	var calls []any
	for _, c := range m.ToolCalls {
		calls = append(calls, map[string]any{"id": c.ID, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}})
	}
	if calls != nil {
		out["tool_calls"] = calls
	}
	return out
}

// decode re-reads a JSON value into v.
func decode(t *testing.T, from, v any) {
	t.Helper()
	b, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatal(err)
	}
}

// playSession drives one session to its end: next writes each assistant
// message from the conversation so far, as a trainer's policy would. It
// returns the transcript (the completion after the prompt) and the score
// the last step answered.
func playSession(t *testing.T, ls *liveServer, envID, exampleID string, next func(conv []env.Message, tools []env.Tool) env.Message) ([]env.Message, map[string]any) {
	t.Helper()
	status, body := ls.do(t, "POST", "/v1/sessions", map[string]any{"env": envID, "example_id": exampleID})
	if status != http.StatusCreated {
		t.Fatalf("create: %d %v", status, body)
	}
	var info SessionInfo
	decode(t, body, &info)
	var tools []env.Tool
	for _, raw := range info.Tools {
		var tool struct{ Function env.Tool }
		decode(t, raw, &tool)
		tools = append(tools, tool.Function)
	}
	conv := append([]env.Message(nil), info.Prompt...)
	var transcript []env.Message
	for turn := 1; turn <= info.MaxTurns; turn++ {
		msg := next(conv, tools)
		status, body := ls.do(t, "POST", "/v1/sessions/"+info.SessionID+"/step", map[string]any{"message": wire(msg)})
		if status != http.StatusOK {
			t.Fatalf("step %d: %d %v", turn, status, body)
		}
		var res struct {
			Observations []env.Message `json:"observations"`
			Done         bool          `json:"done"`
			Score        map[string]any
		}
		decode(t, body, &res)
		msg.Role = env.RoleAssistant
		conv = append(append(conv, msg), res.Observations...)
		transcript = append(append(transcript, msg), res.Observations...)
		if res.Done {
			if res.Score == nil || res.Score["error"] != nil {
				t.Fatalf("done without a score: %v", body)
			}
			// A finished session answers its transcript until deleted;
			// another step is refused.
			if st, b := ls.do(t, "POST", "/v1/sessions/"+info.SessionID+"/step", map[string]any{"message": map[string]any{"content": "again"}}); st != http.StatusConflict {
				t.Errorf("step after done: %d %v", st, b)
			}
			if st, b := ls.do(t, "DELETE", "/v1/sessions/"+info.SessionID, nil); st != http.StatusOK {
				t.Errorf("delete: %d %v", st, b)
			}
			return transcript, res.Score
		}
	}
	t.Fatalf("session not done after %d turns", info.MaxTurns)
	return nil, nil
}

// scoreTranscript is what /v1/score (and so `svbench score`) gives the
// same transcript.
func scoreTranscript(t *testing.T, ls *liveServer, envID, exampleID string, transcript []env.Message) map[string]any {
	t.Helper()
	status, body := ls.do(t, "POST", "/v1/score", map[string]any{"items": []any{map[string]any{"env": envID, "example_id": exampleID, "completion": transcript}}})
	if status != 200 {
		t.Fatalf("/v1/score: %d %v", status, body)
	}
	return body["results"].([]any)[0].(map[string]any)
}

func sameScore(t *testing.T, what string, got, want map[string]any) {
	t.Helper()
	if got["reward"] != want["reward"] || got["solved"] != want["solved"] {
		t.Errorf("%s: session reward %v solved %v, /v1/score of the transcript %v %v", what, got["reward"], got["solved"], want["reward"], want["solved"])
	}
	gc, _ := got["components"].(map[string]any)
	wc, _ := want["components"].(map[string]any)
	if len(gc) == 0 || len(gc) != len(wc) {
		t.Fatalf("%s: components %v vs %v", what, gc, wc)
	}
	for k, v := range wc {
		if math.Abs(gc[k].(float64)-v.(float64)) > 1e-12 {
			t.Errorf("%s: component %s %v vs %v", what, k, gc[k], v)
		}
	}
}

func calledTools(transcript []env.Message) []string {
	var names []string
	for _, m := range transcript {
		for _, c := range m.ToolCalls {
			names = append(names, c.Name)
		}
	}
	return names
}

// e2Rig serves E2 and returns its embedded rows and a player that writes
// each assistant message with the tool-autofix baseline, as a trainer's
// policy would (the sessions, NeMo Gym and OpenEnv tests share it).
func e2Rig(t *testing.T) (*liveServer, *env.Dataset, func([]env.Message, []env.Tool) env.Message) {
	t.Helper()
	ls := startServer(t, Config{Envs: []string{"e2"}, Logger: quietLog})
	e, err := configaudit.NewEnv(env.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := e.Load(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := e.Policy(configaudit.PolicyToolAutofix)
	return ls, ds, func(conv []env.Message, tools []env.Tool) env.Message {
		m, err := pol.Act(context.Background(), conv, tools)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
}

// e3Rig serves E3 (skipping where no sandbox runs code) and returns its
// first task and a player whose first turn runs the visible tests, with
// its thinking inline, and whose next turns are the reference fix.
func e3Rig(t *testing.T) (*liveServer, env.Example, func([]env.Message, []env.Tool) env.Message) {
	t.Helper()
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap not found: E3 runs code only in the bubblewrap sandbox (scripts/deps.sh test installs it)")
	}
	ls := startServer(t, Config{Envs: []string{"e3"}, Logger: quietLog, EnvParams: map[string]map[string]string{"e3": {codevuln.ParamTestTimeout: "20"}}})
	e, err := codevuln.New(t.Context(), env.Options{Params: map[string]string{codevuln.ParamTestTimeout: "20"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	if err := e.Ready(); err != nil {
		t.Skipf("E3 cannot execute code here: %v", err)
	}
	ds, err := e.Load(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	pol, _ := e.Policy(codevuln.PolicyReferenceFix)
	first := true
	return ls, ds.Examples[0], func(conv []env.Message, tools []env.Tool) env.Message {
		if first {
			first = false
			return env.Message{Role: env.RoleAssistant, Content: "<think>run the tests first</think>", ToolCalls: []env.ToolCall{{ID: "c1", Name: codevuln.FnRunTests, Arguments: "{}"}}}
		}
		m, err := pol.Act(context.Background(), conv, tools)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
}

// TestSessionsE2ToolEpisodes: a trainer plays E2 episodes turn by turn
// with kube-linter and trivy calls executed by svbench; the reward the
// last step answers is what `svbench score` gives the same transcript.
func TestSessionsE2ToolEpisodes(t *testing.T) {
	ls, ds, act := e2Rig(t)
	seen := map[string]bool{}
	for _, ex := range ds.Examples {
		kind, _ := ex.Meta["fixture_type"].(string)
		if seen[kind] {
			continue
		}
		seen[kind] = true
		transcript, got := playSession(t, ls, "e2", ex.ID, act)
		tools := calledTools(transcript)
		want := map[string]string{"k8s": configaudit.FnKubeLinter, "tf": configaudit.FnTrivy}[kind]
		if want != "" && !slices.Contains(tools, want) {
			t.Errorf("%s row %s: tools called %v, want %s", kind, ex.ID, tools, want)
		}
		if !slices.ContainsFunc(transcript, func(m env.Message) bool { return m.Role == env.RoleTool && m.Content != "" }) {
			t.Errorf("%s row %s: no tool result came back", kind, ex.ID)
		}
		sameScore(t, "e2 "+kind, got, scoreTranscript(t, ls, "e2", ex.ID, transcript))
	}
	if !seen["k8s"] || !seen["tf"] {
		t.Fatalf("fixture kinds seen: %v", seen)
	}
}

// TestSessionsE3RunTests: an E3 episode whose first turn runs the visible
// tests in the sandbox and whose next turns are the reference fix; the
// session's reward equals /v1/score's of the transcript.
func TestSessionsE3RunTests(t *testing.T) {
	ls, ex, act := e3Rig(t)
	transcript, got := playSession(t, ls, "e3", ex.ID, act)
	if tools := calledTools(transcript); len(tools) == 0 || tools[0] != codevuln.FnRunTests {
		t.Fatalf("tools called %v, want run_tests first", tools)
	}
	if !strings.Contains(transcript[1].Content, "pass") && !strings.Contains(transcript[1].Content, "fail") {
		t.Errorf("run_tests result does not read like a test run: %.300s", transcript[1].Content)
	}
	want := scoreTranscript(t, ls, "e3", ex.ID, transcript)
	sameScore(t, "e3", got, want)
	if got["solved"] != true {
		t.Errorf("the reference fix played through a session is not solved: %v", got)
	}
}

// TestSessionsBounds: a dead session is answered clearly, the turn budget
// ends an episode with a score, the session count is bounded, and the
// thinking rule holds on a session's answer.
func TestSessionsBounds(t *testing.T) {
	ls := startServer(t, Config{Envs: []string{"e1"}, Logger: quietLog, MaxSessions: 2})
	status, body := ls.do(t, "POST", "/v1/sessions/ses_nope/step", map[string]any{"message": map[string]any{"content": "x"}})
	if status != http.StatusNotFound || !strings.Contains(body["error"].(map[string]any)["message"].(string), "create a new one") {
		t.Fatalf("dead session: %d %v", status, body)
	}
	status, body = ls.do(t, "GET", "/v1/environments/e1/examples?limit=1", nil)
	if status != 200 {
		t.Fatalf("%d %v", status, body)
	}
	exID := body["examples"].([]any)[0].(map[string]any)["example_id"].(string)
	var ids []string
	for range 2 {
		status, body = ls.do(t, "POST", "/v1/sessions", map[string]any{"env": "e1", "example_id": exID})
		if status != http.StatusCreated {
			t.Fatalf("create: %d %v", status, body)
		}
		ids = append(ids, body["session_id"].(string))
	}
	if status, body = ls.do(t, "POST", "/v1/sessions", map[string]any{"env": "e1", "example_id": exID}); status != http.StatusTooManyRequests {
		t.Fatalf("third session over --max-sessions 2: %d %v", status, body)
	}
	// E1 is single-turn: the one step ends it and answers the score of the
	// committed answer (the hedge inside the thinking earns nothing).
	status, body = ls.do(t, "POST", "/v1/sessions/"+ids[0]+"/step", map[string]any{"message": map[string]any{
		"content": `<think>{"label": "Benign", "confidence": 1}</think>I cannot decide.`}})
	if status != 200 || body["done"] != true {
		t.Fatalf("step: %d %v", status, body)
	}
	plain := scoreTranscript(t, ls, "e1", exID, []env.Message{{Role: env.RoleAssistant, Content: "I cannot decide."}})
	sameScore(t, "e1 thinking", body["score"].(map[string]any), plain)
	if status, body = ls.do(t, "GET", "/v1/sessions/"+ids[0], nil); status != 200 || body["done"] != true || len(body["transcript"].([]any)) != 1 {
		t.Fatalf("get: %d %v", status, body)
	}
	for _, id := range ids {
		if status, body = ls.do(t, "DELETE", "/v1/sessions/"+id, nil); status != 200 {
			t.Fatalf("delete: %d %v", status, body)
		}
	}
	if status, _ = ls.do(t, "GET", "/v1/sessions/"+ids[1], nil); status != http.StatusNotFound {
		t.Fatalf("a deleted session answers %d", status)
	}
	if status, body = ls.do(t, "POST", "/v1/sessions", map[string]any{"env": "e1", "example_id": exID}); status != http.StatusCreated {
		t.Fatalf("closing sessions did not free their places: %d %v", status, body)
	}
}

type countingEpisode struct {
	env.Episode
	closed *int
}

func (c countingEpisode) Close() error { *c.closed++; return nil }

// TestSessionsExpire: the janitor closes a session idle past its timeout
// and one past its age however busy, releasing its episode, and closes
// every session at shutdown.
func TestSessionsExpire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ss := newSessions(8, 0, time.Minute, 10*time.Minute)
		closed := map[string]*int{}
		add := func(id string) *session {
			n := 0
			closed[id] = &n
			now := time.Now()
			s := &session{id: id, ep: countingEpisode{closed: &n}, created: now, lastUsed: now}
			if ss.add(s, now) != slotOK {
				t.Fatal("add refused")
			}
			return s
		}
		idle, busy, last := add("idle"), add("busy"), add("last")
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { ss.janitor(ctx); close(done) }()
		for range 9 { // 9 × 50 s: busy stays in use, idle does not
			time.Sleep(50 * time.Second)
			busy.mu.Lock()
			busy.lastUsed = time.Now()
			busy.mu.Unlock()
			last.mu.Lock()
			last.lastUsed = time.Now()
			last.mu.Unlock()
		}
		synctest.Wait()
		if ss.get("idle", "", scopeHTTP) != nil || *closed["idle"] != 1 || ss.get("busy", "", scopeHTTP) == nil {
			t.Fatalf("after 7.5 min: idle closed %d, busy present %v", *closed["idle"], ss.get("busy", "", scopeHTTP) != nil)
		}
		for range 4 { // past the 10 min age: busy goes however used
			time.Sleep(50 * time.Second)
			last.mu.Lock()
			last.lastUsed = time.Now()
			last.mu.Unlock()
		}
		synctest.Wait()
		if ss.get("busy", "", scopeHTTP) != nil || *closed["busy"] != 1 {
			t.Fatalf("past the age limit the session is still open (closed %d)", *closed["busy"])
		}
		_, _ = idle, last
		add("fresh")
		cancel()
		<-done
		if ss.count() != 0 || *closed["fresh"] != 1 {
			t.Fatalf("shutdown left %d sessions (fresh closed %d)", ss.count(), *closed["fresh"])
		}
	})
}
