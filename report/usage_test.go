package report

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
)

func TestCostInReportAndScoreboard(t *testing.T) {
	root := t.TempDir()
	mk := func(name string, cost *artifact.Cost, usage []artifact.ModelUsage) {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		for i := range 6 {
			b, _ := json.Marshal(e1Row(i, "Malicious", 0.8, `"Malicious"`, nil))
			buf.Write(append(b, '\n'))
		}
		writeFile(t, dir, artifact.ResultsFile, buf.String())
		meta := artifact.Metadata{RunID: name, Environment: testEnv, Model: name, Started: time.Unix(1700000000, 0), Status: artifact.StatusCompleted,
			UsageByModel: usage, Cost: cost}
		if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), meta); err != nil {
			t.Fatal(err)
		}
	}
	pc, jc := 0.25, 0.001
	mk("priced", &artifact.Cost{Currency: "USD", Total: 0.251, PricesDate: "2026-11-01", PricesFile: "p.toml", Unpriced: []string{"mystery"}},
		[]artifact.ModelUsage{
			{Role: artifact.RolePolicy, Model: "gpt-x", Calls: 6, Usage: env.Usage{PromptTokens: 600, CompletionTokens: 60, ReasoningTokens: 20}, Cost: &pc},
			{Role: artifact.RoleJudge, Model: "judge-y", Calls: 6, CachedCalls: 2, Usage: env.Usage{PromptTokens: 100, CompletionTokens: 6}, Cost: &jc},
			{Role: artifact.RoleTarget, Model: "mystery", Calls: 1, Usage: env.Usage{PromptTokens: 5}},
		})
	mk("unpriced", nil, nil)

	rep, err := FromRun(filepath.Join(root, "priced"), "", Options{BootstrapReps: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Tokens and cost", "| judge | judge-y | 6 | 2 |", "| target | mystery |", "no price", "≥ 0.2510 USD (no price for mystery)", "2026-11-01", "go stale"} {
		if !strings.Contains(rep.Markdown, want) {
			t.Errorf("report.md lacks %q:\n%s", want, rep.Markdown)
		}
	}
	if rep.Summary["cost"] == nil || rep.Summary["usage_by_model"] == nil {
		t.Error("summary.json lacks usage and cost")
	}
	rep2, err := FromRun(filepath.Join(root, "unpriced"), "", Options{BootstrapReps: -1})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(rep2.Markdown, "Tokens and cost") {
		t.Error("a run without usage got a cost section")
	}

	sb, err := CollectScoreboard(root, ScoreboardOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	md := sb.Markdown()
	if !strings.Contains(md, "| cost |") || !strings.Contains(md, "0.2510 USD") {
		t.Errorf("scoreboard lacks the cost column:\n%s", md)
	}
	for _, r := range sb.Runs {
		if r.Model == "priced" && (r.Cost == nil || r.Tokens != 771) {
			t.Errorf("priced row %+v", r)
		}
	}
}

// TestCostUnknownIsNotZero: a model missing from the price file makes the
// cost unknown (nothing priced) or a lower bound (part priced), never 0,
// in the headline, report.md and the scoreboard alike.
func TestCostUnknownIsNotZero(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *artifact.Cost
		want string
	}{
		{"no prices", nil, ""},
		{"all priced", &artifact.Cost{Currency: "USD", Total: 0.25}, "0.2500 USD"},
		{"all priced, free", &artifact.Cost{Currency: "USD"}, "0.0000 USD"},
		{"nothing priced", &artifact.Cost{Currency: "USD", Unpriced: []string{"qwen3"}}, "unknown (no price for qwen3)"},
		{"part priced", &artifact.Cost{Currency: "USD", Total: 0.25, Unpriced: []string{"judge", "qwen3"}}, "≥ 0.2500 USD (no price for judge, qwen3)"},
	} {
		if got := CostText(tc.c); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}

	root := t.TempDir()
	dir := filepath.Join(root, "unknown")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for i := range 6 {
		b, _ := json.Marshal(e1Row(i, "Malicious", 0.8, `"Malicious"`, nil))
		buf.Write(append(b, '\n'))
	}
	writeFile(t, dir, artifact.ResultsFile, buf.String())
	meta := artifact.Metadata{RunID: "unknown", Environment: testEnv, Model: "qwen3", Started: time.Unix(1700000000, 0), Status: artifact.StatusCompleted,
		UsageByModel: []artifact.ModelUsage{{Role: artifact.RolePolicy, Model: "qwen3", Calls: 6, Usage: env.Usage{PromptTokens: 600, CompletionTokens: 60}}},
		Cost:         &artifact.Cost{Currency: "USD", PricesDate: "2026-11-01", Unpriced: []string{"qwen3"}}}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), meta); err != nil {
		t.Fatal(err)
	}
	rep, err := FromRun(dir, "", Options{BootstrapReps: -1})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, h := range rep.Headline {
		if h.Name == "cost" {
			found = true
			if !strings.HasPrefix(h.Value, "unknown (no price for qwen3)") {
				t.Errorf("headline cost %q", h.Value)
			}
		}
	}
	if !found {
		t.Error("no cost in the headline")
	}
	if strings.Contains(rep.Markdown, "0.0000 USD") || !strings.Contains(rep.Markdown, "Total cost **unknown (no price for qwen3)**") {
		t.Errorf("report.md:\n%s", rep.Markdown)
	}
	sb, err := CollectScoreboard(root, ScoreboardOptions{All: true})
	if err != nil {
		t.Fatal(err)
	}
	md := sb.Markdown()
	if strings.Contains(md, "0.0000 USD") || !strings.Contains(md, "unknown (no price for qwen3)") {
		t.Errorf("scoreboard:\n%s", md)
	}
	for _, r := range append(sb.Runs, sb.Unranked...) {
		if r.Cost != nil || len(r.CostUnpriced) != 1 {
			t.Errorf("row cost %v unpriced %v", r.Cost, r.CostUnpriced)
		}
	}
}
