package usage

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
)

type fakeClient struct {
	usage    env.Usage
	cached   bool
	rejected bool // answered after a cache entry failed its checks
	err      error
}

func (f fakeClient) Chat(_ context.Context, req llm.Request) (llm.Response, error) {
	if f.err != nil {
		return llm.Response{}, f.err
	}
	return llm.Response{Message: env.Message{Role: env.RoleAssistant, Content: "ok"}, Usage: f.usage, Cached: f.cached, CacheRejected: f.rejected, Model: req.Model}, nil
}

func TestRecorderSplitsByRoleAndModel(t *testing.T) {
	rec := New()
	u := env.Usage{PromptTokens: 10, CompletionTokens: 5, TotalTokens: 15, ReasoningTokens: 2}
	policy := rec.Wrap(fakeClient{usage: u}, artifact.RolePolicy)
	cached := rec.Wrap(fakeClient{usage: u, cached: true}, artifact.RolePolicy)
	reasked := rec.Wrap(fakeClient{usage: u, rejected: true}, artifact.RolePolicy)
	judge := rec.Wrap(fakeClient{usage: u}, artifact.RoleJudge)
	failing := rec.Wrap(fakeClient{err: errors.New("503")}, artifact.RoleTarget)

	var wg sync.WaitGroup
	for range 50 {
		wg.Go(func() {
			ctx := context.Background()
			if _, err := policy.Chat(ctx, llm.Request{Model: "m"}); err != nil {
				t.Error(err)
			}
			if _, err := cached.Chat(ctx, llm.Request{Model: "m"}); err != nil {
				t.Error(err)
			}
			if _, err := reasked.Chat(ctx, llm.Request{Model: "m"}); err != nil {
				t.Error(err)
			}
			if _, err := judge.Chat(ctx, llm.Request{Model: "judge-m"}); err != nil {
				t.Error(err)
			}
			if _, err := failing.Chat(ctx, llm.Request{Model: "t"}); err == nil {
				t.Error("error swallowed")
			}
		})
	}
	wg.Wait()
	got := rec.Snapshot()
	if len(got) != 3 {
		t.Fatalf("want 3 entries (policy m, target t, judge judge-m), got %+v", got)
	}
	want := []struct {
		role, model         string
		calls, cached, errs int64
		prompt, reasoning   int64
	}{
		{artifact.RolePolicy, "m", 100, 50, 0, 1000, 200},
		{artifact.RoleTarget, "t", 0, 0, 50, 0, 0},
		{artifact.RoleJudge, "judge-m", 50, 0, 0, 500, 100},
	}
	for i, w := range want {
		g := got[i]
		if g.Role != w.role || g.Model != w.model || g.Calls != w.calls || g.CachedCalls != w.cached || g.Errors != w.errs || g.Usage.PromptTokens != w.prompt || g.Usage.ReasoningTokens != w.reasoning {
			t.Errorf("entry %d = %+v, want %+v", i, g, w)
		}
	}
	if got[0].CachedUsage.PromptTokens != 500 {
		t.Errorf("cached usage not kept apart: %+v", got[0])
	}
	// A re-asked call is paid for and counted as such.
	if got[0].CacheRejected != 50 {
		t.Errorf("cache rejections %d, want 50", got[0].CacheRejected)
	}
	tot := Totals(got)
	if tot[artifact.RoleJudge].TotalTokens != 750 || tot[artifact.RolePolicy].TotalTokens != 1500 {
		t.Errorf("totals %+v", tot)
	}

	rec2 := New()
	rec2.Restore(got)
	rec2.Add(artifact.RolePolicy, "m", u)
	if s := rec2.Snapshot(); s[0].Calls != 101 || s[0].Usage.PromptTokens != 1010 || s[0].CacheRejected != 50 {
		t.Errorf("restore then add: %+v", s[0])
	}
	rec2.Restore(nil)
	if s := rec2.Snapshot(); s != nil {
		t.Errorf("restore(nil) kept %+v", s)
	}
}

func TestNilRecorderPassesClientsThrough(t *testing.T) {
	var nilRec *Recorder
	if nilRec.Wrap(fakeClient{}, "x") == nil || nilRec.Snapshot() != nil {
		t.Fatal("nil recorder must pass clients through")
	}
}

const examplePrices = `
date = "2026-11-01"
currency = "USD"

[models."gpt-4.1-mini"]
input = 0.40
output = 1.60

[models."judge"]
input = 1
output = 2
`

func TestPricesApply(t *testing.T) {
	p, err := ParsePrices([]byte(examplePrices))
	if err != nil {
		t.Fatal(err)
	}
	us := []artifact.ModelUsage{
		{Role: artifact.RolePolicy, Model: "openai/gpt-4.1-mini", Usage: env.Usage{PromptTokens: 1_000_000, CompletionTokens: 500_000, ReasoningTokens: 100_000}},
		{Role: artifact.RoleJudge, Model: "judge", Usage: env.Usage{PromptTokens: 2_000_000}, CachedUsage: env.Usage{PromptTokens: 9_000_000}},
		{Role: artifact.RoleTarget, Model: "mystery", Usage: env.Usage{PromptTokens: 5}},
		{Role: artifact.RoleTarget, Model: "idle"},
	}
	c := p.Apply(us)
	if us[0].Cost == nil || math.Abs(*us[0].Cost-1.2) > 1e-12 {
		t.Errorf("policy cost %v, want 0.40 + 0.80", us[0].Cost)
	}
	if us[1].Cost == nil || *us[1].Cost != 2 {
		t.Errorf("judge cost %v, want 2 (cached tokens are free)", us[1].Cost)
	}
	if math.Abs(c.Total-3.2) > 1e-12 || c.Currency != "USD" || c.PricesDate != "2026-11-01" {
		t.Errorf("cost %+v", c)
	}
	if len(c.Unpriced) != 1 || c.Unpriced[0] != "mystery" {
		t.Errorf("unpriced %v: want only the model with usage and no price", c.Unpriced)
	}
	var nilP *Prices
	if nilP.Apply(us) != nil {
		t.Error("nil prices must give no cost")
	}
}

func TestParsePricesRefuses(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{"typo", `date = "2026-01-01"` + "\ncurrency = \"USD\"\n[models.m]\ninput = 1\nouput = 2\n", "unknown key"},
		{"no date", "currency = \"USD\"\n[models.m]\ninput = 1\n", "date"},
		{"bad date", `date = "yesterday"` + "\ncurrency = \"USD\"\n[models.m]\ninput = 1\n", "YYYY-MM-DD"},
		{"no currency", `date = "2026-01-01"` + "\n[models.m]\ninput = 1\n", "currency"},
		{"negative", `date = "2026-01-01"` + "\ncurrency = \"USD\"\n[models.m]\ninput = -1\n", "≥ 0"},
		{"nan", `date = "2026-01-01"` + "\ncurrency = \"USD\"\n[models.m]\noutput = nan\n", "finite"},
		{"inf", `date = "2026-01-01"` + "\ncurrency = \"USD\"\n[models.m]\noutput = inf\n", "finite"},
		{"no models", `date = "2026-01-01"` + "\ncurrency = \"USD\"\n", "no models"},
		{"syntax", `date = `, "parse"},
		{"wrong type", `date = "2026-01-01"` + "\ncurrency = \"USD\"\n[models.m]\ninput = \"cheap\"\n", "parse"},
		{"nul", "date = \"2026-01-01\"\x00", "NUL"},
		{"huge", strings.Repeat("#", MaxPricesBytes+1), "larger"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParsePrices([]byte(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want one mentioning %q", err, c.want)
			}
		})
	}
}

func TestExamplePricesFileParses(t *testing.T) {
	path := filepath.Join("..", "..", "docs", "prices.example.toml")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "stale") {
		t.Error("the example prices file must warn that prices go stale")
	}
	p, err := LoadPrices(path)
	if err != nil {
		t.Fatal(err)
	}
	if p.File != path || len(p.Models) == 0 {
		t.Fatalf("%+v", p)
	}
}

func FuzzParsePrices(f *testing.F) {
	f.Add([]byte(examplePrices))
	f.Add([]byte(`date = "2026-01-01"` + "\ncurrency = \"EUR\"\n[models.\"a/b\"]\ninput = 1e308\noutput = 0\n"))
	f.Add([]byte("[models]\nx = 1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := ParsePrices(b)
		if err != nil {
			return
		}
		for name, pr := range p.Models {
			if math.IsNaN(pr.Input) || pr.Input < 0 || math.IsInf(pr.Output, 0) || pr.Output < 0 {
				t.Fatalf("accepted bad price for %q: %+v", name, pr)
			}
		}
		us := []artifact.ModelUsage{{Model: "m", Usage: env.Usage{PromptTokens: math.MaxInt32, CompletionTokens: math.MaxInt32}}}
		for name := range p.Models {
			us = append(us, artifact.ModelUsage{Model: name, Usage: env.Usage{PromptTokens: 1}})
		}
		c := p.Apply(us)
		if c == nil || math.IsNaN(c.Total) || c.Total < 0 {
			t.Fatalf("cost %+v", c)
		}
	})
}
