package codevuln

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svbench/svbench/envs/codevuln/taskset"
	"github.com/svbench/svbench/verify/sandbox"
)

// Suite names a test directory of a task.
type Suite string

// The two suites: visible behavioural tests and hidden security tests.
const (
	SuiteVisible Suite = "visible"
	SuiteHidden  Suite = "hidden"
)

// TestRun is the outcome of one suite on one candidate.
type TestRun struct {
	Passed   int    `json:"passed"`
	Total    int    `json:"total"`
	OK       bool   `json:"ok"`
	Killed   string `json:"killed,omitempty"`
	Stage    string `json:"stage,omitempty"` // "compile" when a Go build failed
	Output   string `json:"output,omitempty"`
	Duration time.Duration
}

// Fraction is Passed/Total, 0 for a suite with no tests.
func (r TestRun) Fraction() float64 {
	if r.Total == 0 {
		return 0
	}
	return float64(r.Passed) / float64(r.Total)
}

// Verifier executes tasks' tests and static analysis through a sandbox. It is
// safe for concurrent use.
type Verifier struct {
	sb     *sandbox.Sandbox
	py     *sandbox.Python
	gotc   *sandbox.Go
	pyErr  error
	goErr  error
	cache  string // GOCACHE shared by compile stages
	limits sandbox.Limits

	mu     sync.Mutex
	memo   map[string]*memoEntry
	order  []string
	static sync.Map // task id → []Finding of the original
}

type memoEntry struct {
	once sync.Once
	val  any
}

const memoCap = 2048

// memoize runs fn once per key across concurrent callers; results are kept
// for the verifier's lifetime (bounded, oldest dropped first). Every memoised
// function is deterministic in its key (task files and candidate contents)
// except for cancellation: a result computed under a cancelled ctx is
// returned to its callers but forgotten.
func (v *Verifier) memoize(ctx context.Context, key string, fn func() any) any {
	v.mu.Lock()
	e, ok := v.memo[key]
	if !ok {
		e = &memoEntry{}
		v.memo[key] = e
		v.order = append(v.order, key)
		if len(v.order) > memoCap {
			delete(v.memo, v.order[0])
			v.order = v.order[1:]
		}
	}
	v.mu.Unlock()
	e.once.Do(func() { e.val = fn() })
	if ctx.Err() != nil {
		v.mu.Lock()
		if v.memo[key] == e {
			delete(v.memo, key)
		}
		v.mu.Unlock()
	}
	return e.val
}

// forget drops every memoised result (benchmarks measure real work).
func (v *Verifier) forget() {
	v.mu.Lock()
	v.memo, v.order = map[string]*memoEntry{}, nil
	v.mu.Unlock()
}

// NewVerifier detects the toolchains and the sandbox. Missing toolchains are
// not an error here: a task of that language then fails to verify with the
// detection message, so a Python-only host can still score Python tasks.
func NewVerifier(ctx context.Context, sb *sandbox.Sandbox, cacheDir string, testTimeout time.Duration) (*Verifier, error) {
	if testTimeout <= 0 {
		testTimeout = 30 * time.Second
	}
	v := &Verifier{sb: sb, memo: map[string]*memoEntry{}, limits: sandbox.Limits{
		CPU: testTimeout, Wall: testTimeout, AddressSpace: 1536 << 20, Procs: 64,
		FileSize: 16 << 20, Output: 128 << 10,
	}}
	if py, err := sandbox.DetectPython(ctx); err == nil {
		v.py = &py
	} else {
		v.pyErr = err
	}
	if g, err := sandbox.DetectGo(ctx); err == nil {
		v.gotc = &g
	} else {
		v.goErr = err
	}
	if cacheDir == "" {
		base, err := os.UserCacheDir()
		if err != nil || os.Geteuid() == 0 {
			// Under root the sandbox runs as unprivileged uids, which
			// cannot traverse /root: keep the cache where they can.
			base = "/var/tmp"
		}
		cacheDir = filepath.Join(base, "svbench-e3-gocache")
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("e3: Go build cache %s: %w", cacheDir, err)
	}
	if err := sb.PrepareShared(cacheDir); err != nil {
		return nil, fmt.Errorf("e3: Go build cache %s: %w", cacheDir, err)
	}
	v.cache = cacheDir
	return v, nil
}

// Versions records toolchain and analyser versions for run metadata.
func (v *Verifier) Versions() map[string]string {
	out := map[string]string{"sandbox": string(v.sb.Mode()), "go-static": GoStaticVersion, "py-static": PyStaticVersion}
	if v.py != nil {
		out["python3"] = v.py.Version
		if v.py.Bandit != "" {
			out["bandit"] = v.py.Bandit
		} else {
			out["bandit"] = "absent"
		}
	}
	if v.gotc != nil {
		out["go"] = v.gotc.Version
	}
	// A missing toolchain is named where run metadata and `svbench envs`
	// show it; tasks of that language then fail to verify with this message.
	if v.pyErr != nil {
		out["python3"] = "missing: " + v.pyErr.Error()
	}
	if v.goErr != nil {
		out["go"] = "missing: " + v.goErr.Error()
	}
	return out
}

// Mode is the sandbox mode.
func (v *Verifier) Mode() sandbox.Mode { return v.sb.Mode() }

// Files is a candidate source tree: slash paths relative to src/.
type Files map[string][]byte

// Hash identifies a file tree by content.
func (f Files) Hash() string {
	keys := make([]string, 0, len(f))
	for k := range f {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	h := sha256.New()
	for _, k := range keys {
		fmt.Fprintf(h, "%s\x00%d\x00", k, len(f[k]))
		h.Write(f[k])
	}
	return hex.EncodeToString(h.Sum(nil)[:12])
}

// RunSuite runs one test suite of t on files (memoised per task, suite and
// content).
func (v *Verifier) RunSuite(ctx context.Context, t *taskset.Task, suite Suite, files Files) TestRun {
	key := "suite\x00" + t.ID + "\x00" + string(suite) + "\x00" + files.Hash()
	r := v.memoize(ctx, key, func() any { return v.runSuite(ctx, t, suite, files) }).(TestRun)
	return r
}

func (v *Verifier) runSuite(ctx context.Context, t *taskset.Task, suite Suite, files Files) TestRun {
	tests := t.Visible
	if suite == SuiteHidden {
		tests = t.Hidden
	}
	start := time.Now()
	var r TestRun
	switch t.Language {
	case taskset.Python:
		r = v.runPython(ctx, tests, files)
	case taskset.Go:
		r = v.runGo(ctx, tests, files)
	default:
		r = TestRun{Output: "unknown language " + t.Language}
	}
	r.Duration = time.Since(start)
	if len(r.Output) > 4000 {
		r.Output = r.Output[:2000] + "\n…\n" + r.Output[len(r.Output)-2000:]
	}
	return r
}

// writeTree materialises files under dir, refusing paths that leave it.
func writeTree(dir string, files map[string][]byte) error {
	for name, b := range files {
		clean := path.Clean(name)
		if !isLocalPath(clean) {
			return fmt.Errorf("file %q leaves the task directory", name)
		}
		p := filepath.Join(dir, filepath.FromSlash(clean))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func isLocalPath(p string) bool {
	return filepath.IsLocal(filepath.FromSlash(p)) && !strings.Contains(p, "\\")
}

// pyHarness runs a unittest module and reports its counts on a private file
// descriptor, tagged with a nonce read from stdin before any task code is
// imported: code under test that exits early (os._exit(0)) or prints a fake
// summary does not produce a valid result line.
const pyHarness = `import os, sys
def _svbench_main(mod, nonce=sys.stdin.readline().strip()):
    out = os.dup(1)
    sys.stdin.close()
    sys.path.insert(0, os.getcwd())
    import unittest
    try:
        suite = unittest.defaultTestLoader.loadTestsFromName(mod)
        r = unittest.TextTestRunner(stream=sys.stderr, verbosity=2).run(suite)
        line = "\nSVBENCH-RESULT %s %d %d %d %d\n" % (nonce, r.testsRun, len(r.failures), len(r.errors), len(r.skipped))
    except BaseException as e:
        sys.stderr.write("harness: %s: %s\n" % (type(e).__name__, e))
        line = "\nSVBENCH-RESULT %s 0 0 1 0\n" % nonce
    os.write(out, line.encode())
_svbench_main(sys.argv[1])
`

var (
	pyTestDef  = regexp.MustCompile(`(?m)^\s+def (test\w*)\s*\(`)
	pyResultRe = regexp.MustCompile(`SVBENCH-RESULT ([0-9a-f]+) (\d+) (\d+) (\d+) (\d+)`)
)

func nonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

func (v *Verifier) runPython(ctx context.Context, tests map[string][]byte, files Files) TestRun {
	if v.py == nil {
		return TestRun{Output: v.pyErr.Error()}
	}
	var mods []string
	expected := 0
	for name, b := range tests {
		if strings.HasPrefix(path.Base(name), "test_") && strings.HasSuffix(name, ".py") && !strings.Contains(name, "/") {
			mods = append(mods, strings.TrimSuffix(name, ".py"))
			expected += len(pyTestDef.FindAll(b, -1))
		}
	}
	sort.Strings(mods)
	if len(mods) == 0 || expected == 0 {
		return TestRun{Output: "task has no unittest test_*.py module in this suite"}
	}
	dir, cleanup, err := v.sb.NewScratch()
	if err != nil {
		return TestRun{Output: err.Error()}
	}
	defer cleanup()
	if err := writeTree(dir, files); err != nil {
		return TestRun{Output: err.Error()}
	}
	if err := writeTree(dir, tests); err != nil {
		return TestRun{Output: err.Error()}
	}
	total := TestRun{Total: expected, OK: true}
	var outs []string
	for _, m := range mods {
		n := nonce()
		res, err := v.sb.Run(ctx, sandbox.Spec{
			Argv:          []string{v.py.Exe, "-B", "-E", "-s", "-c", pyHarness, m},
			Dir:           dir,
			Env:           []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/tmp", "TMPDIR=/tmp", "PYTHONDONTWRITEBYTECODE=1", "PYTHONHASHSEED=0"},
			Stdin:         []byte(n + "\n"),
			Limits:        v.limits,
			ReadOnlyBinds: v.py.Binds(),
		})
		if err != nil {
			return TestRun{Total: expected, Output: err.Error()}
		}
		outs = append(outs, string(res.Stderr))
		if res.Killed != "" {
			total.Killed = res.Killed
		}
		var got []string
		for _, mm := range pyResultRe.FindAllStringSubmatch(string(res.Stdout), -1) {
			if mm[1] == n {
				got = mm
			}
		}
		if got == nil {
			total.OK = false
			continue
		}
		ran, _ := strconv.Atoi(got[2])
		fails, _ := strconv.Atoi(got[3])
		errs, _ := strconv.Atoi(got[4])
		skipped, _ := strconv.Atoi(got[5])
		total.Passed += max(0, ran-fails-errs-skipped)
		if fails+errs+skipped > 0 || res.ExitCode != 0 || res.Killed != "" {
			total.OK = false
		}
	}
	if total.Passed > total.Total {
		// More tests ran than the suite defines: the code under test
		// added some. Only the suite's own count is credited.
		total.Passed, total.OK = 0, false
	}
	if total.Passed != total.Total {
		total.OK = false
	}
	total.Output = strings.Join(outs, "\n")
	return total
}

// goTestNames lists the top-level Test functions of Go test files.
func goTestNames(tests map[string][]byte) ([]string, error) {
	var names []string
	fset := token.NewFileSet()
	for name, b := range tests {
		if !strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, b, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") && fd.Name.Name != "TestMain" {
				names = append(names, fd.Name.Name)
			}
		}
	}
	sort.Strings(names)
	return names, nil
}

// goEnv is the environment of both Go stages: no network, no proxy, no
// toolchain switching, no cgo (the compiler then never runs a C compiler),
// modules resolved from the standard library only.
func (v *Verifier) goEnv() []string {
	return []string{
		"PATH=" + filepath.Join(v.gotc.Root, "bin") + ":/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8",
		"GOROOT=" + v.gotc.Root, "GOCACHE=" + v.cache, "GOPATH=/tmp/gopath", "GOMODCACHE=/tmp/gopath/pkg/mod",
		"GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0", "GOTELEMETRY=off",
		"GOWORK=off", "GOENV=off",
	}
}

var goResultRe = regexp.MustCompile(`(?m)^--- (PASS|FAIL|SKIP): (Test\w*) `)

func (v *Verifier) runGo(ctx context.Context, tests map[string][]byte, files Files) TestRun {
	if v.gotc == nil {
		return TestRun{Output: v.goErr.Error()}
	}
	names, err := goTestNames(tests)
	if err != nil || len(names) == 0 {
		return TestRun{Output: fmt.Sprintf("task tests unreadable or empty: %v", err)}
	}
	dir, cleanup, err := v.sb.NewScratch()
	if err != nil {
		return TestRun{Output: err.Error()}
	}
	defer cleanup()
	// The module lives one level down: go refuses a go.mod at TMPDIR's root.
	mod := filepath.Join(dir, "mod")
	if err := writeTree(mod, files); err != nil {
		return TestRun{Output: err.Error()}
	}
	if err := writeTree(mod, tests); err != nil {
		return TestRun{Output: err.Error()}
	}
	if _, ok := files["go.mod"]; !ok {
		if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte(taskset.GoMod), 0o644); err != nil {
			return TestRun{Output: err.Error()}
		}
	}
	// Stage 1: compile with the shared cache. The compiler does not run the
	// code it compiles (cgo is off, go:generate is not run by go test), so
	// this stage is trusted with a writable cache.
	lim := v.limits
	lim.Wall, lim.CPU, lim.AddressSpace, lim.Procs, lim.FileSize = 180*time.Second, 180*time.Second, 4<<30, 512, 512<<20
	res, err := v.sb.Run(ctx, sandbox.Spec{
		Argv:          []string{filepath.Join(v.gotc.Root, "bin", "go"), "test", "-C", "mod", "-c", "-vet=off", "-o", "../t.bin", "."},
		Dir:           dir,
		Env:           v.goEnv(),
		Limits:        lim,
		ReadOnlyBinds: v.gotc.Binds(),
		WritableBinds: []string{v.cache},
	})
	if err != nil {
		return TestRun{Total: len(names), Stage: "compile", Output: err.Error()}
	}
	if !res.OK() {
		return TestRun{Total: len(names), Stage: "compile", Killed: res.Killed, Output: string(res.Stdout) + string(res.Stderr)}
	}
	// Stage 2: run the test binary without the cache, in the package
	// directory as `go test` does (tests may read testdata or sources).
	res, err = v.sb.Run(ctx, sandbox.Spec{
		Subdir: "mod",
		Argv:   []string{"../t.bin", "-test.v", "-test.count=1", "-test.timeout=" + (v.limits.Wall + time.Second).String()},
		Dir:    dir,
		Env:    []string{"PATH=/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8", "GOTRACEBACK=single"},
		Limits: v.limits,
	})
	if err != nil {
		return TestRun{Total: len(names), Output: err.Error()}
	}
	out := string(res.Stdout) + string(res.Stderr)
	status := map[string]string{}
	for _, m := range goResultRe.FindAllStringSubmatch(out, -1) {
		if s, seen := status[m[2]]; !seen || s == "PASS" {
			status[m[2]] = m[1]
		}
	}
	r := TestRun{Total: len(names), Killed: res.Killed, Output: out}
	for _, n := range names {
		if status[n] == "PASS" {
			r.Passed++
		}
	}
	// A binary that exits non-zero (a failing subtest, a panic, os.Exit)
	// invalidates the PASS lines it printed before.
	if res.ExitCode != 0 || res.Killed != "" {
		r.Passed = min(r.Passed, max(0, len(names)-1))
	}
	r.OK = res.OK() && r.Passed == r.Total && bytes.Contains(res.Stdout, []byte("\nPASS\n"))
	return r
}
