package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/envs/netlogs"
	"github.com/svbench/svbench/llm/llmtest"
)

// BenchmarkEvalCommand runs `svbench eval` as a user does, on 8,000 E1 rows
// against an endpoint that answers in 50 ms, at -c 64: the ideal is
// 64/0.05 s = 1,280 rows/s. It reports the rate of the whole command
// (dataset loading, the run, summary, report and charts) and of the run
// alone (metadata's duration), each as a share of that limit, and their
// ratio: what the fixed costs around the run take from a user's wall time.
func BenchmarkEvalCommand(b *testing.B) {
	const rows, limit = 8000, 1280.0
	srv := llmtest.New(llmtest.Options{Latency: 50 * time.Millisecond, Respond: func(llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: `{"label": "Benign", "confidence": 0.8, "rationale": "ordinary traffic"}`}
	}})
	defer srv.Close()
	gen, err := netlogs.Generate(netlogs.GenerateOptions{N: rows, Seed: 1, Difficulty: "mixed"})
	if err != nil {
		b.Fatal(err)
	}
	data := filepath.Join(b.TempDir(), "e1.jsonl")
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, r := range gen {
		if err := enc.Encode(r); err != nil {
			b.Fatal(err)
		}
	}
	if err := os.WriteFile(data, buf.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
	b.Setenv("OPENAI_API_KEY", "k")
	// The heap target the svbench binary runs with (main calls TuneGC).
	defer TuneGC()()
	eval := func(n int) (whole, run float64) {
		out := b.TempDir()
		var stdout, stderr bytes.Buffer
		start := time.Now()
		code := Execute(context.Background(), []string{"eval", "e1", "-m", "fake", "--base-url", srv.BaseURL(), "--dataset", data,
			"-n", strconv.Itoa(n), "-c", "64", "--out", out}, &stdout, &stderr)
		whole = time.Since(start).Seconds()
		if code != 0 {
			b.Fatalf("eval exit %d: %s", code, stderr.String())
		}
		metas, _ := filepath.Glob(filepath.Join(out, "evals", "*", "*", artifact.MetadataFile))
		if len(metas) != 1 {
			b.Fatalf("%d run directories", len(metas))
		}
		var m artifact.Metadata
		raw, err := os.ReadFile(metas[0])
		if err == nil {
			err = json.Unmarshal(raw, &m)
		}
		if err != nil || m.Completed != n {
			b.Fatalf("metadata: %v, %d of %d rows completed", err, m.Completed, n)
		}
		return float64(n) / whole, float64(n) / m.DurationS
	}
	eval(256) // warm the connection pool and the page cache
	var whole, run float64
	for b.Loop() {
		w, r := eval(rows)
		whole += w
		run += r
	}
	whole /= float64(b.N)
	run /= float64(b.N)
	b.ReportMetric(whole, "rows/s-command")
	b.ReportMetric(whole/limit*100, "%of-limit-command")
	b.ReportMetric(run/limit*100, "%of-limit-run")
	b.ReportMetric(whole/run, "x-command/run")
	b.ReportMetric(0, "ns/op")
}
