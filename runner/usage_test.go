package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/llm/usage"
)

// rolloutClient answers with the rollout index it sees in the context and
// reports fixed usage; it fails once its budget of calls is spent.
type rolloutClient struct {
	mu     sync.Mutex
	seen   map[int]int
	budget int
}

func (c *rolloutClient) Chat(ctx context.Context, req llm.Request) (llm.Response, error) {
	r, ok := llm.RolloutFrom(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	if !ok {
		return llm.Response{}, errors.New("no rollout index in the context")
	}
	if c.budget == 0 {
		return llm.Response{}, errors.New("budget spent")
	}
	c.budget--
	c.seen[r]++
	return llm.Response{Message: env.Message{Role: env.RoleAssistant, Content: "alpha"}, Usage: env.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110, ReasoningTokens: 4}}, nil
}

func TestUsageByRoleAndRolloutIndex(t *testing.T) {
	prices, err := usage.ParsePrices([]byte("date = \"2026-11-01\"\ncurrency = \"USD\"\n[models.\"fake/model-1\"]\ninput = 1\noutput = 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	rec := usage.New()
	up := &rolloutClient{seen: map[int]int{}, budget: 6}
	cfg := baseConfig(t, rec.Wrap(up, artifact.RolePolicy), 4)
	cfg.EffectiveModel = "fake/model-1"
	cfg.Rollouts, cfg.Usage, cfg.Prices, cfg.MaxConsecutiveErrors = 2, rec, prices, 0
	out, _ := Run(context.Background(), cfg)
	if out == nil {
		t.Fatal("no outcome")
	}
	if up.seen[0] == 0 || up.seen[1] == 0 {
		t.Fatalf("rollout indices seen by the client: %v, want 0 and 1", up.seen)
	}
	m := out.Metadata
	if len(m.UsageByModel) != 1 {
		t.Fatalf("usage_by_model %+v", m.UsageByModel)
	}
	u := m.UsageByModel[0]
	if u.Role != artifact.RolePolicy || u.Model != "fake/model-1" || u.Calls != 6 || u.Errors != 2 || u.Usage.PromptTokens != 600 || u.Usage.ReasoningTokens != 24 {
		t.Fatalf("first session usage %+v", u)
	}
	if m.Cost == nil || math.Abs(m.Cost.Total-(600*1+60*10)/1e6) > 1e-15 || m.Cost.PricesDate != "2026-11-01" {
		t.Fatalf("cost %+v", m.Cost)
	}

	// Resume: the failed pairs are redone and usage adds up across sessions.
	up.budget = 100
	cfg.ResumeDir = out.Dir
	out2, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	u = out2.Metadata.UsageByModel[0]
	if u.Calls != 8 || u.Errors != 2 || u.Usage.PromptTokens != 800 {
		t.Fatalf("usage after resume %+v, want 8 calls over both sessions", u)
	}
	back, err := artifact.ReadMetadata(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.UsageByModel) != 1 || back.UsageByModel[0].Cost == nil || back.Cost == nil {
		t.Fatalf("metadata.json lost usage or cost: %+v %+v", back.UsageByModel, back.Cost)
	}
}

// TestUsageAfterKillAddsUpFromTheJournal: metadata.json's usage is a
// checkpoint. A run killed after it checkpointed 2 of 6 calls, with all 6
// rows on disk, must not resume believing only 2 were paid for (issue #24,
// item 3: "usage says 36 calls beside 60 rows").
func TestUsageAfterKillAddsUpFromTheJournal(t *testing.T) {
	rec := usage.New()
	up := &rolloutClient{seen: map[int]int{}, budget: 100}
	cfg := baseConfig(t, rec.Wrap(up, artifact.RolePolicy), 6)
	cfg.Usage = rec
	out, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	// What kill -9 leaves: the rows and the journal as written, metadata
	// from an early checkpoint, one error row to redo and half a journal
	// line from the call in flight.
	meta := out.Metadata
	meta.Status = artifact.StatusRunning
	meta.UsageByModel[0].Calls, meta.UsageByModel[0].Usage.PromptTokens = 2, 200
	if err := artifact.WriteJSONAtomic(filepath.Join(out.Dir, artifact.MetadataFile), meta); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(filepath.Join(out.Dir, artifact.ResultsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "{\"index\":%d,\"rollout\":0,\"error\":\"connection reset\"}\n", 0)
	f.Close()
	rows := readRows(t, out.Dir)
	for i := range rows {
		if rows[i].Index == 0 && rows[i].Error == "" {
			rows = append(rows[:i], rows[i+1:]...)
			break
		}
	}
	var buf strings.Builder
	for _, r := range rows {
		b, _ := json.Marshal(r)
		buf.Write(append(b, '\n'))
	}
	if err := os.WriteFile(filepath.Join(out.Dir, artifact.ResultsFile), []byte(buf.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	j, err := os.OpenFile(filepath.Join(out.Dir, UsageJournal), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatalf("no usage journal beside the rows: %v", err)
	}
	j.WriteString(`{"kind":"call","role":"policy","mod`)
	j.Close()

	cfg.ResumeDir = out.Dir
	out2, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	u := out2.Metadata.UsageByModel[0]
	if u.Calls != 7 || u.Usage.PromptTokens != 700 {
		t.Errorf("after kill -9 and resume: %d calls, %d prompt tokens; 7 calls were made (6, then the redone row)", u.Calls, u.Usage.PromptTokens)
	}
	// A second resume of the finished run reads the journal again, whole.
	out3, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if u := out3.Metadata.UsageByModel[0]; u.Calls != 7 {
		t.Errorf("journal unreadable after the cut line: %+v", u)
	}
}

// TestMergedShardsAddUpUsageAndCost: a merged run spent what its shards
// spent together (issue #24, item 3: "20 calls instead of 40").
func TestMergedShardsAddUpUsageAndCost(t *testing.T) {
	prices, err := usage.ParsePrices([]byte("date = \"2026-11-01\"\ncurrency = \"USD\"\n[models.\"fake/model-1\"]\ninput = 1\noutput = 10\n"))
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	var calls int64
	var cost float64
	for i := range 2 {
		rec := usage.New()
		up := &rolloutClient{seen: map[int]int{}, budget: 100}
		cfg := baseConfig(t, rec.Wrap(up, artifact.RolePolicy), 8)
		cfg.Usage, cfg.Prices, cfg.Shard, cfg.EffectiveModel = rec, prices, Shard{Index: i, Count: 2}, "fake/model-1"
		out, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, out.Dir)
		calls += int64(out.Metadata.UsageByModel[0].Calls)
		cost += out.Metadata.Cost.Total
	}
	m, err := Merge(dirs, filepath.Join(t.TempDir(), "merged"))
	if err != nil {
		t.Fatal(err)
	}
	if len(m.UsageByModel) != 1 || int64(m.UsageByModel[0].Calls) != calls || calls != 8 {
		t.Fatalf("merged usage %+v, want %d calls", m.UsageByModel, calls)
	}
	if cost == 0 || m.Cost == nil || math.Abs(m.Cost.Total-cost) > 1e-15 || m.UsageByModel[0].Cost == nil || math.Abs(*m.UsageByModel[0].Cost-cost) > 1e-15 {
		t.Fatalf("merged cost %+v, want %v", m.Cost, cost)
	}
}

// TestCancelledCallsAreNotFailures: Ctrl-C cancels calls in flight; they
// did not fail (issue #24, item 4).
func TestCancelledCallsAreNotFailures(t *testing.T) {
	rec := usage.New()
	ctx, cancel := context.WithCancel(context.Background())
	c := rec.Wrap(cancellingClient(cancel), artifact.RolePolicy)
	c.Chat(ctx, llm.Request{Model: "m"})
	if s := rec.Snapshot(); len(s) != 0 && s[0].Errors != 0 {
		t.Errorf("a cancelled call counted as failed: %+v", s)
	}
}

// cancellingClient cancels the run's context while its call is in flight.
type cancellingClient context.CancelFunc

func (c cancellingClient) Chat(ctx context.Context, _ llm.Request) (llm.Response, error) {
	c()
	return llm.Response{}, ctx.Err()
}
