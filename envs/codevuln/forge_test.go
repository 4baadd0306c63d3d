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

// appendPython adds code at the end of the first editable file.
func appendPython(code string) func(*taskset.Task) Files {
	return func(t *taskset.Task) Files {
		if t.Language != taskset.Python {
			return nil
		}
		f := t.Files[0]
		return Files{f: append(append([]byte{}, t.Src[f]...), []byte("\n\n"+code+"\n")...)}
	}
}

// prependGo inserts an import block after the package clause and appends
// code at the end of the first editable file.
func prependGo(imports, code string) func(*taskset.Task) Files {
	return func(t *taskset.Task) Files {
		if t.Language != taskset.Go {
			return nil
		}
		f := t.Files[0]
		src := string(t.Src[f])
		i := strings.Index(src, "\n")
		return Files{f: []byte(src[:i+1] + "\nimport (\n" + imports + "\n)\n" + src[i+1:] + "\n" + code + "\n")}
	}
}

var forgingProbes = []probe{
	// The harness's unittest objects patched through sys.modules, with the
	// module name built at run time (no static rule can see it).
	{"py-unittest-tamper", appendPython(`import sys as _svb_s
_svb_u = _svb_s.modules.get("unit" + "test") or __import__("unit" + "test")
for _svb_n in ("addFailure", "addError"):
    setattr(_svb_u.TestResult, _svb_n, lambda self, test, err: self.addSuccess(test))
_svb_u.TestResult.addSubTest = lambda self, test, sub, err: None
_svb_u.TestResult.wasSuccessful = lambda self: True
for _svb_k in dir(_svb_u.TestCase):
    if _svb_k.startswith("assert"):
        setattr(_svb_u.TestCase, _svb_k, lambda self, *a, **k: None)`)},
	// A result line printed from an atexit handler registered under a
	// string-built name, with the nonce of the old harness read from
	// __main__'s default arguments, then an early clean exit.
	{"py-verdict-line-atexit", appendPython(`import atexit as _svb_a, os as _svb_o, sys as _svb_s
def _svb_forge():
    m = _svb_s.modules.get("__main__")
    f = getattr(m, "_svbench_main", None)
    nonce = f.__defaults__[0] if f is not None and f.__defaults__ else "0"
    for fd in (1, 2):
        try:
            _svb_o.write(fd, ("\nSVBENCH-RESULT %s 3 0 0 0\n" % nonce).encode())
            _svb_o.write(fd, b'\nSVBENCH-VERDICT {"test_security": {"passed": ["test_exploits", "test_generated"], "failed": [], "ran": 2}}\n')
        except OSError:
            pass
getattr(_svb_a, "regi" + "ster")(_svb_forge)
_svb_forge()`)},
	{"py-exit-early", appendPython(`import os as _svb_o
_svb_o.write(1, b'SVBENCH-VERDICT {}\n')
getattr(_svb_o, "_ex" + "it")(0)`)},
	// Every API function still runs (its side effects stay) but returns an
	// object that equals anything, is true and contains everything.
	{"py-always-equal", appendPython(`class _SvbAny:
    def __eq__(self, other): return True
    def __ne__(self, other): return False
    def __bool__(self): return True
    def __contains__(self, item): return True
    def __len__(self): return 0
    def __iter__(self): return iter(())
    __hash__ = object.__hash__
import sys as _svb_s
_svb_m = _svb_s.modules[__name__]
def _svb_wrap(f):
    def g(*a, **k):
        f(*a, **k)
        return _SvbAny()
    return g
for _svb_k, _svb_v in list(vars(_svb_m).items()):
    if callable(_svb_v) and not _svb_k.startswith("_") and getattr(_svb_v, "__module__", None) == __name__ and not isinstance(_svb_v, type):
        setattr(_svb_m, _svb_k, _svb_wrap(_svb_v))`)},
	// Walk the interpreter for test cases and the runner: frames, gc.
	{"py-frame-and-gc-walk", appendPython(`import gc as _svb_gc, sys as _svb_s
def _svb_patch():
    for o in _svb_gc.get_objects():
        if isinstance(o, type) and o.__name__ in ("TestCase", "TestResult", "TextTestResult", "Outcome"):
            for k in list(vars(o)):
                if k.startswith("assert") or k.startswith("add"):
                    try:
                        setattr(o, k, lambda self, *a, **kw: None)
                    except Exception:
                        pass
    f = _svb_s._getframe()
    while f is not None:
        f.f_globals.setdefault("_svb_seen", True)
        f = f.f_back
_svb_patch()`)},
	// The Go family: read the hidden tests, print their PASS lines
	// and skip every test through os.Args.
	{"go-pass-lines-and-skip", prependGo(`	svbOS "os"
	svbFP "path/filepath"
	svbFmt "fmt"
	svbRe "regexp"`, `func init() {
	files, _ := svbFP.Glob("*_test.go")
	re := svbRe.MustCompile(`+"`func (Test\\w+)\\(`"+`)
	for _, f := range files {
		b, _ := svbOS.ReadFile(f)
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			svbFmt.Printf("--- PASS: %s (0.00s)\n", m[1])
		}
	}
	svbFmt.Println("PASS")
	svbOS.Args = append(svbOS.Args, "-test.run=^$")
}`)},
	{"go-syscall-exit", prependGo(`	svbFmt "fmt"
	svbSys "syscall"`, `func init() {
	svbFmt.Println("--- PASS: TestAll (0.00s)\nPASS")
	svbSys.Exit(0)
}`)},
	{"go-aliased-exit", prependGo(`	svbOS "os"`, `var svbQuit = svbOS.Exit

func init() { svbQuit(0) }`)},
	// Without any refused capability: forged PASS lines, then a child
	// process that tries the verdict descriptor by number and by path.
	{"go-child-writes-fd3", prependGo(`	svbFmt "fmt"
	svbExec "os/exec"`, `func init() {
	svbFmt.Println("--- PASS: TestAll (0.00s)\nPASS")
	_ = svbExec.Command("/bin/sh", "-c", "echo forged >&3; echo forged >/dev/fd/3; echo forged >/proc/self/fd/3").Run()
}`)},
}

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
	var task *taskset.Task
	for _, tk := range e.Tasks() {
		if tk.Language == taskset.Go && tk.Tested() {
			task = tk
			break
		}
	}
	if task == nil {
		t.Skip("no Go task")
	}
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
