package codevuln

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svbench/svbench/envs/codevuln/pyrunner"
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
	// allowAnyCapability switches goCapabilityViolations off, so tests can
	// show the runtime walls hold on their own.
	allowAnyCapability bool
	// staticOutput bounds what the Python analysers may print for a batch;
	// tests lower it to overflow a batch cheaply.
	staticOutput int64
	warmSources  [][]byte
	warmOnce     sync.Once
	warm         chan struct{} // closed when the warm-up compile is done

	mu    sync.Mutex
	memo  map[string]*memoEntry
	order []string
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

// GoCacheSubdir is the directory svbench creates inside go_cache (or the
// default cache location) for the Go build cache; nothing else there is
// touched.
const GoCacheSubdir = "svbench-go-build"

// goTmpfs sizes /tmp of a Go compile stage, which holds the go command's
// work directory ($WORK: compiled packages before they reach the cache, the
// linked test binary). Its contents count towards the stage's memory bound.
const goTmpfs = 1 << 30

// NewVerifier detects the toolchains and the sandbox. Missing toolchains are
// not an error here: a task of that language then fails to verify with the
// detection message, so a Python-only host can still score Python tasks.
func NewVerifier(ctx context.Context, sb *sandbox.Sandbox, cacheDir string, testTimeout time.Duration) (*Verifier, error) {
	if testTimeout <= 0 {
		testTimeout = 30 * time.Second
	}
	v := &Verifier{sb: sb, memo: map[string]*memoEntry{}, staticOutput: 4 << 20, limits: sandbox.Limits{
		CPU: testTimeout, Wall: testTimeout, AddressSpace: 1536 << 20, Memory: 2 << 30, Procs: 64,
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
		cacheDir = base
	}
	if err := os.MkdirAll(cacheDir, 0o755); err != nil {
		return nil, fmt.Errorf("e3: go_cache %s: %w", cacheDir, err)
	}
	// The cache is a subdirectory svbench makes and marks: the directory a
	// user names may hold their own files, whose owner svbench must not
	// change (the compile stage writes the cache as the sandbox's uid).
	cache, err := sb.SharedDir(cacheDir, GoCacheSubdir)
	if err != nil {
		return nil, fmt.Errorf("e3: go_cache %s: %w", cacheDir, err)
	}
	v.cache = cache
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
	h := sha256.New()
	for _, k := range slices.Sorted(maps.Keys(f)) {
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

var (
	pyTestDef     = regexp.MustCompile(`(?m)^\s+def (test\w*)\s*\(`)
	pyVerdictLine = regexp.MustCompile(`(?m)^SVBENCH-VERDICT (\{.*\})$`)
)

// pyVerdict is what the trusted runner reports per test module.
type pyVerdict struct {
	Passed []string `json:"passed"`
	Failed []string `json:"failed"`
	Ran    int      `json:"ran"`
	Error  string   `json:"error"`
}

// runPython runs a suite's unittest modules in the trusted runner (the
// tests' process, which never imports the candidate) and the candidate's
// modules in a nested sandbox that sees neither the tests nor the runner.
// The verdict is the runner's stdout, which the candidate has no descriptor
// for; what the candidate prints goes to stderr, shown as test output only.
func (v *Verifier) runPython(ctx context.Context, tests map[string][]byte, files Files) TestRun {
	if v.py == nil {
		return TestRun{Output: v.pyErr.Error()}
	}
	var mods []string
	defined := map[string]map[string]bool{}
	expected := 0
	for name, b := range tests {
		if strings.HasPrefix(path.Base(name), "test_") && strings.HasSuffix(name, ".py") && !strings.Contains(name, "/") {
			m := strings.TrimSuffix(name, ".py")
			mods = append(mods, m)
			defined[m] = map[string]bool{}
			for _, d := range pyTestDef.FindAllSubmatch(b, -1) {
				defined[m][string(d[1])] = true
			}
			expected += len(defined[m])
		}
	}
	slices.Sort(mods)
	if len(mods) == 0 || expected == 0 {
		return TestRun{Output: "task has no unittest test_*.py module in this suite"}
	}
	var candMods []string
	for name := range files {
		if strings.HasSuffix(name, ".py") && !strings.Contains(name, "/") {
			candMods = append(candMods, strings.TrimSuffix(name, ".py"))
		}
	}
	slices.Sort(candMods)
	dir, cleanup, err := v.sb.NewScratch()
	if err != nil {
		return TestRun{Output: err.Error()}
	}
	defer cleanup()
	trusted := map[string][]byte{}
	ents, _ := pyrunner.FS.ReadDir(".")
	for _, e := range ents {
		if !strings.HasSuffix(e.Name(), ".py") {
			continue
		}
		b, err := pyrunner.FS.ReadFile(e.Name())
		if err != nil {
			return TestRun{Output: err.Error()}
		}
		trusted[e.Name()] = b
	}
	for name, b := range tests {
		trusted[name] = b
	}
	for _, w := range []struct {
		sub   string
		files map[string][]byte
	}{{"trusted", trusted}, {"cand", files}, {"work", nil}} {
		if err := os.MkdirAll(filepath.Join(dir, w.sub), 0o755); err != nil {
			return TestRun{Output: err.Error()}
		}
		if err := writeTree(filepath.Join(dir, w.sub), w.files); err != nil {
			return TestRun{Output: err.Error()}
		}
	}
	work := path.Join(sandbox.ScratchMount, "work")
	cfg, _ := json.Marshal(map[string]any{
		"tests": mods, "modules": candMods, "cand": path.Join(sandbox.ScratchMount, "cand"), "work": work,
		"timeout": v.limits.Wall.Seconds(),
	})
	res, err := v.sb.Run(ctx, sandbox.Spec{
		Argv:          []string{v.py.Exe, "-I", "-B", path.Join(sandbox.ScratchMount, "trusted", "svbench_runner.py"), string(cfg)},
		Dir:           dir,
		Subdir:        "work",
		Env:           []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/tmp", "TMPDIR=" + work, "PYTHONDONTWRITEBYTECODE=1", "PYTHONHASHSEED=0"},
		Limits:        v.limits,
		ReadOnlyBinds: v.py.Binds(),
		// The trusted runner starts the candidate's own sandbox with
		// bwrap, which needs namespaces and mounts.
		Nesting: true,
	})
	if err != nil {
		return TestRun{Total: expected, Output: err.Error()}
	}
	out := TestRun{Total: expected, Killed: res.Killed, Output: string(res.Stderr)}
	lines := pyVerdictLine.FindAllSubmatch(res.Stdout, -1)
	if len(lines) != 1 {
		out.Output += fmt.Sprintf("\n(no verdict from the test runner: %d verdict lines, exit %d)", len(lines), res.ExitCode)
		return out
	}
	var verdict map[string]pyVerdict
	if err := json.Unmarshal(lines[0][1], &verdict); err != nil {
		out.Output += "\n(unreadable verdict: " + err.Error() + ")"
		return out
	}
	clean := res.ExitCode == 0 && res.Killed == ""
	for _, m := range mods {
		mv, ok := verdict[m]
		if !ok || mv.Error != "" || len(mv.Failed) > 0 || mv.Ran != len(defined[m]) {
			clean = false
		}
		for _, name := range mv.Passed {
			if defined[m][name] {
				out.Passed++
			}
		}
	}
	out.Passed = min(out.Passed, out.Total)
	out.OK = clean && out.Passed == out.Total
	return out
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
	slices.Sort(names)
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

// goRunner holds svbench's trusted files added to a Go task's test build.
//
//go:embed gorunner/trust.go.txt gorunner/main_test.go.txt
var goRunner embed.FS

var goModuleRe = regexp.MustCompile(`(?m)^module\s+(\S+)`)

// runGo compiles a suite with svbench's trusted package and TestMain, then
// runs every test function in a fresh process of its own. A test passes only
// when its process exits 0 and wrote, on a descriptor the code under test
// cannot reach, the test's name and code authenticated with a key it read
// before that code's first instruction (see gorunner/trust.go.txt). The run
// has no /proc and no test sources; the binary is execute-only.
func (v *Verifier) runGo(ctx context.Context, tests map[string][]byte, files Files) TestRun {
	if v.gotc == nil {
		return TestRun{Output: v.goErr.Error()}
	}
	names, err := goTestNames(tests)
	if err != nil || len(names) == 0 {
		return TestRun{Output: fmt.Sprintf("task tests unreadable or empty: %v", err)}
	}
	goMod := []byte(taskset.GoMod)
	if b, ok := files["go.mod"]; ok {
		goMod = b
	}
	m := goModuleRe.FindSubmatch(goMod)
	if m == nil {
		return TestRun{Total: len(names), Stage: "compile", Output: "go.mod names no module"}
	}
	trustPkg := string(m[1]) + "/svbenchtrust"
	if bad := goCapabilityViolations(files, trustPkg); len(bad) > 0 && !v.allowAnyCapability {
		return TestRun{Total: len(names), Stage: "policy", Output: "refused before compiling: the code under test uses capabilities that could decide its own verdict:\n" + strings.Join(bad, "\n")}
	}
	pkg, err := goPackageName(tests)
	if err != nil {
		return TestRun{Total: len(names), Output: err.Error()}
	}
	trustSrc, _ := goRunner.ReadFile("gorunner/trust.go.txt")
	mainSrc, _ := goRunner.ReadFile("gorunner/main_test.go.txt")
	mainSrc = bytes.Replace(bytes.Replace(mainSrc, []byte("package PKG"), []byte("package "+pkg), 1), []byte("MODULE/svbenchtrust"), []byte(trustPkg), 1)

	dir, cleanup, err := v.sb.NewScratch()
	if err != nil {
		return TestRun{Output: err.Error()}
	}
	defer cleanup()
	// The module lives one level down: go refuses a go.mod at TMPDIR's root.
	mod := filepath.Join(dir, "mod")
	for _, tree := range []map[string][]byte{files, tests, {
		"go.mod": goMod, "svbenchtrust/trust.go": trustSrc, "zz_svbench_main_test.go": mainSrc,
	}} {
		if err := writeTree(mod, tree); err != nil {
			return TestRun{Output: err.Error()}
		}
	}
	v.waitWarm(ctx)
	// Stage 1: compile with the shared cache. The compiler does not run the
	// code it compiles (cgo is off, go:generate is not run by go test), so
	// this stage is trusted with a writable cache. The package is built
	// alone first: code that names an identifier of the test files (to
	// empty a table of test cases, say) fails there. The test binary is
	// linked without symbol table and DWARF (-s -w), which a verdict never
	// reads: linking is most of a compile stage, and this makes it a third
	// shorter.
	lim := v.limits
	lim.Wall, lim.CPU, lim.AddressSpace, lim.Memory, lim.Procs, lim.FileSize = 180*time.Second, 180*time.Second, 4<<30, 4<<30, 512, 512<<20
	lim.Tmpfs = goTmpfs
	goExe := filepath.Join(v.gotc.Root, "bin", "go")
	res, err := v.sb.Run(ctx, sandbox.Spec{
		Argv:          []string{"/bin/sh", "-c", `cd mod && "$1" build -o /dev/null . && "$1" test -c -vet=off '-ldflags=-s -w' -o ../t.bin .`, "sh", goExe},
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
	bin, err := os.ReadFile(filepath.Join(dir, "t.bin"))
	if err != nil {
		return TestRun{Total: len(names), Stage: "compile", Output: err.Error()}
	}
	binDir, binCleanup, err := v.sb.NewScratch()
	if err != nil {
		return TestRun{Output: err.Error()}
	}
	defer binCleanup()
	if err := os.WriteFile(filepath.Join(binDir, "t.bin"), bin, 0o111); err != nil {
		return TestRun{Output: err.Error()}
	}
	if err := os.Chmod(binDir, 0o711); err != nil {
		return TestRun{Output: err.Error()}
	}
	// Stage 2: each test in its own process, in a scratch directory of its
	// own holding the candidate's sources and what the test writes.
	r := TestRun{Total: len(names), OK: true}
	var out strings.Builder
	for _, name := range names {
		pass, text, killed := v.runGoTest(ctx, binDir, name, files)
		if pass {
			r.Passed++
		} else {
			r.OK = false
		}
		if killed != "" {
			r.Killed = killed
		}
		if ctx.Err() != nil {
			r.OK = false
			break
		}
		out.WriteString(text)
	}
	r.Output = out.String()
	return r
}

// runGoTest runs one test function and reads its authenticated verdict.
func (v *Verifier) runGoTest(ctx context.Context, binDir, name string, files Files) (pass bool, output, killed string) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	rd, wr, err := os.Pipe()
	if err != nil {
		return false, err.Error() + "\n", ""
	}
	defer rd.Close()
	scratch, cleanup, err := v.sb.NewScratch()
	if err != nil {
		wr.Close()
		return false, err.Error() + "\n", ""
	}
	defer cleanup()
	// The working directory is the package's, as under go test: a test may
	// read the package's sources (never the tests' own, which stay behind
	// in the compile stage's directory).
	if err := writeTree(scratch, files); err != nil {
		wr.Close()
		return false, err.Error() + "\n", ""
	}
	const binMount = "/svbench-test"
	res, err := v.sb.Run(ctx, sandbox.Spec{
		Argv:       []string{binMount + "/t.bin", "-test.count=1", "-test.timeout=" + (v.limits.Wall + time.Second).String()},
		Dir:        scratch,
		Env:        []string{"PATH=/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8", "GOTRACEBACK=single"},
		Stdin:      []byte(hex.EncodeToString(key) + " " + name + "\n"),
		Limits:     v.limits,
		Mounts:     []sandbox.Mount{{Source: binDir, Target: binMount}},
		ExtraFiles: []*os.File{wr},
		NoProc:     true,
	})
	wr.Close()
	got, _ := io.ReadAll(io.LimitReader(rd, 4096))
	if err != nil {
		return false, fmt.Sprintf("=== %s: %v\n", name, err), ""
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s 0", name)
	want := fmt.Sprintf("%s 0 %s\n", name, hex.EncodeToString(mac.Sum(nil)))
	pass = res.OK() && hmac.Equal(got, []byte(want))
	verdict := "PASS"
	if !pass {
		verdict = fmt.Sprintf("FAIL (exit %d", res.ExitCode)
		if res.Killed != "" {
			verdict += ", killed: " + res.Killed
		}
		verdict += ")"
	}
	return pass, fmt.Sprintf("=== %s: %s\n%s%s", name, verdict, res.Stdout, res.Stderr), res.Killed
}

// goPackageName is the package clause of the suite's test files.
func goPackageName(tests map[string][]byte) (string, error) {
	fset := token.NewFileSet()
	for name, b := range tests {
		if !strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, b, parser.PackageClauseOnly)
		if err != nil {
			return "", err
		}
		return strings.TrimSuffix(f.Name.Name, "_test"), nil
	}
	return "", fmt.Errorf("suite has no _test.go file")
}

// WarmGo names the Go sources (tasks and their tests) whose standard
// library imports the first Go verification compiles into the build cache,
// once, before any task's own compile: tasks verified concurrently then do
// not each compile net/http and friends from a cold cache at the same time.
// Nothing runs until a Go task is verified.
func (v *Verifier) WarmGo(sources [][]byte) {
	v.warmSources = sources
}

func (v *Verifier) startWarm(ctx context.Context) {
	if v.gotc == nil || v.warmSources == nil {
		return
	}
	sources := v.warmSources
	set := map[string]bool{"testing": true, "flag": true, "regexp": true, "crypto/hmac": true, "crypto/sha256": true,
		"encoding/hex": true, "bufio": true, "syscall": true, "os": true, "fmt": true}
	fset := token.NewFileSet()
	for _, src := range sources {
		f, err := parser.ParseFile(fset, "", src, parser.ImportsOnly)
		if err != nil {
			continue
		}
		for _, imp := range f.Imports {
			if p, err := strconv.Unquote(imp.Path.Value); err == nil && !strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
				set[p] = true
			}
		}
	}
	pkgs := slices.Sorted(maps.Keys(set))
	go func() {
		defer close(v.warm)
		dir, cleanup, err := v.sb.NewScratch()
		if err != nil {
			return
		}
		defer cleanup()
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(taskset.GoMod), 0o644); err != nil {
			return
		}
		lim := v.limits
		lim.Wall, lim.CPU, lim.AddressSpace, lim.Memory, lim.Procs, lim.FileSize = 600*time.Second, 600*time.Second, 4<<30, 4<<30, 512, 512<<20
		lim.Tmpfs = goTmpfs
		argv := append([]string{filepath.Join(v.gotc.Root, "bin", "go"), "build", "-o", "/dev/null"}, pkgs...)
		_, _ = v.sb.Run(ctx, sandbox.Spec{Argv: argv, Dir: dir, Env: v.goEnv(), Limits: lim,
			ReadOnlyBinds: v.gotc.Binds(), WritableBinds: []string{v.cache}})
	}()
}

// waitWarm starts the warm-up compile on first use and blocks until it is
// done (or ctx ends).
func (v *Verifier) waitWarm(ctx context.Context) {
	v.warmOnce.Do(func() {
		v.warm = make(chan struct{})
		// The warm-up serves every later verification, so the first
		// caller's cancellation must not cut it short; its own limits
		// bound it.
		v.startWarm(context.WithoutCancel(ctx))
		if v.gotc == nil || v.warmSources == nil {
			close(v.warm)
		}
	})
	select {
	case <-v.warm:
	case <-ctx.Done():
	}
}
