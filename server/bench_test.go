package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svbench/svbench/env"
	// Every built-in environment, for the benchmarks and allenvs_test.go;
	// named here, not through internal/envs (the CLI's wiring, a layer up).
	_ "github.com/svbench/svbench/envs/codevuln"
	_ "github.com/svbench/svbench/envs/configaudit"
	_ "github.com/svbench/svbench/envs/netlogs"
	_ "github.com/svbench/svbench/envs/phishing"
	_ "github.com/svbench/svbench/envs/redteam"
)

const benchBatch = 256

// benchItems builds n score items for envName from its embedded set, using
// the gold answer as a perfect completion for half of them and a wrong or
// empty one for the rest, and returns them with the loaded examples.
func benchItems(tb testing.TB, envName string, n int, completion func(ex env.Example, i int) string) ([]map[string]any, env.Environment, []env.Example) {
	tb.Helper()
	e, err := env.Default.New(envName, env.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	ds, err := e.Load(context.Background(), "")
	if err != nil {
		tb.Fatal(err)
	}
	items := make([]map[string]any, n)
	exs := make([]env.Example, n)
	for i := range n {
		ex := ds.Examples[i%len(ds.Examples)]
		exs[i] = ex
		items[i] = map[string]any{"env": envName, "example_id": ex.ID, "completion": completion(ex, i)}
	}
	return items, e, exs
}

func e1Completion(ex env.Example, i int) string {
	var ans string
	_ = json.Unmarshal(ex.Answer, &ans)
	return e1Completions(ans)[i%5]
}

func e2Completion(ex env.Example, i int) string {
	if i%2 == 0 {
		return string(ex.Answer)
	}
	return `{"violations": [], "confidence": 0.4}`
}

// loadBench measures /v1/score throughput over a real loopback listener
// (client and server share the machine's cores), then p99 latency of an
// open-loop load at half that rate, and the in-process scoring rate of the
// same items for the HTTP overhead ratio.
func loadBench(b *testing.B, envName string, completion func(env.Example, int) string) {
	items, e, exs := benchItems(b, envName, benchBatch, completion)
	body, err := json.Marshal(map[string]any{"items": items})
	if err != nil {
		b.Fatal(err)
	}
	ls := startServer(b, Config{Envs: []string{envName}, Logger: quietLog})
	status, resp := ls.do(b, "POST", "/v1/score", body)
	if status != 200 {
		b.Fatalf("%d %v", status, resp)
	}
	for i, r := range resp["results"].([]any) {
		if r.(map[string]any)["error"] != nil {
			b.Fatalf("item %d: %v", i, r)
		}
	}
	post := func() (time.Duration, error) {
		start := time.Now()
		r, err := ls.client.Post(ls.URL+"/v1/score", "application/json", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, r.Body)
		r.Body.Close()
		if r.StatusCode != 200 {
			return 0, fmt.Errorf("status %d", r.StatusCode)
		}
		return time.Since(start), nil
	}

	b.SetParallelism(2)
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := post(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	elapsed := time.Since(start)
	b.StopTimer()
	rate := float64(b.N*benchBatch) / elapsed.Seconds()
	b.ReportMetric(rate, "items/s")
	b.ReportMetric(0, "ns/op")
	if elapsed < 500*time.Millisecond {
		return // calibration round: skip the latency and in-process phases
	}

	// Open loop at half the measured rate for a bounded time.
	interval := time.Duration(float64(time.Second) * benchBatch / (rate / 2))
	deadline := time.Now().Add(2 * time.Second)
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	var failed atomic.Int64
	sem := make(chan struct{}, 64)
	for t := time.Now(); t.Before(deadline); t = t.Add(interval) {
		time.Sleep(time.Until(t))
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			d, err := post()
			if err != nil {
				failed.Add(1)
				return
			}
			mu.Lock()
			lat = append(lat, d)
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(lat) > 0 {
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms@half-rate")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms@half-rate")
	}
	if failed.Load() > 0 {
		b.Errorf("%d requests failed at half rate", failed.Load())
	}

	// The same items scored in-process, on as many goroutines as cores,
	// after one warm-up pass (verifiers initialise lazily, per instance).
	for j := range exs {
		ro := &env.Rollout{Completion: env.CompletionText(items[j]["completion"].(string)).Messages}
		if _, err := e.Score(context.Background(), exs[j], ro, ""); err != nil {
			b.Fatal(err)
		}
	}
	var done atomic.Int64
	inStart := time.Now()
	var iwg sync.WaitGroup
	for w := range runtime.GOMAXPROCS(0) {
		iwg.Go(func() {
			for i := w; time.Since(inStart) < time.Second; i++ {
				j := i % len(exs)
				ro := &env.Rollout{Completion: env.CompletionText(items[j]["completion"].(string)).Messages}
				if _, err := e.Score(context.Background(), exs[j], ro, ""); err != nil {
					b.Error(err)
					return
				}
				done.Add(1)
			}
		})
	}
	iwg.Wait()
	inRate := float64(done.Load()) / time.Since(inStart).Seconds()
	b.ReportMetric(inRate, "inproc-items/s")
	b.ReportMetric(rate/inRate, "http/inproc")
}

// BenchmarkScoreE1Batched: E1 items through the HTTP handler, 256 per request.
//
//	go test -run '^$' -bench ScoreE1Batched -benchtime 5s ./server
func BenchmarkScoreE1Batched(b *testing.B) { loadBench(b, "e1", e1Completion) }

// BenchmarkScoreE2Batched: E2 items (kube-linter / OPA / patch verifiers).
func BenchmarkScoreE2Batched(b *testing.B) { loadBench(b, "e2", e2Completion) }

// rss reads the resident set size from /proc (0 where there is none).
func rss() int64 {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0
	}
	pages, _ := strconv.ParseInt(f[1], 10, 64)
	return pages * int64(os.Getpagesize())
}

// TestSoak scores E1 batches continuously for SVBENCH_SOAK and reports RSS
// and heap at start and end; the heap after GC must not keep what the
// requests allocated.
//
// It is a soak, not a unit test, so it is skipped unless SVBENCH_SOAK names
// a positive duration: `go test ./...` and `make test` never spend time on
// it. `make bench` runs it for a few seconds (the Makefile's SOAK, default
// 3s); `make bench SOAK=5m` or `SVBENCH_SOAK=5m go test -run '^TestSoak$' -v
// ./server` for a long run, `make bench SOAK=0` to leave it out.
func TestSoak(t *testing.T) {
	v := os.Getenv("SVBENCH_SOAK")
	if v == "" {
		t.Skip("soak test: runs under `make bench`, or with SVBENCH_SOAK=<duration> such as 3s or 5m")
	}
	dur, err := time.ParseDuration(v)
	if err != nil {
		t.Fatalf("SVBENCH_SOAK=%q: want a duration such as 5m", v)
	}
	if dur <= 0 {
		t.Skipf("SVBENCH_SOAK=%s: soak disabled", v)
	}
	base := runtime.NumGoroutine()
	items, _, _ := benchItems(t, "e1", benchBatch, e1Completion)
	body, _ := json.Marshal(map[string]any{"items": items})
	ls := startServer(t, Config{Envs: []string{"e1"}, Logger: quietLog})
	heap := func() uint64 {
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return m.HeapInuse
	}
	// Warm up so pools and connection buffers exist before the baseline.
	for range 20 {
		ls.do(t, "POST", "/v1/score", body)
	}
	startRSS, startHeap := rss(), heap()
	var reqs atomic.Int64
	var wg sync.WaitGroup
	stop := time.Now().Add(dur)
	for range 4 {
		wg.Go(func() {
			for time.Now().Before(stop) {
				r, err := ls.client.Post(ls.URL+"/v1/score", "application/json", bytes.NewReader(body))
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, r.Body)
				r.Body.Close()
				if r.StatusCode != 200 {
					t.Errorf("status %d", r.StatusCode)
					return
				}
				reqs.Add(1)
			}
		})
	}
	wg.Wait()
	endRSS, endHeap := rss(), heap()
	t.Logf("soak %s: %d requests (%d items, %.0f items/s); RSS %d → %d MiB; heap in use %d → %d MiB",
		dur, reqs.Load(), reqs.Load()*benchBatch, float64(reqs.Load()*benchBatch)/dur.Seconds(),
		startRSS>>20, endRSS>>20, startHeap>>20, endHeap>>20)
	if endHeap > startHeap+64<<20 {
		t.Errorf("heap grew from %d to %d MiB over the soak", startHeap>>20, endHeap>>20)
	}
	if err := ls.shutdown(t); err != nil {
		t.Fatal(err)
	}
	ls.client.CloseIdleConnections()
	waitGoroutines(t, base)
}
