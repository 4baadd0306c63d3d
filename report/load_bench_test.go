package report

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
)

// writeRun writes n rows shaped like a tool-using thinking model's: a long
// prompt repeated on every row, tool turns, reasoning, tool-call arguments.
func writeRun(tb testing.TB, n int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "results.jsonl")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	prompt := []env.Message{{Role: env.RoleSystem, Content: strings.Repeat("system rules ", 300)}, {Role: env.RoleUser, Content: strings.Repeat("resource config line\n", 250)}}
	for i := range n {
		r := artifact.Result{
			Index: i, Rollout: 0, Prompt: prompt, FinalText: `{"violations": ["a"]}`,
			Completion: []env.Message{
				{Role: env.RoleAssistant, Reasoning: strings.Repeat("thinking ", 250), ToolCalls: []env.ToolCall{{ID: "c1", Name: "run_kubelinter", Arguments: strings.Repeat("x", 2000)}}},
				{Role: env.RoleTool, ToolCallID: "c1", Content: strings.Repeat("finding\n", 300)},
				{Role: env.RoleAssistant, Content: `{"violations": ["a"]}`},
			},
			ToolCalls: []env.ToolCallRecord{{Name: "run_kubelinter", Arguments: strings.Repeat("x", 2000), Findings: new(3)}},
			Reward:    1, Components: map[string]float64{"a": 1}, Parsed: map[string]any{"k": "v"},
		}
		if err := enc.Encode(r); err != nil {
			tb.Fatal(err)
		}
	}
	return path
}

// BenchmarkReportLoad compares what a report keeps in memory per row when
// it loads whole rows (LoadResults) and slimmed rows (LoadForReport, what
// svbench report uses): retained-B/row after a GC with the rows alive.
func BenchmarkReportLoad(b *testing.B) {
	const n = 2000
	path := writeRun(b, n)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		load func(string) ([]artifact.Result, []int, error)
	}{{"whole", LoadResults}, {"slim", LoadForReport}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			var retained uint64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				rows, _, err := c.load(path)
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&after)
				if after.HeapAlloc > before.HeapAlloc {
					retained = after.HeapAlloc - before.HeapAlloc
				}
				runtime.KeepAlive(rows)
			}
			b.ReportMetric(float64(retained)/n, "retained-B/row")
			b.ReportMetric(float64(st.Size())/n, "file-B/row")
		})
	}
}

// TestSlimKeepsWhatReportsRead: the prompt, non-assistant turns, tool-call
// arguments and all but a marker of reasoning go; scores, parsed fields,
// assistant text and tool-call counts stay.
func TestSlimKeepsWhatReportsRead(t *testing.T) {
	rows, _, err := LoadForReport(writeRun(t, 3))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Prompt != nil || len(r.Completion) != 2 || r.Completion[0].ToolCalls != nil || r.ToolCalls[0].Arguments != "" {
			t.Fatalf("slim kept what no report reads: %+v", r)
		}
		if r.Completion[1].Content != `{"violations": ["a"]}` || strings.TrimSpace(r.Completion[0].Reasoning) == "" || len(r.Completion[0].Reasoning) > 64 {
			t.Fatalf("slim lost assistant text or the reasoning marker: %+v", r.Completion)
		}
		if r.Reward != 1 || r.Components["a"] != 1 || r.Parsed["k"] != "v" || r.ToolCalls[0].Findings == nil || *r.ToolCalls[0].Findings != 3 || len(r.ToolCalls) != 1 {
			t.Fatalf("slim lost a score: %+v", r)
		}
	}
}
