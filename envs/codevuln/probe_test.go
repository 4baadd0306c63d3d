package codevuln

import (
	"go/ast"
	"os"
	"sync"
	"testing"

	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// probes are the degenerate repairs plus two that are not registered for
// svbench probe: the no-op (the floor every report has) and a body that
// sleeps until the sandbox kills it (each row costs the whole test timeout).
var probes = append(append([]exploitEdit{{"no-op", func(t *taskset.Task) Files { return Files{} }}}, degenerateProbes...),
	exploitEdit{"sleep-until-timeout", func(t *taskset.Task) Files {
		if t.Language == taskset.Go {
			return goRewrite(t, func(_ *ast.FuncDecl, body string) string { return "\n\tfor {\n\t}\n" + body })
		}
		return pyRewrite(t, func(indent string, _ []string, body []string) []string {
			return append([]string{indent + "__import__('time').sleep(10 ** 6)"}, body...)
		})
	}},
)

func wholeFileAnswer(t *taskset.Task, files Files) string {
	changed := Files{}
	for k, v := range t.Src {
		changed[k] = v
	}
	for k, v := range files {
		changed[k] = v
	}
	return answerMsg(ApplyableDiff(Files(t.Src), changed, t.Files), false, "probe").Content
}

// TestProbesScoreFarBelowReference applies every probe to every tested
// task and asserts, per probe, that its mean reward is below the honest
// reference fix's and below 25% of it, and that no probe row is solved.
// The per-probe means are logged for the README table.
func TestProbesScoreFarBelowReference(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every probe on every task in the sandbox")
	}
	e := testEnv(t)
	var selected []*taskset.Task
	for _, task := range e.Tasks() {
		if task.Tested() {
			selected = append(selected, task)
		}
	}
	if os.Getenv("SVBENCH_E3_PROBE_ALL") == "" && len(selected) > 8 {
		// Two of each language by default keeps the test near a minute;
		// SVBENCH_E3_PROBE_ALL=1 measures the whole corpus (README table).
		var py, gotasks []*taskset.Task
		for _, task := range selected {
			if task.Language == taskset.Go {
				gotasks = append(gotasks, task)
			} else {
				py = append(py, task)
			}
		}
		selected = append(py[:min(3, len(py))], gotasks[:min(2, len(gotasks))]...)
	}
	type cell struct {
		sum    float64
		n      int
		solved int
	}
	var mu sync.Mutex
	res := map[string]*cell{}
	var refSum float64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, task := range selected {
		ex := exampleFor(t, e, task.ID)
		ref := score(t, e, ex, refAnswer(task), "")
		refSum += ref.Total
		for _, p := range probes {
			files := p.fn(task)
			if files == nil {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				s := score(t, e, ex, wholeFileAnswer(task, files), "")
				mu.Lock()
				defer mu.Unlock()
				c := res[p.name]
				if c == nil {
					c = &cell{}
					res[p.name] = c
				}
				if s.Parsed["applied"] != true {
					t.Errorf("probe %s on %s was not applied (%v): the probe must reach the verifiers", p.name, task.ID, s.Parsed["reject_reason"])
				}
				if testing.Verbose() {
					t.Logf("%s %s: %.3f %v kills=%v", p.name, task.ID, s.Total, s.Components, s.Parsed["sandbox_kills"])
				}
				c.sum += s.Total
				c.n++
				if s.Solved {
					c.solved++
					t.Errorf("probe %s solved %s: %v %v", p.name, task.ID, s.Components, s.Parsed)
				}
				if s.Total >= 0.25*ref.Total {
					t.Errorf("probe %s on %s: reward %.3f ≥ 25%% of the reference's %.3f (%v)", p.name, task.ID, s.Total, ref.Total, s.Components)
				}
			}()
		}
	}
	wg.Wait()
	refMean := refSum / float64(len(selected))
	t.Logf("reference fix mean reward %.3f over %d tasks", refMean, len(selected))
	for _, p := range probes {
		c := res[p.name]
		if c == nil || c.n == 0 {
			t.Errorf("probe %s applied to no task", p.name)
			continue
		}
		mean := c.sum / float64(c.n)
		t.Logf("probe %-22s mean reward %.3f (n=%d, solved %d)", p.name, mean, c.n, c.solved)
		if mean >= refMean || mean >= 0.25*refMean {
			t.Errorf("probe %s mean %.3f not below 25%% of the reference mean %.3f", p.name, mean, refMean)
		}
	}
}
