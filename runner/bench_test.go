package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/envs/netlogs"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/llm/llmtest"
)

// BenchmarkHarnessThroughput measures sustained requests/s against a local
// endpoint with 50 ms latency at concurrency 64 (the ideal is 64/0.05 s =
// 1,280/s), and the reference's sequential loop against the same endpoint in
// the same run, reporting both rates and their ratio.
func BenchmarkHarnessThroughput(b *testing.B) {
	srv := llmtest.New(llmtest.Options{Latency: 50 * time.Millisecond, Respond: answerEcho})
	defer srv.Close()
	client, err := llm.NewOpenAI(llm.Config{BaseURL: srv.BaseURL(), APIKey: "k", MaxInFlight: 64})
	if err != nil {
		b.Fatal(err)
	}
	rate := func(concurrency, rows int) float64 {
		cfg := baseConfig(b, client, rows)
		cfg.Concurrency = concurrency
		start := time.Now()
		out, err := Run(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		if out.Metadata.Completed != rows {
			b.Fatalf("completed %d of %d", out.Metadata.Completed, rows)
		}
		return float64(rows) / time.Since(start).Seconds()
	}
	// Warm the connection pool so the measurement is steady state.
	rate(64, 128)
	b.ResetTimer()
	var conc, seq float64
	for range b.N {
		conc += rate(64, 2560)
		seq += rate(1, 40)
	}
	conc /= float64(b.N)
	seq /= float64(b.N)
	b.ReportMetric(conc, "req/s(c=64)")
	b.ReportMetric(conc/1280*100, "%of-limit")
	b.ReportMetric(seq, "req/s(sequential)")
	b.ReportMetric(conc/seq, "x-vs-sequential")
}

// BenchmarkRun100kMemory evaluates 100,000 E1 examples with an in-process
// policy and reports the process's peak RSS: results are streamed to disk,
// so memory is the dataset plus a constant.
func BenchmarkRun100kMemory(b *testing.B) {
	rows, err := netlogs.Generate(netlogs.GenerateOptions{N: 100_000, Seed: 1, Difficulty: "mixed"})
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "e1-100k.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			b.Fatal(err)
		}
	}
	w.Flush()
	f.Close()
	rows = nil
	debug.FreeOSMemory()
	resetPeakRSS()

	e := netlogs.New()
	p, _ := e.Policy("features")
	for range b.N {
		ds, closeDS, err := OpenDataset(context.Background(), e, path, "", false)
		if err != nil {
			b.Fatal(err)
		}
		defer closeDS()
		cfg := Config{Env: e, Dataset: ds, Client: llm.Builtin{Policy: p}, Model: "builtin:features",
			Rollouts: 1, Concurrency: 64, Seed: 3, OutDir: b.TempDir()}
		out, err := Run(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		if out.Metadata.Completed != 100_000 {
			b.Fatalf("completed %d", out.Metadata.Completed)
		}
	}
	b.ReportMetric(peakRSSMB(), "peak-RSS-MB")
}

// resetPeakRSS clears VmHWM so the generator's own peak is not counted.
func resetPeakRSS() { _ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) }

// peakRSSMB reads VmHWM, the kernel's record of peak resident memory.
func peakRSSMB() float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return -1
}
