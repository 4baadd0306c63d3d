package runner

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
)

// countingClient answers every request and counts them.
type countingClient struct{ n atomic.Int64 }

func (c *countingClient) Chat(context.Context, llm.Request) (llm.Response, error) {
	c.n.Add(1)
	return llm.Response{Message: env.Message{Role: env.RoleAssistant, Content: "alpha"}}, nil
}

func TestEpisodesRefusesOverflowAndOversizedPlans(t *testing.T) {
	for _, tc := range []struct {
		name               string
		examples, rollouts int
		want               int
		wantErr            string
	}{
		{"small", 50, 4, 200, ""},
		{"at the cap", 1, MaxEpisodes, MaxEpisodes, ""},
		{"no examples", 0, math.MaxInt, 0, ""},
		// 50 × MaxInt64 wraps to -50 (the "-150 episodes" of the report).
		{"product overflows", 50, math.MaxInt, 0, "more than the 1000000 episodes"},
		{"both huge", math.MaxInt, math.MaxInt, 0, "more than the 1000000 episodes"},
		{"one past the cap", 2, MaxEpisodes/2 + 1, 0, "--shard i/n"},
		{"negative", -1, 3, 0, "cannot be negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Episodes(tc.examples, tc.rollouts)
			if tc.wantErr == "" {
				if err != nil || got != tc.want {
					t.Fatalf("Episodes(%d, %d) = %d, %v; want %d", tc.examples, tc.rollouts, got, err, tc.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Episodes(%d, %d) = %d, %v; want an error saying %q", tc.examples, tc.rollouts, got, err, tc.wantErr)
			}
		})
	}
}

// A plan past MaxEpisodes is refused before the run directory exists and
// before any model call: it used to be built in memory until the OOM
// killer ended it.
func TestRunRefusesOversizedPlanBeforeWriting(t *testing.T) {
	cl := &countingClient{}
	cfg := baseConfig(t, cl, 4)
	cfg.Rollouts = math.MaxInt
	out, err := Run(context.Background(), cfg)
	if !errors.Is(err, ErrTooManyEpisodes) || out != nil {
		t.Fatalf("Run = %+v, %v; want ErrTooManyEpisodes", out, err)
	}
	if _, serr := os.Stat(filepath.Join(cfg.OutDir, "evals")); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("a refused run left %s behind (%v)", filepath.Join(cfg.OutDir, "evals"), serr)
	}
	if n := cl.n.Load(); n != 0 {
		t.Errorf("%d model calls for a refused run", n)
	}
}

// An interrupt that arrives before the run starts leaves nothing behind and
// plays nothing.
func TestRunCancelledBeforeStartPlaysNothing(t *testing.T) {
	cl := &countingClient{}
	cfg := baseConfig(t, cl, 4)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out, err := Run(ctx, cfg)
	if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) || out != nil {
		t.Fatalf("Run = %+v, %v; want ErrInterrupted wrapping context.Canceled", out, err)
	}
	if _, serr := os.Stat(filepath.Join(cfg.OutDir, "evals")); !errors.Is(serr, os.ErrNotExist) {
		t.Errorf("a cancelled run left %s behind (%v)", filepath.Join(cfg.OutDir, "evals"), serr)
	}
	if n := cl.n.Load(); n != 0 {
		t.Errorf("%d model calls after the interrupt", n)
	}
}

// cancelAfter is a context that reports cancellation from its n-th Err
// call on: an interrupt arriving in the middle of planning, without a
// goroutine racing the loop.
type cancelAfter struct {
	context.Context
	calls, n int
}

func (c *cancelAfter) Err() error {
	c.calls++
	if c.calls >= c.n {
		return context.Canceled
	}
	return nil
}

func TestPlanJobsStopsWhenInterrupted(t *testing.T) {
	selected := make([]int, 100_000)
	for i := range selected {
		selected[i] = i
	}
	ctx := &cancelAfter{Context: context.Background(), n: 3}
	jobs, err := planJobs(ctx, selected, 10, nil)
	if !errors.Is(err, ErrInterrupted) || !errors.Is(err, context.Canceled) || jobs != nil {
		t.Fatalf("planJobs = %d jobs, %v; want the interrupt", len(jobs), err)
	}
	if ctx.calls != 3 {
		t.Errorf("planning checked the context %d times; want it to stop at the check that saw the interrupt (3)", ctx.calls)
	}
	// Uncancelled, the same plan is every pair not done.
	all, err := planJobs(context.Background(), selected[:3], 2, nil)
	if err != nil || len(all) != 6 || all[5] != (job{2, 1}) {
		t.Fatalf("planJobs = %v, %v", all, err)
	}
}

func TestPlannedExamplesIsWhatRunSelects(t *testing.T) {
	for _, rows := range []int{0, 1, 7, 10} {
		for _, n := range []int{0, 3, 10, 12} {
			for _, sh := range []Shard{{}, {0, 3}, {2, 3}, {5, 6}} {
				want := len(selectExamples(rows, n, 1, sh, slog.New(slog.NewTextHandler(io.Discard, nil))))
				if got := PlannedExamples(rows, n, sh); got != want {
					t.Errorf("PlannedExamples(%d, %d, %v) = %d, selectExamples picks %d", rows, n, sh, got, want)
				}
			}
		}
	}
}
