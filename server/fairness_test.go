package server

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/svbench/svbench/env"
)

// heavyToy is toyEnv declared env.CostHeavy, whose Score takes d of (fake)
// time, as an E3 item executing tests in a sandbox takes seconds.
type heavyToy struct {
	toyEnv
	d time.Duration
}

func (heavyToy) ScoreCost() env.ScoreCost { return env.CostHeavy }

func (h heavyToy) Score(ctx context.Context, ex env.Example, r *env.Rollout, rubric string) (env.Score, error) {
	select {
	case <-time.After(h.d):
	case <-ctx.Done():
		return env.Score{}, ctx.Err()
	}
	return h.toyEnv.Score(ctx, ex, r, rubric)
}

// lightToy is toyEnv (light, declaring nothing) whose Score takes d.
type lightToy struct {
	toyEnv
	d time.Duration
}

func (l lightToy) Score(ctx context.Context, ex env.Example, r *env.Rollout, rubric string) (env.Score, error) {
	if l.d > 0 {
		select {
		case <-time.After(l.d):
		case <-ctx.Done():
			return env.Score{}, ctx.Err()
		}
	}
	return l.toyEnv.Score(ctx, ex, r, rubric)
}

const heavyItem = 5 * time.Second

// mixedRegistry serves a heavy environment and a light one.
func mixedRegistry(lightDelay time.Duration) *env.Registry {
	r := env.NewRegistry()
	r.Register(env.Spec{ID: "heavy", New: func(env.Options) (env.Environment, error) { return heavyToy{d: heavyItem}, nil }})
	r.Register(env.Spec{ID: "light", New: func(env.Options) (env.Environment, error) { return lightToy{d: lightDelay}, nil }})
	return r
}

func scoreBody(envID string, n int) string {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"env":%q,"example_id":"q0","completion":"{\"answer\":\"yes\"}"}`, envID)
	}
	return `{"items":[` + strings.Join(items, ",") + `]}`
}

// scrape reads /metrics into "name{labels}" → value.
func scrape(t *testing.T, ls *liveServer) map[string]float64 {
	t.Helper()
	resp, err := ls.client.Get(ls.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

func wantMetrics(t *testing.T, got map[string]float64, want map[string]float64) {
	t.Helper()
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
}

// TestLightNotQueuedBehindHeavy is the E3 storm: three concurrent batches
// of heavy items (5 s each) fill the heavy share of the workers, and a
// 1-item request of a light environment is answered at once instead of
// after a heavy item (on the shared pool this replaced: 15 s with two
// workers). /metrics shows the heavy queue meanwhile. The clock is
// synctest's, so every duration is exact.
func TestLightNotQueuedBehindHeavy(t *testing.T) {
	for _, tc := range []struct{ workers, heavyCap int }{{2, 1}, {4, 3}, {8, 6}} {
		t.Run(fmt.Sprintf("workers=%d", tc.workers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				// The storm takes up to a minute of fake time to drain.
				ls := startPipeServer(t, Config{Registry: mixedRegistry(0), Workers: tc.workers, Timeout: 5 * time.Minute, Logger: quietLog})
				const batches, perBatch = 3, 4
				var wg sync.WaitGroup
				for range batches {
					wg.Go(func() {
						if status, body := ls.do(t, "POST", "/v1/score", scoreBody("heavy", perBatch)); status != 200 || body["unscored"] != nil {
							t.Errorf("heavy batch: %d %v", status, body)
						}
					})
				}
				synctest.Wait() // every heavy item is running or queued
				wantMetrics(t, scrape(t, ls), map[string]float64{
					`svbench_scoring_workers`:                                    float64(tc.workers),
					`svbench_scoring_workers_limit{env="heavy",cost="heavy"}`:    float64(tc.heavyCap),
					`svbench_scoring_workers_limit{env="light",cost="light"}`:    float64(tc.workers),
					`svbench_scoring_running_items{env="heavy"}`:                 float64(tc.heavyCap),
					`svbench_scoring_queued_items{env="heavy"}`:                  float64(batches*perBatch - tc.heavyCap),
					`svbench_scoring_queued_items{env="light"}`:                  0,
					`svbench_scoring_wait_seconds_count{env="heavy"}`:            float64(tc.heavyCap),
					`svbench_scoring_wait_seconds_bucket{env="heavy",le="+Inf"}`: float64(tc.heavyCap),
				})

				start := time.Now()
				status, body := ls.do(t, "POST", "/v1/score", scoreBody("light", 1))
				took := time.Since(start)
				if status != 200 || body["results"].([]any)[0].(map[string]any)["error"] != nil {
					t.Fatalf("light request: %d %v", status, body)
				}
				if took != 0 {
					t.Errorf("light 1-item request took %s behind the heavy storm, want 0 (no wait for a heavy item)", took)
				}
				t.Logf("light 1-item request answered in %s while %d heavy items were queued", took, batches*perBatch-tc.heavyCap)

				wg.Wait()
				m := scrape(t, ls)
				wantMetrics(t, m, map[string]float64{
					`svbench_scoring_running_items{env="heavy"}`:            0,
					`svbench_scoring_queued_items{env="heavy"}`:             0,
					`svbench_scoring_wait_seconds_count{env="heavy"}`:       batches * perBatch,
					`svbench_scoring_wait_seconds_count{env="light"}`:       1,
					`svbench_scoring_wait_seconds_sum{env="light"}`:         0,
					`svbench_items_total{endpoint="/v1/score",env="heavy"}`: batches * perBatch,
				})
				// Heavy items ran heavyCap at a time, back to back: the
				// last waited for all rounds before its own.
				rounds := (batches*perBatch + tc.heavyCap - 1) / tc.heavyCap
				if d := time.Since(start); d != time.Duration(rounds)*heavyItem {
					t.Errorf("heavy storm drained in %s, want %d rounds of %s", d, rounds, heavyItem)
				}
			})
		})
	}
}

// TestHeavyNotStarvedByLight: the other direction. Four light batches keep
// every worker busy with 10 ms items; a heavy item arriving meanwhile gets
// the first worker that frees (its lane runs nothing, the light one all),
// not a place behind the light backlog.
func TestHeavyNotStarvedByLight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const lightItem = 10 * time.Millisecond
		ls := startPipeServer(t, Config{Registry: mixedRegistry(lightItem), Workers: 4, Logger: quietLog})
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				if status, body := ls.do(t, "POST", "/v1/score", scoreBody("light", 200)); status != 200 || body["unscored"] != nil {
					t.Errorf("light batch: %d %v", status, body)
				}
			})
		}
		synctest.Wait()
		wantMetrics(t, scrape(t, ls), map[string]float64{
			`svbench_scoring_running_items{env="light"}`: 4,
			`svbench_scoring_queued_items{env="light"}`:  4*200 - 4,
		})
		start := time.Now()
		if status, body := ls.do(t, "POST", "/v1/score", scoreBody("heavy", 1)); status != 200 {
			t.Fatalf("heavy request: %d %v", status, body)
		}
		if took := time.Since(start); took > lightItem+heavyItem {
			t.Errorf("heavy item took %s behind a light storm, want at most one light item (%s) + its own %s", took, lightItem, heavyItem)
		}
		wg.Wait()
	})
}

// TestMixedBatchNoHeadOfLine: within one request too, a light item after
// many heavy ones is scored at once, not after them.
func TestMixedBatchNoHeadOfLine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := env.NewRegistry()
		r.Register(env.Spec{ID: "heavy", New: func(env.Options) (env.Environment, error) { return heavyToy{d: heavyItem}, nil }})
		scored := make(chan time.Duration, 1)
		start := time.Now()
		r.Register(env.Spec{ID: "light", New: func(env.Options) (env.Environment, error) {
			return recordingToy{at: func() { scored <- time.Since(start) }}, nil
		}})
		ls := startPipeServer(t, Config{Registry: r, Workers: 2, Logger: quietLog})
		start = time.Now()
		body := strings.TrimSuffix(scoreBody("heavy", 3), "]}") + `,{"env":"light","example_id":"q0","completion":"x"}]}`
		if status, resp := ls.do(t, "POST", "/v1/score", body); status != 200 || resp["unscored"] != nil {
			t.Fatalf("%d %v", status, resp)
		}
		if at := <-scored; at != 0 {
			t.Errorf("light item of a mixed batch scored %s after the request started, want 0", at)
		}
	})
}

// recordingToy is toyEnv calling at when it scores.
type recordingToy struct {
	toyEnv
	at func()
}

func (r recordingToy) Score(ctx context.Context, ex env.Example, ro *env.Rollout, rubric string) (env.Score, error) {
	r.at()
	return r.toyEnv.Score(ctx, ex, ro, rubric)
}

// TestQueueSettlesOnCancel: items queued when their request ends (the
// client leaves) leave the queue gauges, and the workers they held go on
// to other requests.
func TestQueueSettlesOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ls := startPipeServer(t, Config{Registry: mixedRegistry(0), Workers: 2, Logger: quietLog})
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		go func() {
			req, _ := http.NewRequestWithContext(ctx, "POST", ls.URL+"/v1/score", strings.NewReader(scoreBody("heavy", 5)))
			if resp, err := ls.client.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
		synctest.Wait()
		wantMetrics(t, scrape(t, ls), map[string]float64{
			`svbench_scoring_running_items{env="heavy"}`: 1,
			`svbench_scoring_queued_items{env="heavy"}`:  4,
		})
		time.Sleep(3 * time.Second) // past the client's deadline
		synctest.Wait()
		wantMetrics(t, scrape(t, ls), map[string]float64{
			`svbench_scoring_running_items{env="heavy"}`: 0,
			`svbench_scoring_queued_items{env="heavy"}`:  0,
		})
		start := time.Now()
		if status, _ := ls.do(t, "POST", "/v1/score", scoreBody("heavy", 1)); status != 200 {
			t.Errorf("after cancel: %d", status)
		}
		if took := time.Since(start); took != heavyItem {
			t.Errorf("heavy item after a cancelled batch took %s, want %s (no worker leaked)", took, heavyItem)
		}
	})
}

// TestEnvWorkers: an operator's per-environment limit replaces the cost
// class's share; a name that is not served is refused at start-up.
func TestEnvWorkers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ls := startPipeServer(t, Config{Registry: mixedRegistry(0), Workers: 4, Logger: quietLog,
			EnvWorkers: map[string]int{"heavy": 1, "light": 9}})
		var wg sync.WaitGroup
		wg.Go(func() { ls.do(t, "POST", "/v1/score", scoreBody("heavy", 3)) })
		synctest.Wait()
		wantMetrics(t, scrape(t, ls), map[string]float64{
			`svbench_scoring_workers_limit{env="heavy",cost="heavy"}`: 1,
			`svbench_scoring_workers_limit{env="light",cost="light"}`: 4, // capped at Workers
			`svbench_scoring_running_items{env="heavy"}`:              1,
			`svbench_scoring_queued_items{env="heavy"}`:               2,
		})
		wg.Wait()
	})
	for name, limits := range map[string]map[string]int{
		"unknown":    {"e9": 1},
		"not served": {"light": 1},
		"zero":       {"heavy": 0},
	} {
		cfg := Config{Registry: mixedRegistry(0), Envs: []string{"heavy"}, EnvWorkers: limits, Logger: quietLog}
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: New accepted EnvWorkers %v", name, limits)
		}
	}
}

// TestDispatchFairShare drives the admission directly: with every lane
// backlogged, freed workers go to the lane running fewest, so two light
// lanes and a heavy one converge on equal shares.
func TestDispatchFairShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		a := newAdmission(6, []laneSpec{{env: "a"}, {env: "b"}, {env: "h", cost: env.CostHeavy}})
		if a.heavyCap != 5 {
			t.Fatalf("heavy cap with 6 workers = %d, want 5", a.heavyCap)
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		// Lane a takes every worker first, as a storm that arrived alone.
		ba := a.submit(a.lanes[0], 100)
		for range 6 {
			if err := a.acquire(ctx, ba); err != nil {
				t.Fatal(err)
			}
		}
		bb := a.submit(a.lanes[1], 100)
		bh := a.submit(a.lanes[2], 100)
		granted := make(chan string, 64)
		for range 6 {
			for _, b := range []*laneBatch{ba, bb, bh} {
				go func() {
					if a.acquire(ctx, b) == nil {
						granted <- b.l.env
					}
				}()
			}
		}
		synctest.Wait() // all 18 are waiting
		// Each release of an a item hands its worker to the lane running
		// fewest: b and h alternate until all three run 2.
		var order []string
		for range 4 {
			a.release(a.lanes[0])
			order = append(order, <-granted)
		}
		a.mu.Lock()
		got := []int{a.lanes[0].running, a.lanes[1].running, a.lanes[2].running}
		queued := []int{a.lanes[0].queued, a.lanes[1].queued, a.lanes[2].queued}
		a.mu.Unlock()
		if fmt.Sprint(got) != "[2 2 2]" || fmt.Sprint(order) != "[b h b h]" {
			t.Errorf("after 4 releases: running per lane %v, grants %v; want [2 2 2], [b h b h]", got, order)
		}
		if fmt.Sprint(queued) != "[94 98 98]" {
			t.Errorf("queued per lane %v, want [94 98 98]", queued)
		}
		cancel()
		synctest.Wait()
		for _, b := range []*laneBatch{ba, bb, bh} {
			a.finish(b)
		}
		a.mu.Lock()
		defer a.mu.Unlock()
		for _, l := range a.lanes {
			if l.queued != 0 || len(l.waiters) != 0 {
				t.Errorf("lane %s after cancel: %d queued, %d waiters", l.env, l.queued, len(l.waiters))
			}
		}
	})
}
