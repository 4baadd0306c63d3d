package codevuln

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// BenchmarkVerifyTasks measures full verifications (both suites, three
// analyses, API and size checks) of reference-fix answers, per language,
// with 2 workers against 1 worker in the same run; memoisation is cleared
// before each pass so every run executes. Go uses a warm build cache.
func BenchmarkVerifyTasks(b *testing.B) {
	e := testEnv(b)
	for _, lang := range []string{taskset.Python, taskset.Go} {
		var ts []*taskset.Task
		for _, t := range e.Tasks() {
			if t.Language == lang && t.Tested() {
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
