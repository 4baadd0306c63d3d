package codevuln

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// Verdict forging: code that leaves the vulnerability in place and instead
// attacks the machinery that decides whether tests passed. Each family is
// kept as a probe; see "Threat model" in README.md for why none can work.

// inertControl is a substantive edit that changes no behaviour: the bound a
// forging probe is held to (forging must buy nothing over it).
func inertControl(t *taskset.Task) Files {
	f := t.Files[0]
	src := append([]byte{}, t.Src[f]...)
	if t.Language == taskset.Go {
		return Files{f: append(src, []byte("\nfunc svbenchInert() {}\n")...)}
	}
	return Files{f: append(src, []byte("\n\ndef _svbench_inert():\n    return None\n")...)}
}

// TestForgingFamiliesEarnNothing: no forging probe is solved, none passes a
// hidden test the unchanged vulnerable code does not, and none scores above
// an inert edit of the same code. Three tasks per language by default,
// every task with SVBENCH_E3_PROBE_ALL=1.
func TestForgingFamiliesEarnNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the forging probes in the sandbox")
	}
	e := testEnv(t)
	var selected []*taskset.Task
	perLang := map[string]int{}
	for _, task := range e.Tasks() {
		if !task.Tested() {
			continue
		}
		if os.Getenv("SVBENCH_E3_PROBE_ALL") == "" && perLang[task.Language] >= 3 {
			continue
		}
		perLang[task.Language]++
		selected = append(selected, task)
	}
	sums := map[string]float64{}
	counts := map[string]int{}
	for _, task := range selected {
		ex := exampleFor(t, e, task.ID)
		control := score(t, e, ex, wholeFileAnswer(task, inertControl(task)), "")
		if control.Parsed["sandbox_kills"] != nil {
			// A control killed by a limit (a loaded machine) is no bound.
			t.Logf("%s: inert control was killed (%v); comparing with solved only", task.ID, control.Parsed["sandbox_kills"])
			control.Total = 1
			control.Parsed["hidden_passed"] = control.Parsed["hidden_total"]
		}
		for _, p := range forgingProbes {
			files := p.fn(task)
			if files == nil {
				continue
			}
			t.Run(p.name+"/"+task.ID, func(t *testing.T) {
				s := score(t, e, ex, wholeFileAnswer(task, files), "")
				sums[p.name] += s.Total
				counts[p.name]++
				if s.Solved {
					t.Errorf("forging probe solved the task: %v %v", s.Components, s.Parsed)
				}
				if s.Total > control.Total+1e-9 {
					t.Errorf("reward %.3f above the inert edit's %.3f: %v", s.Total, control.Total, s.Components)
				}
				if s.Parsed["hidden_passed"] != control.Parsed["hidden_passed"] && toFloat(s.Parsed["hidden_passed"]) > toFloat(control.Parsed["hidden_passed"]) {
					t.Errorf("hidden tests passed %v, the vulnerable code passes %v", s.Parsed["hidden_passed"], control.Parsed["hidden_passed"])
				}
			})
		}
	}
	for _, p := range forgingProbes {
		if counts[p.name] == 0 && (strings.HasPrefix(p.name, "c-") || strings.HasPrefix(p.name, "js-")) {
			continue // programs' families: no embedded task is one; TestCWEvalImported runs them
		}
		if counts[p.name] == 0 {
			t.Errorf("probe %s ran on no task", p.name)
			continue
		}
		t.Logf("forging probe %-24s mean reward %.3f over %d tasks", p.name, sums[p.name]/float64(counts[p.name]), counts[p.name])
	}
}

func toFloat(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

// TestGoRuntimeWallsHoldWithoutTheCapabilityCheck switches the static
// capability check off and runs the Go probes it would refuse: the verdict
// channel alone must still refuse them (defence in depth).
func TestGoRuntimeWallsHoldWithoutTheCapabilityCheck(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and runs Go tasks in the sandbox")
	}
	e := testEnv(t)
	v, err := NewVerifier(context.Background(), e.sb, "", e.v.limits.Wall)
	if err != nil {
		t.Fatal(err)
	}
	v.allowAnyCapability = true
	task := firstTestedTask(t, e, taskset.Go)
	for _, p := range forgingProbes {
		files := p.fn(task)
		if files == nil {
			continue
		}
		t.Run(p.name, func(t *testing.T) {
			cand := Files{}
			for k, b := range task.Src {
				cand[k] = b
			}
			for k, b := range files {
				cand[k] = b
			}
			r := v.RunSuite(context.Background(), task, SuiteHidden, cand)
			orig := v.RunSuite(context.Background(), task, SuiteHidden, Files(task.Src))
			if r.Stage == "policy" {
				t.Fatalf("capability check ran although switched off: %s", r.Output)
			}
			if r.OK || r.Passed > orig.Passed {
				t.Errorf("hidden suite %d/%d ok=%v (vulnerable code: %d/%d):\n%s", r.Passed, r.Total, r.OK, orig.Passed, orig.Total, r.Output)
			}
		})
	}
}

// TestCodeUnderTestSeesNothingOfSvbench: a correct fix that breaks itself
// when it sees a canary from svbench's environment, any test source or the
// runner scores exactly like the plain fix.
func TestCodeUnderTestSeesNothingOfSvbench(t *testing.T) {
	if testing.Short() {
		t.Skip("runs tasks in the sandbox")
	}
	const canary = "CANARY-e3-5b9c"
	t.Setenv("OPENAI_API_KEY", canary)
	t.Setenv("SVBENCH_TOKEN", canary)
	e := testEnv(t)
	pyProbe := `
import os as _svb_o
def _svb_seen():
    found = [k for k, v in _svb_o.environ.items() if "CANARY" in v or "CANARY" in k]
    for p in ("/proc/1/environ", "/proc/self/environ", "/proc/1/cmdline"):
        try:
            if b"CANARY" in open(p, "rb").read():
                found.append(p)
        except OSError:
            pass
    for root, dirs, files in _svb_o.walk("/") if hasattr(_svb_o, "walk") else _svb_o.walk("/"):
        if root in ("/usr", "/proc", "/sys", "/dev") or root.startswith(("/usr/", "/proc/", "/sys/")):
            dirs[:] = []
            continue
        for f in files:
            if f.startswith("test_") or f.endswith("_test.go") or f in ("svbench_runner.py", "svbrpc.py", "svbench_trusted.py"):
                found.append(_svb_o.path.join(root, f))
    return found
if _svb_seen():
    raise RuntimeError("saw svbench: %r" % _svb_seen())`
	goProbe := `func init() {
	var found []string
	for _, kv := range svbOS.Environ() {
		if svbStrings.Contains(kv, "CANARY") {
			found = append(found, kv)
		}
	}
	for _, p := range []string{"/proc/1/environ", "/proc/self/environ", "/proc/1/cmdline"} {
		if b, err := svbOS.ReadFile(p); err == nil && svbStrings.Contains(string(b), "CANARY") {
			found = append(found, p)
		}
	}
	_ = svbFP.WalkDir("/", func(p string, d svbFS.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && (p == "/usr" || p == "/proc" || p == "/sys" || p == "/dev") {
			return svbFP.SkipDir
		}
		n := d.Name()
		if svbStrings.HasSuffix(n, "_test.go") || svbStrings.HasPrefix(n, "test_") || n == "trust.go" {
			found = append(found, p)
		}
		return nil
	})
	if len(found) > 0 {
		panic(found)
	}
}`
	for _, lang := range []string{taskset.Python, taskset.Go} {
		var task *taskset.Task
		for _, tk := range e.Tasks() {
			if tk.Language == lang && tk.Tested() {
				task = tk
				break
			}
		}
		if task == nil {
			t.Fatalf("no %s task", lang)
		}
		f := task.Files[0]
		fixed := task.Fixed()
		var probe Files
		if lang == taskset.Python {
			probe = Files{f: append(append([]byte{}, fixed[f]...), []byte("\n"+pyProbe+"\n")...)}
		} else {
			src := string(fixed[f])
			i := strings.Index(src, "\n")
			probe = Files{f: []byte(src[:i+1] + "\nimport (\n\tsvbOS \"os\"\n\tsvbFP \"path/filepath\"\n\tsvbFS \"io/fs\"\n\tsvbStrings \"strings\"\n)\n" + src[i+1:] + "\n" + goProbe + "\n")}
		}
		ex := exampleFor(t, e, task.ID)
		plain := score(t, e, ex, refAnswer(task), "")
		seen := score(t, e, ex, wholeFileAnswer(task, probe), "")
		if !plain.Solved || seen.Solved != plain.Solved || seen.Components["security"] != plain.Components["security"] || seen.Components["behaviour"] != plain.Components["behaviour"] {
			r := e.v.RunSuite(context.Background(), task, SuiteHidden, probe)
			t.Errorf("%s: the canary fix scores %v (solved %v), the plain fix %v (solved %v); hidden suite output:\n%s",
				task.ID, seen.Components, seen.Solved, plain.Components, plain.Solved, r.Output)
		}
	}
}
