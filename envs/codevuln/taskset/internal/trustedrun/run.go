// Package trustedrun executes the project's OWN task files (originals,
// reference fixes, generated variants) to prove the task contract. It is not a
// sandbox: model-written code must go through the engine's sandbox instead.
// It still bounds what it runs: a scratch directory, a scrubbed environment,
// its own process group killed on timeout, no network proxy for Go.
package trustedrun

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/svbench/svbench/envs/codevuln/pyrunner"
	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// Timeout bounds one test run. Generous because CI machines are shared and
// a cold Go build cache compiles the standard library packages a task uses.
const Timeout = 120 * time.Second

const maxOutput = 64 << 10

// Result of one test run.
type Result struct {
	Passed bool
	Output string // combined stdout+stderr, truncated
}

// Toolchain reports the missing interpreter/compiler for lang, or "" when it
// is present.
func Toolchain(lang string) string {
	bin := map[string]string{taskset.Python: "python3", taskset.Go: "go"}[lang]
	if bin == "" {
		return "unknown language " + lang
	}
	if _, err := exec.LookPath(bin); err != nil {
		return bin + " not found on PATH (Debian: " + map[string]string{"python3": "apt-get install python3", "go": "install the Go toolchain"}[bin] + ")"
	}
	return ""
}

func hostGoCache() (string, error) {
	out, err := exec.Command("go", "env", "GOCACHE").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOCACHE: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// Runner bounds how many test runs execute at once: parallel cold-cache Go
// builds on a 2-core machine otherwise starve each other past any timeout.
// It shares the host's Go build cache between runs (safe for concurrent use):
// a cold cache rebuilds net/http and friends for every run.
type Runner struct {
	sem     chan struct{}
	goCache func() (string, error)
}

// New returns a Runner executing at most parallel runs at a time (at least 1).
func New(parallel int) *Runner {
	return &Runner{sem: make(chan struct{}, max(parallel, 1)), goCache: sync.OnceValues(hostGoCache)}
}

// Run copies src and tests into a fresh scratch directory and runs the tests
// there; a failing test is Passed=false, not an error. Errors mean the run
// could not be carried out (toolchain missing, timeout, scratch failure).
// Timeout counts from the moment the run gets a slot.
func (r *Runner) Run(ctx context.Context, lang string, src, tests map[string][]byte) (Result, error) {
	select {
	case r.sem <- struct{}{}:
	case <-ctx.Done():
		return Result{}, ctx.Err()
	}
	defer func() { <-r.sem }()
	scratch, err := os.MkdirTemp("", "svbench-e3-trusted-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(scratch)
	// The go command ignores a go.mod sitting directly in TMPDIR, so the
	// module root and the temp dir are siblings.
	dir, tmp := filepath.Join(scratch, "work"), filepath.Join(scratch, "tmp")
	for _, d := range []string{dir, tmp} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return Result{}, err
		}
	}
	helpers := map[string][]byte{}
	if lang == taskset.Python {
		// Tests import svbench_trusted (build objects on the candidate's
		// side, read its source); in one process it calls locally.
		for _, name := range pyrunner.Helpers {
			b, err := pyrunner.FS.ReadFile(name)
			if err != nil {
				return Result{}, err
			}
			helpers[name] = b
		}
	}
	for _, files := range []map[string][]byte{helpers, src, tests} {
		for name, body := range files {
			p := filepath.Join(dir, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return Result{}, err
			}
			if err := os.WriteFile(p, body, 0o644); err != nil {
				return Result{}, err
			}
		}
	}
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + tmp,
		"TMPDIR=" + tmp,
		"LANG=C.UTF-8",
	}
	var args []string
	switch lang {
	case taskset.Python:
		var mods []string
		for name := range tests {
			if path.Dir(name) == "." && strings.HasSuffix(name, ".py") {
				mods = append(mods, strings.TrimSuffix(name, ".py"))
			}
		}
		slices.Sort(mods)
		env = append(env, "PYTHONDONTWRITEBYTECODE=1", "PYTHONHASHSEED=0")
		args = append([]string{"python3", "-m", "unittest", "-v"}, mods...)
	case taskset.Go:
		cache, err := r.goCache()
		if err != nil {
			return Result{}, err
		}
		env = append(env, "GOCACHE="+cache, "GOPATH="+filepath.Join(tmp, "gopath"),
			"GOFLAGS=-mod=mod", "GOPROXY=off", "CGO_ENABLED=0", "GOTOOLCHAIN=local",
			"GOENV=off", "GOTELEMETRY=off")
		args = []string{"go", "test", "-count=1", "-vet=off", "-v", "."}
	default:
		return Result{}, fmt.Errorf("unknown language %q", lang)
	}
	if msg := Toolchain(lang); msg != "" {
		return Result{}, errors.New(msg)
	}
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var out bytes.Buffer
	cmd.Stdout = &capped{b: &out}
	cmd.Stderr = cmd.Stdout
	err = cmd.Run()
	res := Result{Output: out.String()}
	if ctx.Err() != nil {
		return res, fmt.Errorf("%s timed out after %s", strings.Join(args[:2], " "), Timeout)
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		res.Passed = true
	case errors.As(err, &exit):
	default:
		return res, err
	}
	return res, nil
}

type capped struct{ b *bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxOutput - c.b.Len(); room > 0 {
		c.b.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// Contract proves, for one tested task: the vulnerable original passes the
// visible tests and fails the hidden ones; the reference fix passes both.
func (r *Runner) Contract(ctx context.Context, t taskset.Task) error {
	if !t.Tested() {
		return nil
	}
	fixed := t.Fixed()
	checks := []struct {
		what  string
		src   map[string][]byte
		tests map[string][]byte
		want  bool
	}{
		{"vulnerable original must PASS the visible tests", t.Src, t.Visible, true},
		{"vulnerable original must FAIL the hidden tests", t.Src, t.Hidden, false},
		{"reference fix must PASS the visible tests", fixed, t.Visible, true},
		{"reference fix must PASS the hidden tests", fixed, t.Hidden, true},
	}
	type outcome struct {
		res Result
		err error
	}
	outs := make([]outcome, len(checks))
	var wg sync.WaitGroup
	for i, c := range checks {
		wg.Go(func() {
			res, err := r.Run(ctx, t.Language, c.src, c.tests)
			outs[i] = outcome{res, err}
		})
	}
	wg.Wait()
	var errs []error
	for i, c := range checks {
		o := outs[i]
		switch {
		case o.err != nil:
			errs = append(errs, fmt.Errorf("task %s: %s: %w\n%s", t.ID, c.what, o.err, tail(o.res.Output)))
		case o.res.Passed != c.want:
			errs = append(errs, fmt.Errorf("task %s: %s, but it did not:\n%s", t.ID, c.what, tail(o.res.Output)))
		}
	}
	return errors.Join(errs...)
}

func tail(s string) string {
	const n = 3000
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}
