package runner

import (
	"context"
	"errors"
	"math"
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
