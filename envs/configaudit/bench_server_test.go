package configaudit

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"
	"time"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/server"
)

// BenchmarkServeUniqueBatches is the trainer's view of the figure above:
// two concurrent /v1/score requests of 1,024 items each, every item a
// distinct patch (half Kubernetes, half Terraform), through svbench's HTTP
// server with its default 30 s deadline and the binary's GOGC. Before
// tfscan prepared trivy's checks, one such batch took ~16 s and two
// concurrent ones both ran out of time.
func BenchmarkServeUniqueBatches(b *testing.B) {
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	_, k8s := autofixRollouts(b, FixtureK8s)
	_, tf := autofixRollouts(b, FixtureTF)
	reg := env.NewRegistry()
	reg.Register(env.Spec{ID: ID, Aliases: []string{"e2"}, New: New, Config: DefaultConfig()})
	srv, err := server.New(server.Config{Registry: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	if err := srv.Load(context.Background()); err != nil {
		b.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()

	const batch = 1024
	serial := 0
	body := func() []byte {
		items := make([]map[string]any, batch)
		for i := range items {
			src := k8s[i/2%len(k8s)]
			if i%2 == 1 {
				src = tf[i/2%len(tf)]
			}
			serial++
			ro := uniquePatch(b, src, serial)
			items[i] = map[string]any{"env": ID, "example_id": src.ex.ID, "completion": ro.FinalText()}
		}
		raw, err := json.Marshal(map[string]any{"items": items})
		if err != nil {
			b.Fatal(err)
		}
		return raw
	}
	post := func(raw []byte) (time.Duration, int) {
		start := time.Now()
		resp, err := http.Post(ts.URL+"/v1/score", "application/json", bytes.NewReader(raw))
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Results []struct {
				Error any `json:"error"`
			} `json:"results"`
			Unscored int `json:"unscored"`
		}
		data, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || json.Unmarshal(data, &out) != nil {
			b.Fatalf("status %d: %.300s", resp.StatusCode, data)
		}
		failed := out.Unscored
		for _, r := range out.Results {
			if r.Error != nil {
				failed++
			}
		}
		return time.Since(start), failed
	}
	// One warm-up batch scans every original once, as a training run's
	// first step does.
	if _, failed := post(body()); failed > 0 {
		b.Fatalf("%d items failed in the warm-up batch", failed)
	}
	var slowest time.Duration
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		bodies := [][]byte{body(), body()}
		runtime.GC()
		b.StartTimer()
		var wg sync.WaitGroup
		var mu sync.Mutex
		for _, raw := range bodies {
			wg.Go(func() {
				d, failed := post(raw)
				mu.Lock()
				defer mu.Unlock()
				if failed > 0 {
					b.Errorf("%d of %d items unscored or failed", failed, batch)
				}
				slowest = max(slowest, d)
			})
		}
		wg.Wait()
	}
	b.StopTimer()
	b.ReportMetric(float64(2*batch*b.N)/b.Elapsed().Seconds(), "items/s")
	b.ReportMetric(slowest.Seconds(), "slowest-batch-s")
	b.ReportMetric(0, "ns/op")
}
