package server

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
)

// gauge counts the heavy jobs running at once and the most there ever were.
type gauge struct {
	mu        sync.Mutex
	now, peak int
	jobs      int
}

// job records one heavy job that runs for d (of synctest's fake time).
func (g *gauge) job(d time.Duration) {
	g.mu.Lock()
	g.now++
	g.jobs++
	g.peak = max(g.peak, g.now)
	g.mu.Unlock()
	time.Sleep(d)
	g.mu.Lock()
	g.now--
	g.mu.Unlock()
}

func (g *gauge) read() (peak, jobs int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.peak, g.jobs
}

// gaugeToy is toyEnv whose tool calls and scoring are heavy jobs (one
// second each, as a sandboxed test run takes), recorded on a gauge.
type gaugeToy struct {
	toyEnv
	g *gauge
}

type gaugeEpisode struct {
	*toyEpisode
	g *gauge
}

func (e gaugeToy) Start(ctx context.Context, ex env.Example) (env.Episode, error) {
	ep, err := e.toyEnv.Start(ctx, ex)
	if err != nil {
		return nil, err
	}
	return gaugeEpisode{toyEpisode: ep.(*toyEpisode), g: e.g}, nil
}

func (ep gaugeEpisode) Step(ctx context.Context, m env.Message) (env.StepResult, error) {
	if len(m.ToolCalls) > 0 {
		ep.g.job(time.Second)
	}
	return ep.toyEpisode.Step(ctx, m)
}

func (e gaugeToy) Score(ctx context.Context, ex env.Example, r *env.Rollout, rubric string) (env.Score, error) {
	e.g.job(time.Second)
	return e.toyEnv.Score(ctx, ex, r, rubric)
}

// toolModel calls the lookup tool twice, then answers. Each call takes
// think of fake time, or waits for hold to close when hold is set.
type toolModel struct {
	think time.Duration
	hold  <-chan struct{}
}

func (m toolModel) Chat(ctx context.Context, req llm.Request) (llm.Response, error) {
	if m.hold != nil {
		select {
		case <-m.hold:
		case <-ctx.Done():
			return llm.Response{}, ctx.Err()
		}
	}
	time.Sleep(m.think)
	calls := 0
	for _, msg := range req.Messages {
		if msg.Role == env.RoleTool {
			calls++
		}
	}
	if calls < 2 {
		return llm.Response{Message: env.Message{Role: env.RoleAssistant, ToolCalls: []env.ToolCall{
			{ID: fmt.Sprint("call_", calls), Name: "lookup", Arguments: `{"q":"even"}`}}}}, nil
	}
	return llm.Response{Message: env.Message{Role: env.RoleAssistant, Content: `{"answer": "yes"}`}}, nil
}

func gaugeServer(t *testing.T, workers int, g *gauge, model func(n int) llm.Client) *liveServer {
	r := env.NewRegistry()
	r.Register(env.Spec{ID: "toy", New: func(env.Options) (env.Environment, error) { return gaugeToy{g: g}, nil }})
	var mu sync.Mutex
	n := 0
	return startPipeServer(t, Config{Registry: r, Workers: workers, Logger: quietLog,
		ModelClient: func(string, string, *http.Client) (llm.Client, error) {
			mu.Lock()
			defer mu.Unlock()
			n++
			return model(n), nil
		}})
}

func rolloutBody() map[string]any {
	return map[string]any{"env": "toy", "example_id": "q0", "base_url": "http://127.0.0.1:8000/v1", "model": "policy"}
}

// TestRolloutsShareTheWorkers: eight concurrent rollouts, each with two
// tool calls and a final scoring that are heavy jobs, never run more of
// them at once than --workers (before, rollouts ran outside the scoring
// queues: all eight at once), and every job is done.
func TestRolloutsShareTheWorkers(t *testing.T) {
	for _, workers := range []int{1, 2} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				g := &gauge{}
				ls := gaugeServer(t, workers, g, func(int) llm.Client { return toolModel{think: 100 * time.Millisecond} })
				const rollouts = 8
				var wg sync.WaitGroup
				for range rollouts {
					wg.Go(func() {
						if status, body := ls.do(t, "POST", "/v1/rollout", rolloutBody()); status != 200 || body["score"] == nil {
							t.Errorf("rollout: %d %v", status, body)
						}
					})
				}
				wg.Wait()
				peak, jobs := g.read()
				if jobs != rollouts*3 {
					t.Errorf("%d heavy jobs ran, want %d (two tool calls and a scoring per rollout)", jobs, rollouts*3)
				}
				if peak != workers {
					t.Errorf("at most %d heavy jobs ran at once, want exactly --workers = %d", peak, workers)
				}
			})
		})
	}
}

// TestRolloutModelCallHoldsNoWorker: with one worker, a rollout whose
// model never answers (until released) does not keep another rollout from
// running its tool calls and being scored.
func TestRolloutModelCallHoldsNoWorker(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := &gauge{}
		hold := make(chan struct{})
		ls := gaugeServer(t, 1, g, func(n int) llm.Client {
			if n == 1 {
				return toolModel{hold: hold}
			}
			return toolModel{}
		})
		stuck := make(chan int, 1)
		go func() {
			status, _ := ls.do(t, "POST", "/v1/rollout", rolloutBody())
			stuck <- status
		}()
		synctest.Wait() // the first rollout waits on its model
		if status, body := ls.do(t, "POST", "/v1/rollout", rolloutBody()); status != 200 || body["score"] == nil {
			t.Fatalf("second rollout while the first waits on its model: %d %v", status, body)
		}
		close(hold)
		if status := <-stuck; status != 200 {
			t.Errorf("first rollout: %d", status)
		}
		if _, jobs := g.read(); jobs != 6 {
			t.Errorf("%d heavy jobs, want 6", jobs)
		}
	})
}
