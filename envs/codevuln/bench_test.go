package codevuln

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// BenchmarkVerifyTasks measures full verifications (both suites, the
// analyses of the original, the fix and the candidate, API and size checks)
// with 2 workers against 1 worker in the same run; memoisation is cleared
// before each pass so every run executes. Go uses a warm build cache.
//
// python and go verify reference-fix answers (4 Go tasks). split verifies
// every task of the test split with the answer a good model gives: the
// reference fix with a line of its own added, so the candidate is neither
// the original nor the fix and all three trees are analysed. Its
// tasks/s-2workers is E3's speed on 2 cores (the goal is at least 1).
func BenchmarkVerifyTasks(b *testing.B) {
	e := testEnv(b)
	for _, lang := range []string{taskset.Python, taskset.Go, "split"} {
		var ts []*taskset.Task
		for _, t := range e.Tasks() {
			if (t.Language == lang || lang == "split") && t.Tested() {
				ts = append(ts, t)
			}
		}
		if lang == taskset.Go && len(ts) > 4 {
			ts = ts[:4]
		}
		if len(ts) == 0 {
			continue
		}
		answers := make([]string, len(ts))
		for i, t := range ts {
			answers[i] = refAnswer(t)
			if lang == "split" {
				answers[i] = ownedFixAnswer(t)
			}
		}
		pass := func(workers int) time.Duration {
			e.v.forget()
			start := time.Now()
			var wg sync.WaitGroup
			next := make(chan int)
			for range workers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range next {
						if ev := e.v.Evaluate(context.Background(), ts[i], answers[i]); !Solved(ev) {
							b.Errorf("%s: reference fix not solved", ts[i].ID)
						}
					}
				}()
			}
			for i := range ts {
				next <- i
			}
			close(next)
			wg.Wait()
			return time.Since(start)
		}
		b.Run(lang, func(b *testing.B) {
			pass(2) // warm caches (Go build cache, page cache)
			var one, two time.Duration
			for b.Loop() {
				one += pass(1)
				two += pass(2)
			}
			n := float64(len(ts) * b.N)
			b.ReportMetric(n/one.Seconds(), "tasks/s-1worker")
			b.ReportMetric(n/two.Seconds(), "tasks/s-2workers")
			b.ReportMetric(one.Seconds()/two.Seconds(), "x-speedup")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// ownedFixAnswer is the reference fix with a blank line appended to each
// file it changes: the same behaviour, a different candidate.
func ownedFixAnswer(t *taskset.Task) string {
	fix := Files(t.Fixed())
	cand := Files{}
	for k, v := range fix {
		cand[k] = v
	}
	for _, f := range t.Files {
		cand[f] = append(append([]byte{}, fix[f]...), '\n')
	}
	return answerMsg(ApplyableDiff(Files(t.Src), cand, t.Files), true, "Fix.").Content
}
