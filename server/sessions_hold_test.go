package server

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/codevuln"
)

// TestSessionsE3StepsAllEnvsTwoWorkers: with every environment served on
// two scoring workers (E3, heavy, then gets one), E3 session steps run
// their tools instead of waiting forever for a second worker inside the
// first, more steps than workers run at once, and /v1/score's E3 items
// are scored meanwhile. Each request has a deadline far past what a step
// takes, so a deadlock fails the test instead of hanging it.
func TestSessionsE3StepsAllEnvsTwoWorkers(t *testing.T) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bwrap not found: E3 runs code only in the bubblewrap sandbox (scripts/deps.sh test installs it)")
	}
	ls := startServer(t, Config{Logger: quietLog, Workers: 2,
		EnvParams: map[string]map[string]string{"e3": {codevuln.ParamTestTimeout: "20"}}})
	e3, aerr := ls.lookupEnv("e3")
	if aerr != nil {
		t.Fatal(aerr)
	}
	if lim := e3.lane.limit; lim != 1 {
		t.Fatalf("E3's lane has %d workers; the deadlock needs the one-worker lane of --workers 2 with light environments served", lim)
	}
	status, body := ls.do(t, "GET", "/v1/environments/e3/examples?limit=3&split=test", nil)
	if status != 200 {
		t.Fatalf("examples: %d %v", status, body)
	}
	exs := body["examples"].([]any)
	const steps = 5 // more than the two workers and E3's one
	ids := make([]string, steps)
	files := make([]string, steps)
	for i := range steps {
		ex := exs[i%len(exs)].(map[string]any)
		status, body := ls.do(t, "POST", "/v1/sessions", map[string]any{"env": "e3", "example_id": ex["example_id"]})
		if status != http.StatusCreated {
			t.Fatalf("create %d: %d %v", i, status, body)
		}
		ids[i] = body["session_id"].(string)
		files[i] = fileNamed(t, body)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, steps+1)
	for i := range steps {
		wg.Go(func() {
			args, _ := json.Marshal(map[string]string{"path": files[i]})
			code, ans, err := postCtx(ctx, ls, "/v1/sessions/"+ids[i]+"/step", map[string]any{"message": map[string]any{
				"content": "", "tool_calls": []any{map[string]any{"id": "c1", "type": "function",
					"function": map[string]any{"name": codevuln.FnReadFile, "arguments": string(args)}}}}})
			switch {
			case err != nil:
				errs <- fmt.Errorf("step %d: %w (a step waiting for a second worker inside its first never answers)", i, err)
			case code != 200:
				errs <- fmt.Errorf("step %d: %d %v", i, code, ans)
			default:
				obs, _ := ans["observations"].([]any)
				if len(obs) == 0 || obs[0].(map[string]any)["content"] == "" {
					errs <- fmt.Errorf("step %d: read_file answered nothing: %v", i, ans)
				}
			}
		})
	}
	wg.Go(func() {
		ex := exs[0].(map[string]any)
		code, ans, err := postCtx(ctx, ls, "/v1/score", map[string]any{"items": []any{
			map[string]any{"env": "e3", "example_id": ex["example_id"], "completion": "no fix"}}})
		if err != nil || code != 200 {
			errs <- fmt.Errorf("/v1/score beside the steps: %d %v %v", code, ans, err)
			return
		}
		if e := ans["results"].([]any)[0].(map[string]any)["error"]; e != nil {
			errs <- fmt.Errorf("/v1/score's E3 item beside the steps came back unscored: %v", e)
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// fileNamed is a file an E3 session's prompt offers to read_file.
func fileNamed(t *testing.T, info map[string]any) string {
	t.Helper()
	for _, m := range info["prompt"].([]any) {
		c, _ := m.(map[string]any)["content"].(string)
		for _, w := range strings.Fields(c) {
			w = strings.Trim(w, "`'\",.:()")
			if strings.HasSuffix(w, ".py") || strings.HasSuffix(w, ".go") {
				return w
			}
		}
	}
	t.Fatalf("no source file named in the prompt: %v", info["prompt"])
	return ""
}

func postCtx(ctx context.Context, ls *liveServer, path string, body any) (int, map[string]any, error) {
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(ctx, "POST", ls.URL+path, strings.NewReader(string(b)))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := ls.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out, nil
}

// TestSessionsFinishedFreeSlots: a session whose episode ended holds no
// slot (a trainer that never sends DELETE does not lock others out), and
// GET still reads its transcript and score.
func TestSessionsFinishedFreeSlots(t *testing.T) {
	ls := startServer(t, Config{Envs: []string{"e1"}, Logger: quietLog, MaxSessions: 2})
	_, body := ls.do(t, "GET", "/v1/environments/e1/examples?limit=1", nil)
	exID := body["examples"].([]any)[0].(map[string]any)["example_id"].(string)
	var done []string
	for round := range 5 {
		status, body := ls.do(t, "POST", "/v1/sessions", map[string]any{"env": "e1", "example_id": exID})
		if status != http.StatusCreated {
			t.Fatalf("round %d: a finished session kept its slot: %d %v", round, status, body)
		}
		id := body["session_id"].(string)
		status, body = ls.do(t, "POST", "/v1/sessions/"+id+"/step", map[string]any{"message": map[string]any{"content": `{"label": "Benign", "confidence": 0.6}`}})
		if status != 200 || body["done"] != true {
			t.Fatalf("step: %d %v", status, body)
		}
		done = append(done, id)
	}
	if n := ls.sessions.count(); n != 0 {
		t.Fatalf("%d live sessions after every episode ended", n)
	}
	for _, id := range done {
		status, body := ls.do(t, "GET", "/v1/sessions/"+id, nil)
		if status != 200 || body["done"] != true || len(body["transcript"].([]any)) != 1 {
			t.Fatalf("GET of a finished session: %d %v", status, body)
		}
	}
	if status, body := ls.do(t, "POST", "/v1/sessions/"+done[0]+"/step", map[string]any{"message": map[string]any{"content": "again"}}); status != http.StatusConflict || errCode(t, body) != CodeSessionDone {
		t.Fatalf("step on a finished session: %d %v", status, body)
	}
	if status, _ := ls.do(t, "DELETE", "/v1/sessions/"+done[0], nil); status != 200 {
		t.Fatalf("DELETE of a finished session: %d", status)
	}
	if status, _ := ls.do(t, "GET", "/v1/sessions/"+done[0], nil); status != http.StatusNotFound {
		t.Fatalf("GET after DELETE: %d", status)
	}
}

// TestSessionsByteBudget: sessions are bounded by what they hold, not
// only by count: inline examples past --max-session-bytes get 429 naming
// the flag, and the budget comes back when they end.
func TestSessionsByteBudget(t *testing.T) {
	ls := startServer(t, Config{Envs: []string{"e1"}, Logger: quietLog, MaxSessionBytes: 256 << 10})
	_, body := ls.do(t, "GET", "/v1/environments/e1/examples?limit=1", nil)
	exID := body["examples"].([]any)[0].(map[string]any)["example_id"].(string)
	e1, aerr := ls.lookupEnv("e1")
	if aerr != nil {
		t.Fatal(aerr)
	}
	ex := e1.ds.Examples[0]
	for _, e := range e1.ds.Examples {
		if e.ID == exID {
			ex = e
		}
	}
	meta := map[string]any{"padding": strings.Repeat("x", 40<<10)}
	for k, v := range ex.Meta {
		meta[k] = v
	}
	row := map[string]any{"id": ex.ID, "answer": ex.Answer, "prompt": ex.Prompt, "meta": meta}
	var ids []string
	for {
		status, body := ls.do(t, "POST", "/v1/sessions", map[string]any{"env": "e1", "example": row})
		if status == http.StatusTooManyRequests {
			if msg := body["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "--max-session-bytes") {
				t.Fatalf("refusal does not name the budget: %s", msg)
			}
			break
		}
		if status != http.StatusCreated {
			t.Fatalf("create: %d %v", status, body)
		}
		ids = append(ids, body["session_id"].(string))
		if len(ids) > 10 {
			t.Fatalf("%d sessions of ~120 KiB each fit a 256 KiB budget", len(ids))
		}
	}
	if len(ids) == 0 {
		t.Fatal("not even one session fit")
	}
	if status, _ := ls.do(t, "DELETE", "/v1/sessions/"+ids[0], nil); status != 200 {
		t.Fatal("delete")
	}
	if status, body := ls.do(t, "POST", "/v1/sessions", map[string]any{"env": "e1", "example": row}); status != http.StatusCreated {
		t.Fatalf("the budget did not come back: %d %v", status, body)
	}
}

// TestSessionsFairShare: one client that takes every slot cannot keep
// another out: once the other was refused, the first gets no new slot
// above an equal share, and the slots it frees go to the one waiting.
func TestSessionsFairShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ss := newSessions(4, 0, time.Minute, time.Hour)
		n := 0
		open := func(owner string) (*session, slotRefusal) {
			n++
			s := &session{id: fmt.Sprint("s", n), owner: owner, ep: pendingEpisode{}, created: time.Now(), lastUsed: time.Now()}
			return s, ss.add(s, time.Now())
		}
		var hogs []*session
		for range 4 {
			s, why := open("hog")
			if why != slotOK {
				t.Fatalf("a lone client was refused a free slot: %v", why)
			}
			hogs = append(hogs, s)
		}
		if _, why := open("late"); why != slotCount {
			t.Fatalf("full pool answered %v", why)
		}
		ss.remove(hogs[0])
		if _, why := open("hog"); why != slotFairShare {
			t.Fatalf("the hog took back the slot it freed while another client waits (%v)", why)
		}
		if _, why := open("late"); why != slotOK {
			t.Fatalf("the waiting client did not get the freed slot (%v)", why)
		}
		ss.remove(hogs[1])
		if _, why := open("late"); why != slotOK {
			t.Fatalf("the second client is below its share: %v", why)
		}
		ss.remove(hogs[2])
		if _, why := open("late"); why != slotFairShare {
			t.Fatalf("the second client passed an equal share while the hog waits: %v", why)
		}
		// Contention is remembered for fairWindow only: afterwards a lone
		// client may fill the pool again.
		time.Sleep(fairWindow + time.Second)
		if _, why := open("late"); why != slotOK {
			t.Fatalf("after the window, a free slot was refused: %v", why)
		}
	})
}

// TestSessionsBoundToOwnerAndRoute: a session is reached only by the
// client that opened it and only through its own protocol: a NeMo Gym
// cookie is no key to a /v1/sessions episode (nor the reverse), and
// another client cannot step or read somebody's session by its id.
func TestSessionsBoundToOwnerAndRoute(t *testing.T) {
	ss := newSessions(8, 0, time.Minute, time.Hour)
	s := &session{id: "ses_x", owner: "tok@10.0.0.1", scope: scopeHTTP, ep: pendingEpisode{}}
	if ss.add(s, time.Now()) != slotOK {
		t.Fatal("add")
	}
	for _, tc := range []struct {
		owner string
		scope sessionScope
		want  bool
	}{
		{"tok@10.0.0.1", scopeHTTP, true},
		{"tok@10.0.0.2", scopeHTTP, false},
		{"other@10.0.0.1", scopeHTTP, false},
		{"tok@10.0.0.1", scopeNemoGym, false},
		{"tok@10.0.0.1", scopeWS, false},
	} {
		if got := ss.get("ses_x", tc.owner, tc.scope) != nil; got != tc.want {
			t.Errorf("owner %s scope %d: found %v, want %v", tc.owner, tc.scope, got, tc.want)
		}
	}

	ls := startServer(t, Config{Envs: []string{"e1"}, Logger: quietLog})
	_, body := ls.do(t, "GET", "/v1/environments/e1/examples?limit=1", nil)
	exID := body["examples"].([]any)[0].(map[string]any)["example_id"].(string)
	_, body = ls.do(t, "POST", "/v1/sessions", map[string]any{"env": "e1", "example_id": exID})
	v1 := body["session_id"].(string)
	// The /v1 id as a NeMo Gym cookie: /verify must not close it.
	row := map[string]any{"responses_create_params": map[string]any{"input": []any{}},
		"verifier_metadata": map[string]any{"env": "e1", "example_id": exID},
		"response":          map[string]any{"output": []any{}}}
	if status, raw, _ := ngPost(t, ls, "POST", "/verify", row, &http.Cookie{Name: nemoGymCookie, Value: v1}); status != 200 {
		t.Fatalf("verify: %d %s", status, raw)
	}
	if status, body := ls.do(t, "GET", "/v1/sessions/"+v1, nil); status != 200 {
		t.Fatalf("a NeMo Gym cookie naming a /v1 session closed it: %d %v", status, body)
	}
	// A NeMo Gym session's id is no /v1 session.
	status, raw, cookie := ngPost(t, ls, "POST", "/seed_session", row, nil)
	if status != 200 || cookie == nil {
		t.Fatalf("seed: %d %s", status, raw)
	}
	if status, body := ls.do(t, "POST", "/v1/sessions/"+cookie.Value+"/step", map[string]any{"message": map[string]any{"content": "x"}}); status != http.StatusNotFound {
		t.Fatalf("a NeMo Gym session stepped through /v1/sessions: %d %v", status, body)
	}
}

// TestOpenEnvIdleSocketClosed: a WebSocket with nothing to say for the
// idle timeout is closed, and sockets are bounded like sessions.
func TestOpenEnvIdleSocketClosed(t *testing.T) {
	ls := startServer(t, Config{Envs: []string{"e1"}, Logger: quietLog, SessionIdle: 300 * time.Millisecond, MaxSessions: 1})
	o, _, err := dialOpenEnv(t, ls, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := dialOpenEnv(t, ls, nil); err == nil {
		t.Fatal("a second socket past --max-sessions 1 was accepted")
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, _, err := o.c.Read(ctx); err == nil || ctx.Err() != nil {
		t.Fatalf("the idle socket was not closed by the server: %v", err)
	}
	// Its place came back.
	deadline := time.Now().Add(time.Minute)
	for {
		o2, _, err := dialOpenEnv(t, ls, nil)
		if err == nil {
			o2.c.CloseNow()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the closed socket's place did not come back: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestNemoGymAggregateHostile: values near the float64 limit answer
// finite statistics (or null), never a 500; a body of distinct metric
// names past the bound is refused before the work.
func TestNemoGymAggregateHostile(t *testing.T) {
	ls := startServer(t, Config{Envs: []string{"e1"}, Logger: quietLog})
	status, raw, _ := ngPost(t, ls, "POST", "/aggregate_metrics", map[string]any{"verify_responses": []any{
		map[string]any{"reward": 1e308}, map[string]any{"reward": 1e308}, map[string]any{"reward": -1e308}}}, nil)
	if status != 200 {
		t.Fatalf("two 1e308 rewards: %d %s", status, raw)
	}
	agg := ngJSON(t, raw)["agent_metrics"].(map[string]any)
	if m := agg["mean/reward"].(float64); math.Abs(m-1e308/3) > 1e293 {
		t.Errorf("mean %v, want 1e308/3", m)
	}
	if agg["max/reward"].(float64) != 1e308 {
		t.Errorf("max %v", agg["max/reward"])
	}
	wide := map[string]any{}
	for i := range nemoGymMaxMetrics + 1 {
		wide[fmt.Sprint("m", i)] = 1.0
	}
	status, raw, _ = ngPost(t, ls, "POST", "/aggregate_metrics", map[string]any{"verify_responses": []any{wide}}, nil)
	if status != http.StatusBadRequest || !strings.Contains(string(raw), "distinct numeric fields") {
		t.Fatalf("%d metric names: %d %s", nemoGymMaxMetrics+1, status, raw)
	}
}

// TestNemoGymForgedToolOutput: /verify credits a function_call_output only
// when svbench's own tool produced that text; a forged one that lists the
// oracle's findings earns no tool_observation, with or without a session.
func TestNemoGymForgedToolOutput(t *testing.T) {
	ls, ds, act := e2Rig(t)
	var ex env.Example
	for _, x := range ds.Examples {
		if x.Meta["fixture_type"] == "k8s" {
			ex = x
			break
		}
	}
	honest := playNemoGym(t, ls, act, ex, 0)
	if honest.verify["tool_observation"].(float64) <= 0 {
		t.Fatalf("the honest tool episode earned no tool_observation: %v", honest.verify)
	}
	// The same response replayed without any session, but every tool
	// output rewritten: nothing svbench produced, nothing credited.
	req := map[string]any{}
	for k, v := range honest.verify {
		req[k] = v
	}
	resp := honest.verify["response"].(map[string]any)
	var forged []any
	for _, it := range resp["output"].([]any) {
		item := it.(map[string]any)
		if item["type"] == "function_call_output" {
			item = map[string]any{"type": "function_call_output", "call_id": item["call_id"], "output": item["output"].(string) + " "}
		}
		forged = append(forged, item)
	}
	req["response"] = map[string]any{"output": forged}
	status, raw, _ := ngPost(t, ls, "POST", "/verify", req, nil)
	if status != 200 {
		t.Fatalf("verify: %d %s", status, raw)
	}
	// Read the components the answer scored: the request's own echoed
	// fields (copied from the first answer) win over top-level copies.
	got := ngJSON(t, raw)
	if obs := got["reward_components"].(map[string]any)["tool_observation"]; obs != 0.0 || got["svbench_unverified_tool_outputs"] == nil {
		t.Fatalf("forged tool outputs earned tool_observation %v (unverified %v)", obs, got["svbench_unverified_tool_outputs"])
	}
	// Replayed unchanged (NeMo Gym's stateless re-verify): the outputs are
	// svbench's own and keep their credit.
	req["response"] = resp
	status, raw, _ = ngPost(t, ls, "POST", "/verify", req, nil)
	if status != 200 || ngJSON(t, raw)["reward"] != honest.verify["reward"] {
		t.Fatalf("re-verify of the honest response: %d %s (first verify %v)", status, raw, honest.verify["reward"])
	}
}

// TestSessionsIdleTimeoutField: a client may shorten its session's idle
// timeout (the trainer adapters ask for 300 s) but not lengthen it past
// --session-idle; a bad value is a 400 naming the field.
func TestSessionsIdleTimeoutField(t *testing.T) {
	ls := startServer(t, Config{Envs: []string{"e1"}, Logger: quietLog, SessionIdle: 10 * time.Minute})
	_, body := ls.do(t, "GET", "/v1/environments/e1/examples?limit=1", nil)
	exID := body["examples"].([]any)[0].(map[string]any)["example_id"].(string)
	for _, tc := range []struct {
		give   any
		status int
		want   float64
	}{
		{nil, http.StatusCreated, 600},
		{5, http.StatusCreated, 5},
		{1e9, http.StatusCreated, 600},
		{-1, http.StatusBadRequest, 0},
		{"300", http.StatusBadRequest, 0},
	} {
		req := map[string]any{"env": "e1", "example_id": exID}
		if tc.give != nil {
			req["idle_timeout_s"] = tc.give
		}
		status, body := ls.do(t, "POST", "/v1/sessions", req)
		if status != tc.status {
			t.Fatalf("idle_timeout_s %v: %d %v", tc.give, status, body)
		}
		if status != http.StatusCreated {
			if msg := body["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "idle_timeout_s") {
				t.Errorf("idle_timeout_s %v: the error does not name the field: %s", tc.give, msg)
			}
			continue
		}
		if body["idle_timeout_s"] != tc.want {
			t.Errorf("idle_timeout_s %v: applied %v, want %v", tc.give, body["idle_timeout_s"], tc.want)
		}
	}
	synctest.Test(t, func(t *testing.T) {
		ss := newSessions(8, 0, 10*time.Minute, time.Hour)
		now := time.Now()
		short := &session{id: "short", idle: 5 * time.Second, ep: pendingEpisode{}, created: now, lastUsed: now}
		long := &session{id: "long", ep: pendingEpisode{}, created: now, lastUsed: now}
		ss.add(short, now)
		ss.add(long, now)
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		go ss.janitor(ctx)
		time.Sleep(time.Minute)
		synctest.Wait()
		if ss.get("short", "", scopeHTTP) != nil || ss.get("long", "", scopeHTTP) == nil {
			t.Fatalf("after a minute idle: short present %v, long present %v", ss.get("short", "", scopeHTTP) != nil, ss.get("long", "", scopeHTTP) != nil)
		}
		cancel()
		synctest.Wait()
	})
}
