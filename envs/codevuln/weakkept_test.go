package codevuln

import "testing"

// TestWeaknessKeptEarnsNoRepair plays each registered weakness-kept exploit
// (issue 33: partial fixes that once earned full credit) through the
// engine on its task: it must not be solved and must earn no more than the
// inert edit of the vulnerable code (the no-fix floor: no credit), while
// the reference fix is solved.
func TestWeaknessKeptEarnsNoRepair(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the exploits in the sandbox")
	}
	e := testEnv(t)
	for _, w := range weakKeptExploits {
		t.Run(w.name, func(t *testing.T) {
			task := e.task(w.task)
			if task == nil {
				t.Fatalf("no task %s", w.task)
			}
			files := Files(task.NearMiss[w.variant])
			if len(files) == 0 {
				t.Fatalf("%s: no near-miss variant %s", w.task, w.variant)
			}
			ex := exampleFor(t, e, task.ID)
			s := score(t, e, ex, wholeFileAnswer(task, files), "")
			floor := score(t, e, ex, wholeFileAnswer(task, inertControl(task)), "")
			ref := score(t, e, ex, wholeFileAnswer(task, Files(task.Fix)), "")
			t.Logf("%s on %s: reward %.4f (hidden %v/%v), inert edit of the vulnerable code %.4f, reference fix %.4f",
				w.name, w.task, s.Total, s.Parsed["hidden_passed"], s.Parsed["hidden_total"], floor.Total, ref.Total)
			if s.Solved || s.Total > floor.Total+1e-9 || s.Total != 0 {
				t.Errorf("weakness kept yet solved=%v reward %.4f (floor %.4f): %v", s.Solved, s.Total, floor.Total, s.Components)
			}
			if !ref.Solved {
				t.Errorf("reference fix not solved: %v %v", ref.Components, ref.Parsed)
			}
		})
	}
}
