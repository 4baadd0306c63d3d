package ingest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/envs/netlogs"
	"github.com/svbench/svbench/ingest"
	"github.com/svbench/svbench/report"
)

// writeTrainerRows writes n verifiers-format rows (prime-rl's export) of
// E1 with a thinking model's long reasoning and a long system prompt: a
// trainer's results file whose bulk is text no report reads.
func writeTrainerRows(tb testing.TB, n int) string {
	tb.Helper()
	e := netlogs.New()
	ds, err := e.Load(context.Background(), "")
	if err != nil {
		tb.Fatal(err)
	}
	path := filepath.Join(tb.TempDir(), "results.jsonl")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	system := strings.Repeat("You are a network security analyst. ", 200)
	for i := range n {
		ex := ds.Examples[i%len(ds.Examples)]
		var gold string
		_ = json.Unmarshal(ex.Answer, &gold)
		prompt, _ := json.Marshal([]map[string]any{{"role": "system", "content": system}, {"role": "user", "content": ex.Prompt[len(ex.Prompt)-1].Content}})
		completion, _ := json.Marshal([]map[string]any{{"role": "assistant", "reasoning_content": strings.Repeat("the source port looks unusual; ", 300),
			"content": fmt.Sprintf(`{"label": %q, "confidence": 0.8}`, gold)}})
		row := map[string]any{"prompt": string(prompt), "completion": string(completion), "answer": gold, "reward": 1.0,
			"env_name": "intertwine/sv-env-network-logs", "problem_id": i % len(ds.Examples), "sample_id": i / len(ds.Examples), "step": i / 64, "task": "default",
			"info": "", "metrics": `{"reward_accuracy": 1.0}`}
		if err := enc.Encode(row); err != nil {
			tb.Fatal(err)
		}
	}
	return path
}

// peakHeap runs fn while sampling the live heap and returns the highest
// sample above the heap before it (sampling misses short spikes; it is a
// floor on the peak, which is what the comparison needs).
func peakHeap(fn func()) uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	var peak uint64
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			mu.Lock()
			peak = max(peak, s[0].Value.Uint64())
			mu.Unlock()
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	fn()
	close(done)
	wg.Wait()
	if peak < base {
		return 0
	}
	return peak - base
}

// BenchmarkLoadMemory: the heap a trainer's results file takes to load,
// as a multiple of the file's size (peak-heap/file, retained/file: what
// the loaded rows hold after a GC), whole rows against rows trimmed as
// svbench report keeps them (report.Slim, ingest.Options.Keep).
func BenchmarkLoadMemory(b *testing.B) {
	path := writeTrainerRows(b, 3000)
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	e := netlogs.New()
	for _, c := range []struct {
		name string
		keep func(*artifact.Result)
	}{{"whole", nil}, {"slim", report.Slim}} {
		b.Run(c.name, func(b *testing.B) {
			var peak, retained uint64
			for b.Loop() {
				var run *ingest.Run
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				peak = peakHeap(func() {
					var err error
					if run, err = ingest.Load(context.Background(), path, e, ingest.Options{Keep: c.keep}); err != nil {
						b.Fatal(err)
					}
				})
				runtime.GC()
				runtime.ReadMemStats(&after)
				retained = after.HeapAlloc - min(before.HeapAlloc, after.HeapAlloc)
				runtime.KeepAlive(run)
			}
			b.ReportMetric(float64(peak)/float64(st.Size()), "peak-heap/file")
			b.ReportMetric(float64(retained)/float64(st.Size()), "retained/file")
			b.ReportMetric(float64(st.Size())/(1<<20), "file-MiB")
		})
	}
}
