package configaudit

import (
	"context"
	"sync"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/runner"
)

var (
	sharedOnce sync.Once
	sharedEnv  *Env
	sharedDS   *env.Dataset
	sharedErr  error
)

// testEnv shares one environment (trivy's checks take a second to compile)
// and the embedded mini set across tests.
func testEnv(t testing.TB) (*Env, *env.Dataset) {
	t.Helper()
	sharedOnce.Do(func() {
		sharedEnv, sharedErr = NewEnv(env.Options{})
		if sharedErr != nil {
			return
		}
		sharedDS, sharedErr = sharedEnv.Load(context.Background(), "")
	})
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return sharedEnv, sharedDS
}

// runPolicy plays one built-in policy on an example and scores it.
func runPolicy(t testing.TB, e *Env, ex env.Example, policy, rubric string) (env.Score, *env.Rollout) {
	t.Helper()
	p, ok := e.Policy(policy)
	if !ok {
		t.Fatalf("no policy %s", policy)
	}
	ro, err := runner.RunEpisode(context.Background(), llm.Builtin{Policy: p}, e, ex, runner.EpisodeConfig{})
	if err != nil {
		t.Fatalf("%s on %s: %v", policy, ex.ID, err)
	}
	s, err := e.Score(context.Background(), ex, ro, rubric)
	if err != nil {
		t.Fatalf("score %s: %v", ex.ID, err)
	}
	return s, ro
}

// TestInfoWhileTheFirstEpisodeStarts: a server lists the environment while
// another request's episode builds the scanners (the first sessions of a
// trainer arrive together); under -race the unsynchronised read of the
// verifiers in Info was reported. Info then names the scanners' versions.
func TestInfoWhileTheFirstEpisodeStarts(t *testing.T) {
	_, ds := testEnv(t)
	e, err := NewEnv(env.Options{})
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		// Reads until the episode has started, and once more after: the
		// read that follows the scanners' construction is the one that raced.
		for {
			select {
			case <-started:
				_ = e.Info()
				return
			default:
				_ = e.Info()
			}
		}
	}()
	go func() {
		defer wg.Done()
		defer close(started)
		if _, err := e.Start(context.Background(), ds.Examples[0]); err != nil {
			t.Error(err)
		}
	}()
	wg.Wait()
	if len(e.Info().Verifiers) == 0 {
		t.Error("Info after the first episode names no verifier versions")
	}
}

// shareVerifiers hands e the shared environment's scanners, built if no
// test has built them yet (trivy's checks take a second to compile), so a
// test run alone sees the same scanners as the whole package.
func shareVerifiers(t testing.TB, e, shared *Env) {
	t.Helper()
	v, err := shared.verifiers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e.once.Do(func() { e.v = v; e.built.Store(v) })
}
