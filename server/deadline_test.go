package server

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/svbench/svbench/env"
)

// deafToy is toyEnv whose scoring of the completion "DEAF" ignores its
// context and runs until release is closed, as a verifier deep in a
// hostile file does (HCL's evaluator takes no context).
type deafToy struct {
	toyEnv
	release <-chan struct{}
}

func (d deafToy) Score(ctx context.Context, ex env.Example, r *env.Rollout, rubric string) (env.Score, error) {
	if r.FinalText() == "DEAF" {
		<-d.release
	}
	return d.toyEnv.Score(ctx, ex, r, rubric)
}

// TestDeadlineAnswerDespiteDeafScorer: an item whose scoring outlives the
// request's deadline and does not stop when asked is reported unscored in
// a 200 answer sent before the deadline, with the other items' results;
// before, the handler waited for it and the client got a 504 or nothing.
// /get_reward answers 200 before the deadline too, the query failed. The stuck scorer keeps its worker until it returns, then hands
// it on.
func TestDeadlineAnswerDespiteDeafScorer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		release := make(chan struct{})
		r := env.NewRegistry()
		r.Register(env.Spec{ID: "toy", New: func(env.Options) (env.Environment, error) { return deafToy{release: release}, nil }})
		const timeout = 2 * time.Second
		ls := startPipeServer(t, Config{Registry: r, Workers: 2, Timeout: timeout, Logger: quietLog})

		start := time.Now()
		status, body := ls.do(t, "POST", "/v1/score", `{"items":[
			{"env":"toy","example_id":"q0","completion":"{\"answer\":\"yes\"}"},
			{"env":"toy","example_id":"q0","completion":"DEAF"}]}`)
		if status != http.StatusOK || body["unscored"] != float64(1) {
			t.Fatalf("/v1/score: %d %v, want 200 with one item unscored", status, body)
		}
		if d := time.Since(start); d >= timeout {
			t.Errorf("answered after %s, want before the %s deadline", d, timeout)
		}
		results := body["results"].([]any)
		if m := results[0].(map[string]any); m["error"] != nil || m["reward"] != 1.1 {
			t.Errorf("finished item: %v, want its result", m)
		}
		if e, _ := results[1].(map[string]any)["error"].(map[string]any); e == nil || e["code"] != CodeTimeout {
			t.Errorf("stuck item: %v, want a timeout error", results[1])
		}

		status, body = ls.do(t, "POST", "/get_reward", map[string]any{
			"query": []string{"DEAF"}, "prompts": []string{""}, "labels": []string{"q0"}})
		// OpenRLHF's client re-sends any non-2xx five times (re-scoring the
		// batch) and then drops the reward: the answer is a 200 whose
		// query failed with a timeout, reward 0 and svbench_error 1.
		if status != http.StatusOK || body["unscored"] != float64(1) {
			t.Fatalf("/get_reward: %d %v, want 200 with one query unscored", status, body)
		}
		if errs := body["errors"].([]any); !strings.HasPrefix(errs[0].(string), CodeTimeout) {
			t.Errorf("/get_reward error %q, want a timeout", errs[0])
		}
		if logs := body["extra_logs"].(map[string]any); logs["svbench_error"].([]any)[0] != 1.0 || body["rewards"].([]any)[0] != 0.0 {
			t.Errorf("/get_reward unscored query: rewards %v, svbench_error %v", body["rewards"], logs["svbench_error"])
		}

		synctest.Wait()
		wantMetrics(t, scrape(t, ls), map[string]float64{`svbench_scoring_running_items{env="toy"}`: 2})
		close(release)
		synctest.Wait()
		wantMetrics(t, scrape(t, ls), map[string]float64{`svbench_scoring_running_items{env="toy"}`: 0})
	})
}
