package cache

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
)

// counting answers every call with a new completion, so a replayed answer
// is told apart from a fresh one.
type counting struct{ n atomic.Int64 }

func (c *counting) Chat(_ context.Context, req llm.Request) (llm.Response, error) {
	n := c.n.Add(1)
	return llm.Response{
		Message: env.Message{Role: env.RoleAssistant, Content: req.Model + " answer " + string(rune('A'+n%26)), Reasoning: "thought"},
		Usage:   env.Usage{PromptTokens: 3, CompletionTokens: 4, TotalTokens: 7, ReasoningTokens: 1}, FinishReason: "stop", Model: req.Model,
	}, nil
}

type warnings struct {
	mu   sync.Mutex
	errs []error
}

func (w *warnings) warn(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.errs = append(w.errs, err)
}

func (w *warnings) list() []error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]error(nil), w.errs...)
}

func open(t *testing.T, opts Options) *Cache {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	c, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func req(model, prompt string) llm.Request {
	t := 0.7
	return llm.Request{Model: model, Messages: []env.Message{{Role: env.RoleUser, Content: prompt}}, Sampling: llm.Sampling{Temperature: &t, MaxTokens: 64}}
}

func TestHitsMissesAndKeys(t *testing.T) {
	c := open(t, Options{})
	up := &counting{}
	cl := c.Wrap(up, "http://a/v1")
	ctx := context.Background()

	first, err := cl.Chat(llm.WithRollout(ctx, 0), req("m", "hi"))
	if err != nil || first.Cached {
		t.Fatalf("first call: %+v %v", first, err)
	}
	again, _ := cl.Chat(llm.WithRollout(ctx, 0), req("m", "hi"))
	if !again.Cached || again.Message.Content != first.Message.Content || again.Message.Reasoning != first.Message.Reasoning || again.Usage != first.Usage || again.FinishReason != "stop" {
		t.Fatalf("replay %+v differs from %+v", again, first)
	}
	if up.n.Load() != 1 {
		t.Fatalf("endpoint called %d times, want 1", up.n.Load())
	}

	other := req("m", "hi")
	seed := int64(3)
	other.Sampling.Seed = &seed
	tools := req("m", "hi")
	tools.Tools = []env.Tool{{Name: "run", Parameters: []byte(`{}`)}}
	// Each of these differs in one part of the key and must reach the endpoint.
	variants := []struct {
		name string
		ctx  context.Context
		cl   llm.Client
		req  llm.Request
	}{
		{"rollout 1", llm.WithRollout(ctx, 1), cl, req("m", "hi")},
		{"rollout 2", llm.WithRollout(ctx, 2), cl, req("m", "hi")},
		{"no rollout", ctx, cl, req("m", "hi")},
		{"model", llm.WithRollout(ctx, 0), cl, req("m2", "hi")},
		{"message", llm.WithRollout(ctx, 0), cl, req("m", "hi!")},
		{"sampling", llm.WithRollout(ctx, 0), cl, other},
		{"tools", llm.WithRollout(ctx, 0), cl, tools},
		{"base url", llm.WithRollout(ctx, 0), c.Wrap(up, "http://b/v1"), req("m", "hi")},
	}
	for i, v := range variants {
		r, err := v.cl.Chat(v.ctx, v.req)
		if err != nil || r.Cached {
			t.Errorf("%s: served from the cache (%v)", v.name, err)
		}
		if got := up.n.Load(); got != int64(i+2) {
			t.Errorf("%s: endpoint calls %d, want %d", v.name, got, i+2)
		}
	}
	n := c.Counts()
	h, m, s := n.Hits, n.Misses, n.Stores
	if h != 1 || m != int64(len(variants)+1) || s != m {
		t.Errorf("counts hits=%d misses=%d stores=%d", h, m, s)
	}
}

func TestExpiryAndPrune(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	c := open(t, Options{MaxAge: time.Hour, Now: clock})
	up := &counting{}
	cl := c.Wrap(up, "u")
	ctx := context.Background()
	cl.Chat(ctx, req("m", "old"))
	now = now.Add(2 * time.Hour)
	if r, _ := cl.Chat(ctx, req("m", "old")); r.Cached {
		t.Fatal("an expired entry was served")
	}
	cl.Chat(ctx, req("m", "new"))
	now = now.Add(30 * time.Minute)
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Entries != 2 || st.Expired != 0 || st.Bytes <= 0 || st.FileBytes <= 0 || len(st.Models) != 1 {
		t.Fatalf("stats %+v", st)
	}
	now = now.Add(time.Hour)
	if n, err := c.Prune(ctx); err != nil || n != 2 {
		t.Fatalf("prune removed %d (%v), want 2 expired", n, err)
	}
}

func TestSizeLimitPrunesOldest(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := open(t, Options{MaxBytes: 4000, Now: func() time.Time { now = now.Add(time.Second); return now }})
	cl := c.Wrap(&counting{}, "u")
	ctx := context.Background()
	for i := range 100 {
		cl.Chat(ctx, req("m", strings.Repeat("x", i)))
	}
	st, err := c.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Bytes > 4000 || st.Entries == 0 {
		t.Fatalf("size %d over the 4000-byte limit (%d entries)", st.Bytes, st.Entries)
	}
	// The newest answers survive, the oldest went.
	if r, _ := cl.Chat(ctx, req("m", strings.Repeat("x", 99))); !r.Cached {
		t.Error("the newest entry was pruned")
	}
	if r, _ := cl.Chat(ctx, req("m", "")); r.Cached {
		t.Error("the oldest entry survived pruning")
	}
	if n, err := c.Clear(ctx); err != nil || n == 0 {
		t.Fatalf("clear: %d %v", n, err)
	}
	if st, _ := c.Stats(ctx); st.Entries != 0 || st.Bytes != 0 {
		t.Fatalf("after clear: %+v", st)
	}
}

// Many workers, two caches on the same file (two svbench processes), under
// -race: every call answered, no error reported.
func TestConcurrentWorkers(t *testing.T) {
	dir := t.TempDir()
	var w warnings
	a := open(t, Options{Dir: dir, Warn: w.warn})
	b := open(t, Options{Dir: dir, Warn: w.warn})
	up := &counting{}
	clients := []llm.Client{a.Wrap(up, "u"), b.Wrap(up, "u")}
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for j := range 20 {
				r, err := clients[i%2].Chat(llm.WithRollout(context.Background(), j%4), req("m", string(rune('a'+j%5))))
				if err != nil || r.Message.Content == "" {
					t.Errorf("worker %d call %d: %+v %v", i, j, r, err)
				}
			}
		})
	}
	wg.Wait()
	if errs := w.list(); len(errs) > 0 {
		t.Fatalf("cache reported %v under concurrency", errs)
	}
	if a.Bypassed() || b.Bypassed() {
		t.Fatal("a cache bypassed itself under concurrency")
	}
	st, _ := a.Stats(context.Background())
	if st.Entries != 20 {
		t.Errorf("%d entries, want 5 prompts × 4 rollouts", st.Entries)
	}
}

func TestCorruptFileIsBypassed(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(strings.Repeat("not a database\n", 500)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), Options{Dir: dir}); err == nil || !strings.Contains(err.Error(), "svbench cache clear") {
		t.Fatalf("strict open of a corrupt file: %v", err)
	}
	var w warnings
	c := OpenOrBypass(context.Background(), Options{Dir: dir, Warn: w.warn})
	defer c.Close()
	up := &counting{}
	cl := c.Wrap(up, "u")
	for range 3 {
		r, err := cl.Chat(context.Background(), req("m", "hi"))
		if err != nil || r.Cached || r.Message.Content == "" {
			t.Fatalf("bypassed cache: %+v %v", r, err)
		}
	}
	if up.n.Load() != 3 {
		t.Errorf("endpoint calls %d, want 3", up.n.Load())
	}
	if errs := w.list(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "continuing without") {
		t.Fatalf("want exactly one warning, got %v", errs)
	}
}

func TestLockedFileIsBypassed(t *testing.T) {
	dir := t.TempDir()
	var w warnings
	c := open(t, Options{Dir: dir, BusyTimeout: 20 * time.Millisecond, Warn: w.warn})
	up := &counting{}
	cl := c.Wrap(up, "u")
	ctx := context.Background()
	cl.Chat(ctx, req("m", "before"))

	// Another process holds the write lock for the whole test.
	other, err := sql.Open("sqlite", "file:"+filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatal(err)
	}
	defer conn.ExecContext(ctx, "ROLLBACK")

	for i := range 3 {
		r, err := cl.Chat(ctx, req("m", "during "+string(rune('0'+i))))
		if err != nil || r.Message.Content == "" {
			t.Fatalf("locked cache failed the call: %v", err)
		}
	}
	if !c.Bypassed() {
		t.Fatal("cache not bypassed while locked")
	}
	errs := w.list()
	if len(errs) != 1 {
		t.Fatalf("want one warning, got %v", errs)
	}
	if !strings.Contains(errs[0].Error(), "lock") && !strings.Contains(errs[0].Error(), "busy") {
		t.Errorf("warning does not name the lock: %v", errs[0])
	}
}

func TestNilCachePassesThrough(t *testing.T) {
	var c *Cache
	up := &counting{}
	if c.Wrap(up, "u") != llm.Client(up) {
		t.Fatal("nil cache must return the client")
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestUnknownSchemaRefused(t *testing.T) {
	dir := t.TempDir()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, FileName))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = Open(context.Background(), Options{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "schema version 99") {
		t.Fatalf("err = %v", err)
	}
}
