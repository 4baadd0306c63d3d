package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// isolated returns the sandbox the containment tests run against, under the
// name of its mode. On CI (CI=true) a host without a working sandbox fails:
// the containment guarantees must be tested where the project lands.
func isolated(t *testing.T) map[Mode]*Sandbox {
	t.Helper()
	s, err := New(context.Background(), Options{})
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI has no working sandbox: %v", err)
		}
		t.Skipf("no sandbox on this host: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return map[Mode]*Sandbox{s.Mode(): s}
}

func python(t *testing.T) Python {
	t.Helper()
	p, err := DetectPython(context.Background())
	if err != nil {
		t.Skip(err)
	}
	return p
}

// runPy runs a python script in a fresh scratch dir.
func scratch(t testing.TB, s *Sandbox) string {
	t.Helper()
	dir, cleanup, err := s.NewScratch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cleanup)
	return dir
}

func runPy(t *testing.T, s *Sandbox, py Python, script string, lim Limits, env ...string) Result {
	t.Helper()
	dir := scratch(t, s)
	res, err := s.Run(context.Background(), Spec{
		Argv: []string{py.Exe, "-I", "-c", script}, Dir: dir, Limits: lim,
		ReadOnlyBinds: py.Binds(), Env: append([]string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8"}, env...),
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// leftovers lists host processes whose command line contains marker.
func leftovers(marker string) []string {
	var out []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(marker)) {
			out = append(out, e.Name()+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

func TestRefusesUnknownMode(t *testing.T) {
	for _, m := range []Mode{"unshare", "degraded"} {
		_, err := New(context.Background(), Options{Mode: m})
		if err == nil || !strings.Contains(err.Error(), "only mode") {
			t.Errorf("mode %q: err = %v, want a refusal naming the only mode", m, err)
		}
	}
}

func TestMissingBwrapIsAClearError(t *testing.T) {
	t.Setenv("PATH", t.TempDir()+":/usr/bin/nonexistent")
	_, err := New(context.Background(), Options{})
	if !errors.Is(err, ErrNoIsolation) {
		t.Fatalf("err = %v, want ErrNoIsolation", err)
	}
	for _, want := range []string{"apt-get install bubblewrap", "user namespaces"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error does not say %q: %v", want, err)
		}
	}
}

func TestBestModeReported(t *testing.T) {
	s, err := New(context.Background(), Options{})
	if err != nil {
		t.Skip(err)
	}
	if _, err := exec.LookPath("bwrap"); err == nil && s.Mode() != ModeBwrap {
		t.Errorf("bwrap is installed but Mode() = %q", s.Mode())
	}
	dir := scratch(t, s)
	res, err := s.Run(context.Background(), Spec{Argv: []string{"/bin/sh", "-c", "echo hi; echo err >&2; exit 3"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 3 || string(res.Stdout) != "hi\n" || string(res.Stderr) != "err\n" || res.Killed != "" || res.Mode != s.Mode() {
		t.Errorf("result = %+v", res)
	}
}

func TestForkBomb(t *testing.T) {
	for m, s := range isolated(t) {
		t.Run(string(m), func(t *testing.T) {
			marker := fmt.Sprintf("forkbomb-%d-%s", os.Getpid(), m)
			dir := scratch(t, s)
			res, err := s.Run(context.Background(), Spec{
				Argv:   []string{"/bin/sh", "-c", "f() { f | f & }; f; sleep 10 # " + marker},
				Dir:    dir,
				Limits: Limits{Procs: 32, Wall: 3 * time.Second},
			})
			if err != nil {
				t.Fatal(err)
			}
			if res.Killed != KilledTimeout && res.Killed != KilledProcs {
				t.Errorf("fork bomb ended cleanly: %+v", res)
			}
			if l := leftovers(marker); len(l) > 0 {
				t.Errorf("fork bomb processes survived the run: %v", l)
			}
			// The host can still start processes.
			if err := exec.Command("true").Run(); err != nil {
				t.Errorf("host cannot fork after the bomb: %v", err)
			}
		})
	}
}

func TestMemoryBomb(t *testing.T) {
	py := python(t)
	for m, s := range isolated(t) {
		t.Run(string(m), func(t *testing.T) {
			res := runPy(t, s, py, "chunks = []\nwhile True:\n    chunks.append(bytearray(64 << 20))\n",
				Limits{AddressSpace: 512 << 20, Wall: 20 * time.Second})
			if res.Killed != KilledMemory {
				t.Errorf("Killed = %q, want memory (exit %d, stderr %q)", res.Killed, res.ExitCode, res.Stderr)
			}
		})
	}
}

func TestInfiniteLoop(t *testing.T) {
	py := python(t)
	for m, s := range isolated(t) {
		t.Run(string(m)+"/cpu", func(t *testing.T) {
			res := runPy(t, s, py, "while True:\n    pass\n", Limits{CPU: time.Second, Wall: 30 * time.Second})
			if res.Killed != KilledCPU {
				t.Errorf("Killed = %q, want cpu (%+v)", res.Killed, res)
			}
		})
		t.Run(string(m)+"/wall", func(t *testing.T) {
			res := runPy(t, s, py, "import time\nwhile True:\n    time.sleep(60)\n", Limits{CPU: 30 * time.Second, Wall: time.Second})
			if res.Killed != KilledTimeout {
				t.Errorf("Killed = %q, want timeout (%+v)", res.Killed, res)
			}
		})
	}
}

func TestOutputBound(t *testing.T) {
	for m, s := range isolated(t) {
		t.Run(string(m), func(t *testing.T) {
			res, err := s.Run(context.Background(), Spec{Argv: []string{"/usr/bin/yes"}, Dir: scratch(t, s), Limits: Limits{Output: 4096}})
			if err != nil {
				t.Fatal(err)
			}
			if res.Killed != KilledOutput || !res.Truncated || len(res.Stdout)+len(res.Stderr) > 4096 {
				t.Errorf("Killed=%q truncated=%v kept=%d", res.Killed, res.Truncated, len(res.Stdout)+len(res.Stderr))
			}
		})
	}
}

func TestWritesOutsideScratchFail(t *testing.T) {
	py := python(t)
	host := t.TempDir() // outside every scratch dir
	if err := os.Chmod(host, 0o777); err != nil {
		t.Fatal(err)
	}
	targets := []string{filepath.Join(host, "pwned"), "/usr/pwned", "/etc/pwned", "/root/pwned", "/pwned-root"}
	script := fmt.Sprintf(`
import sys
ok = 0
for p in %q.split(","):
    try:
        open(p, "w").write("x")
    except OSError:
        continue
with open("inside.txt", "w") as f:
    f.write("scratch is writable")
`, strings.Join(targets, ","))
	for m, s := range isolated(t) {
		t.Run(string(m), func(t *testing.T) {
			dir := scratch(t, s)
			res, err := s.Run(context.Background(), Spec{Argv: []string{py.Exe, "-I", "-c", script}, Dir: dir, ReadOnlyBinds: py.Binds()})
			if err != nil || !res.OK() {
				t.Fatalf("run: %v %+v", err, res)
			}
			for _, p := range targets {
				if _, err := os.Stat(p); err == nil {
					os.Remove(p)
					t.Errorf("sandboxed code created %s on the host", p)
				}
			}
			if b, err := os.ReadFile(filepath.Join(dir, "inside.txt")); err != nil || string(b) != "scratch is writable" {
				t.Errorf("positive control: scratch write not visible: %v %q", err, b)
			}
		})
	}
}

func TestHostFilesUnreadable(t *testing.T) {
	py := python(t)
	host := t.TempDir()
	secret := filepath.Join(host, "secret.txt")
	if err := os.WriteFile(secret, []byte("TOPSECRET-4711"), 0o600); err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`
import os
for p in [%q, "/root", "/etc/shadow"]:
    try:
        if os.path.isdir(p):
            print(p, os.listdir(p))
        else:
            print(p, open(p).read())
    except OSError as e:
        print(p, "denied", type(e).__name__)
open("own.txt", "w").write("mine")
print("own", open("own.txt").read())
`, secret)
	for m, s := range isolated(t) {
		t.Run(string(m), func(t *testing.T) {
			res := runPy(t, s, py, script, Limits{})
			out := string(res.Stdout)
			if !res.OK() || !strings.Contains(out, "own mine") {
				t.Fatalf("positive control failed: %+v %s", res, res.Stderr)
			}
			if strings.Contains(out, "TOPSECRET") {
				t.Errorf("sandbox read a host file outside the task:\n%s", out)
			}
			for _, line := range strings.Split(out, "\n") {
				if strings.HasPrefix(line, "/root ") && !strings.Contains(line, "denied") && line != "/root []" {
					t.Errorf("sandbox listed /root: %s", line)
				}
			}
		})
	}
}

func TestEnvironmentScrubbed(t *testing.T) {
	py := python(t)
	t.Setenv("SVBENCH_TEST_SECRET", "leak-me")
	for m, s := range isolated(t) {
		t.Run(string(m), func(t *testing.T) {
			res := runPy(t, s, py, "import os\nprint(sorted(os.environ.items()))", Limits{}, "GIVEN=1")
			if strings.Contains(string(res.Stdout), "leak-me") || !strings.Contains(string(res.Stdout), "'GIVEN', '1'") {
				t.Errorf("environment not scrubbed or spec env missing: %s", res.Stdout)
			}
		})
	}
}

func TestNoNetworkToHost(t *testing.T) {
	py := python(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Skip(err)
	}
	defer ln.Close()
	var accepted atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Write([]byte("pong"))
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	// The script waits for the server's reply, so a connection that got
	// through is counted before the script can exit.
	script := fmt.Sprintf(`
import socket
try:
    c = socket.create_connection(("127.0.0.1", %d), timeout=5)
    print("connected", c.recv(4))
except OSError as e:
    print("refused", type(e).__name__)
`, port)
	for m, s := range isolated(t) {
		t.Run(string(m), func(t *testing.T) {
			res := runPy(t, s, py, script, Limits{})
			if !strings.Contains(string(res.Stdout), "refused") {
				t.Errorf("sandbox reached the host's 127.0.0.1:%d: %s %s", port, res.Stdout, res.Stderr)
			}
		})
	}
	if n := accepted.Load(); n != 0 {
		t.Errorf("host listener accepted %d connections from sandboxes", n)
	}
}

func TestCannotKillParent(t *testing.T) {
	py := python(t)
	sentinel := exec.Command("sleep", "600")
	if err := sentinel.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { sentinel.Process.Kill(); sentinel.Wait() }()
	script := fmt.Sprintf(`
import os, signal, subprocess
for pid in (%d, %d, os.getppid(), 1):
    try:
        os.kill(pid, signal.SIGKILL)
        print("sent", pid)
    except OSError as e:
        print("kill", pid, type(e).__name__)
subprocess.run(["/usr/bin/pkill", "-9", "sleep"])
subprocess.run(["/usr/bin/pkill", "-9", "-f", "sandbox.test"])
print("still here")
`, sentinel.Process.Pid, os.Getpid())
	for m, s := range isolated(t) {
		t.Run(string(m), func(t *testing.T) {
			_ = runPy(t, s, py, script, Limits{})
			// This test process is alive (it is running this line); the
			// sentinel must be too.
			if err := sentinel.Process.Signal(syscall.Signal(0)); err != nil {
				t.Errorf("sandboxed code killed a host process: %v", err)
			}
		})
	}
}

func TestCancellationLeavesNoProcess(t *testing.T) {
	for m, s := range isolated(t) {
		t.Run(string(m), func(t *testing.T) {
			marker := fmt.Sprintf("cancel-marker-%d-%s", os.Getpid(), m)
			dir := scratch(t, s)
			script := `
(setsid sh -c "sleep 600; : ` + marker + `" &)
(sh -c "sleep 600; : ` + marker + `" &)
touch ready
sleep 600
: ` + marker
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type ran struct {
				res Result
				err error
			}
			done := make(chan ran, 1)
			go func() {
				r, err := s.Run(ctx, Spec{Argv: []string{"/bin/sh", "-c", script}, Dir: dir, Limits: Limits{Wall: time.Minute, CPU: time.Minute}})
				done <- ran{r, err}
			}()
			// Wait until the children exist, then cancel.
			deadline := time.Now().Add(30 * time.Second)
			for {
				if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil && len(leftovers(marker)) >= 3 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("sandbox never became ready; processes: %v", leftovers(marker))
				}
				time.Sleep(10 * time.Millisecond)
			}
			cancel()
			r := <-done
			if !errors.Is(r.err, context.Canceled) || r.res.Killed != KilledCancelled {
				t.Errorf("Run after cancel: err=%v killed=%q", r.err, r.res.Killed)
			}
			if l := leftovers(marker); len(l) > 0 {
				t.Errorf("processes survived cancellation: %v", l)
			}
		})
	}
}

func TestToolchainsDetected(t *testing.T) {
	py, err := DetectPython(context.Background())
	if err != nil {
		if !strings.Contains(err.Error(), "apt-get install python3") {
			t.Errorf("error does not name the package: %v", err)
		}
		t.Skip(err)
	}
	if py.Exe == "" || py.Version == "" {
		t.Errorf("python = %+v", py)
	}
	if exec.Command(py.Exe, "-I", "-c", "import bandit").Run() == nil && py.Bandit == "" {
		t.Errorf("bandit is importable by %s but not detected", py.Exe)
	}
	g, err := DetectGo(context.Background())
	if err != nil {
		t.Skip(err)
	}
	if !strings.HasPrefix(g.Version, "go1.") || g.Root == "" {
		t.Errorf("go = %+v", g)
	}
}

// BenchmarkStartupOverhead measures a sandboxed `python3 -c pass` against a
// bare exec of the same interpreter in the same run; the ratio is reported
// as x-bare.
func BenchmarkStartupOverhead(b *testing.B) {
	py, err := DetectPython(context.Background())
	if err != nil {
		b.Skip(err)
	}
	s, err := New(context.Background(), Options{})
	if err != nil {
		b.Skip(err)
	}
	dir := scratch(b, s)
	var bare, boxed time.Duration
	for b.Loop() {
		t0 := time.Now()
		if err := exec.Command(py.Exe, "-I", "-c", "pass").Run(); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		res, err := s.Run(context.Background(), Spec{Argv: []string{py.Exe, "-I", "-c", "pass"}, Dir: dir, ReadOnlyBinds: py.Binds()})
		if err != nil || !res.OK() {
			b.Fatal(err, res)
		}
		bare += t1.Sub(t0)
		boxed += time.Since(t1)
	}
	b.ReportMetric(float64(bare.Microseconds())/float64(b.N)/1000, "bare-ms")
	b.ReportMetric(float64(boxed.Microseconds())/float64(b.N)/1000, "sandbox-ms")
	b.ReportMetric(float64(boxed)/float64(bare), "x-bare")
	b.ReportMetric(0, "ns/op")
	_ = s.Mode()
}

func TestScratchDirsShareOnePrivateBase(t *testing.T) {
	var s *Sandbox
	for _, sb := range isolated(t) {
		s = sb
	}
	a, ca, err := s.NewScratch()
	if err != nil {
		t.Fatal(err)
	}
	b, cb, err := s.NewScratch()
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(a) != filepath.Dir(b) || filepath.Dir(a) != s.ScratchBase() {
		t.Errorf("scratch dirs %s and %s, base %s", a, b, s.ScratchBase())
	}
	fi, err := os.Stat(s.ScratchBase())
	if err != nil || fi.Mode().Perm() != 0o711 {
		t.Errorf("base %v mode %v", err, fi.Mode())
	}
	ca()
	cb()
	for _, d := range []string{a, b} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s not removed", d)
		}
	}
}

// TestSharedDirLeavesTheParentAlone: a directory a user names (E3's go_cache)
// may hold their own files; svbench keeps its writable cache in a marked
// subdirectory of its own and changes nothing else's owner or mode.
func TestSharedDirLeavesTheParentAlone(t *testing.T) {
	var s *Sandbox
	for _, sb := range isolated(t) {
		s = sb
	}
	parent := t.TempDir()
	// bwrap resolves a bind's descriptor as the run's uid, which must be
	// able to traverse the test's temp dir (0700).
	if err := os.Chmod(filepath.Dir(parent), 0o711); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(parent, "id_rsa")
	if err := os.WriteFile(key, []byte("PRIVATE"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := ownerMode(t, key)
	parentBefore := ownerMode(t, parent)
	dir, err := s.SharedDir(parent, "cache")
	if err != nil {
		t.Fatal(err)
	}
	// A second file name for the key inside svbench's directory must not
	// make svbench chown the key through it.
	if err := os.Link(key, filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SharedDir(parent, "cache"); err != nil {
		t.Fatalf("reusing its own directory: %v", err)
	}
	if got := ownerMode(t, key); got != before {
		t.Errorf("id_rsa: %s after, %s before", got, before)
	}
	if got := ownerMode(t, parent); got != parentBefore {
		t.Errorf("parent: %s after, %s before", got, parentBefore)
	}
	res, err := s.Run(context.Background(), Spec{Argv: []string{"/bin/sh", "-c", `echo built > "$1/obj"`, "sh", dir},
		Dir: scratch(t, s), WritableBinds: []string{dir}})
	if err != nil || !res.OK() {
		t.Fatalf("write into the shared dir: %v %+v %s", err, res, res.Stderr)
	}
	if got := ownerMode(t, key); got != before {
		t.Errorf("id_rsa after a run: %s, before %s", got, before)
	}
}

func TestSharedDirRefusesWhatItDidNotMake(t *testing.T) {
	var s *Sandbox
	for _, sb := range isolated(t) {
		s = sb
	}
	for _, tc := range []struct {
		name string
		make func(t *testing.T, p string)
		want string
	}{
		{"unmarked", func(t *testing.T, p string) { os.Mkdir(p, 0o755) }, "not created by svbench"},
		{"symlink", func(t *testing.T, p string) { os.Symlink(t.TempDir(), p) }, "not a directory"},
		{"file", func(t *testing.T, p string) { os.WriteFile(p, nil, 0o600) }, "not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			parent := t.TempDir()
			p := filepath.Join(parent, "cache")
			tc.make(t, p)
			secret := filepath.Join(parent, "keep")
			os.WriteFile(secret, nil, 0o600)
			before := ownerMode(t, secret)
			_, err := s.SharedDir(parent, "cache")
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "name another") {
				t.Errorf("err = %v, want a refusal saying %q and what to do", err, tc.want)
			}
			if got := ownerMode(t, secret); got != before {
				t.Errorf("%s: %s after, %s before", secret, got, before)
			}
		})
	}
}

func TestRunRefusesAScratchItDidNotMake(t *testing.T) {
	var s *Sandbox
	for _, sb := range isolated(t) {
		s = sb
	}
	if !s.root {
		t.Skip("only a root svbench hands the scratch tree to another uid")
	}
	dir := t.TempDir()
	before := ownerMode(t, dir)
	_, err := s.Run(context.Background(), Spec{Argv: []string{"/bin/true"}, Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "NewScratch") {
		t.Errorf("err = %v, want a refusal naming NewScratch", err)
	}
	if got := ownerMode(t, dir); got != before {
		t.Errorf("%s: %s after, %s before", dir, got, before)
	}
}

func ownerMode(t *testing.T, p string) string {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return fmt.Sprintf("uid %d gid %d mode %v", st.Uid, st.Gid, fi.Mode())
}
