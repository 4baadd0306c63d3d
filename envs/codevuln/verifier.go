package codevuln

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
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
	var sel *taskset.PytestSuite
	if t.Pytest != nil {
		// Both suites are marks of the same modules.
		tests, sel = t.Hidden, &t.Pytest.Visible
		if suite == SuiteHidden {
			sel = &t.Pytest.Hidden
		}
	}
	start := time.Now()
	var r TestRun
	switch {
	case t.RunsBinary():
		if sel == nil {
			r = TestRun{Output: "a " + t.Language + " task run as a program needs a pytest suite"}
			break
		}
		r = v.runCompiled(ctx, t.Language, tests, files, sel)
	case t.Language == taskset.Python:
		r = v.runPython(ctx, tests, files, sel, nil)
	case t.Language == taskset.Go:
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
