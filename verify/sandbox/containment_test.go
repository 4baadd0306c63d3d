package sandbox

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestNothingOfSvbenchVisible plants a canary in svbench's environment and
// looks for it everywhere a process inside can read: its own environment,
// every /proc/*/environ and cmdline it can see (bwrap is pid 1 there).
func TestNothingOfSvbenchVisible(t *testing.T) {
	py := python(t)
	const canary = "CANARY-svbench-7d1e"
	t.Setenv("SVBENCH_TOKEN", canary)
	t.Setenv("OPENAI_API_KEY", canary)
	script := `
import os
seen = []
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    for f in ("environ", "cmdline"):
        try:
            seen.append(open("/proc/%s/%s" % (pid, f), "rb").read().decode("latin-1"))
        except OSError:
            pass
seen.append(repr(dict(os.environ)))
print("pids", len([p for p in os.listdir("/proc") if p.isdigit()]))
print("\n".join(seen))
`
	for m, s := range isolated(t) {
		t.Run(string(m), func(t *testing.T) {
			res := runPy(t, s, py, script, Limits{})
			if !res.OK() {
				t.Fatalf("run: %+v %s", res, res.Stderr)
			}
			if strings.Contains(string(res.Stdout), canary) {
				t.Errorf("svbench's environment is visible inside the sandbox:\n%s", res.Stdout)
			}
			if !strings.Contains(string(res.Stdout), "pids ") {
				t.Errorf("positive control: /proc was not listed: %s", res.Stdout)
			}
		})
	}
}

// TestRunMemoryIsBoundedAsAWhole: four processes each under the per-process
// address-space limit together exceed the run's memory and are killed.
func TestRunMemoryIsBoundedAsAWhole(t *testing.T) {
	py := python(t)
	script := `
import os, time
for _ in range(4):
    if os.fork() == 0:
        b = bytearray(200 << 20)
        for i in range(0, len(b), 4096):
            b[i] = 1
        time.sleep(60)
        os._exit(0)
time.sleep(60)
`
	for m, s := range isolated(t) {
		t.Run(string(m), func(t *testing.T) {
			res := runPy(t, s, py, script, Limits{AddressSpace: 512 << 20, Memory: 400 << 20, Wall: 50 * time.Second, CPU: 50 * time.Second})
			if res.Killed != KilledMemory {
				t.Errorf("Killed = %q, want memory (peak %d MiB, stderr %q)", res.Killed, res.PeakMemory>>20, res.Stderr)
			}
			if res.PeakMemory <= 400<<20 {
				t.Errorf("peak memory %d MiB not above the bound it was killed for", res.PeakMemory>>20)
			}
		})
	}
}

func TestLoopbackIsUp(t *testing.T) {
	py := python(t)
	script := `
import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(1)
c = socket.create_connection(s.getsockname(), timeout=5)
a, _ = s.accept()
a.sendall(b"pong")
print(c.recv(4).decode())
`
	for m, s := range isolated(t) {
		t.Run(string(m), func(t *testing.T) {
			res := runPy(t, s, py, script, Limits{})
			if !res.OK() || strings.TrimSpace(string(res.Stdout)) != "pong" {
				t.Errorf("loopback inside the sandbox: %+v %s %s", res, res.Stdout, res.Stderr)
			}
		})
	}
}

// TestNoProcHidesOwnFiles: without /proc a program cannot reach its own
// descriptors by path (/dev/fd/N) or its memory (/proc/self/mem).
func TestNoProcHidesOwnFiles(t *testing.T) {
	for m, s := range isolated(t) {
		t.Run(string(m), func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			res, err := s.Run(context.Background(), Spec{
				Argv: []string{"/bin/sh", "-c", `echo direct >&3; echo bypath > /dev/fd/3 2>/dev/null || echo "no /dev/fd"; test -e /proc/self/mem && echo "has proc" || echo "no proc"`},
				Dir:  scratch(t, s), NoProc: true, ExtraFiles: []*os.File{w},
			})
			w.Close()
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(r)
			if string(got) != "direct\n" {
				t.Errorf("fd 3 received %q, want only the direct write", got)
			}
			if out := string(res.Stdout); !strings.Contains(out, "no /dev/fd") || !strings.Contains(out, "no proc") {
				t.Errorf("stdout %q", out)
			}
		})
	}
}

func TestMountsReadOnlyAndWritable(t *testing.T) {
	for m, s := range isolated(t) {
		t.Run(string(m), func(t *testing.T) {
			ro, rw := t.TempDir(), t.TempDir()
			// bwrap resolves a bind's descriptor as the run's uid, which
			// must be able to traverse the test's temp dir (0700).
			if err := os.Chmod(filepath.Dir(ro), 0o711); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(ro, "in.txt"), []byte("given"), 0o644)
			if err := s.PrepareShared(rw); err != nil {
				t.Fatal(err)
			}
			res, err := s.Run(context.Background(), Spec{
				Argv:   []string{"/bin/sh", "-c", `cat /given/in.txt; echo x > /given/new 2>/dev/null && echo "ro writable"; echo out > /out/o.txt`},
				Dir:    scratch(t, s),
				Mounts: []Mount{{Source: ro, Target: "/given"}, {Source: rw, Target: "/out", Writable: true}},
			})
			if err != nil {
				t.Fatal(err)
			}
			if string(res.Stdout) != "given" {
				t.Errorf("stdout %q (stderr %q)", res.Stdout, res.Stderr)
			}
			if b, err := os.ReadFile(filepath.Join(rw, "o.txt")); err != nil || string(b) != "out\n" {
				t.Errorf("writable mount: %v %q", err, b)
			}
		})
	}
}

// TestNestedSandbox: a program inside can start bwrap again, and the inner
// program does not see what the outer one chose not to give it.
func TestNestedSandbox(t *testing.T) {
	for m, s := range isolated(t) {
		t.Run(string(m), func(t *testing.T) {
			dir := scratch(t, s)
			os.WriteFile(filepath.Join(dir, "outer-only.txt"), []byte("secret"), 0o644)
			inner := `bwrap --unshare-user --unshare-pid --unshare-ipc --unshare-uts --die-with-parent --new-session --cap-drop ALL ` +
				`--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 --dev /dev --tmpfs /tmp ` +
				`-- /bin/sh -c 'cat /scratch/outer-only.txt 2>/dev/null || echo "inner: hidden"'`
			res, err := s.Run(context.Background(), Spec{Argv: []string{"/bin/sh", "-c", inner}, Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if !res.OK() || strings.TrimSpace(string(res.Stdout)) != "inner: hidden" {
				t.Errorf("nested: %+v stdout %q stderr %q", res, res.Stdout, res.Stderr)
			}
		})
	}
}

// TestUIDClaimsAreExclusiveAcrossPools: two pools on one lock directory
// (two svbench processes) never hand out the same uid.
func TestUIDClaimsAreExclusiveAcrossPools(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "uids")
	a, err := newUIDPool(dir, 200000, 2)
	if err != nil {
		t.Fatal(err)
	}
	b, err := newUIDPool(dir, 200000, 2)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	u1, rel1, err := a.claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	u2, rel2, err := b.claim(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if u1 == u2 {
		t.Fatalf("both pools claimed uid %d", u1)
	}
	short, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := a.claim(short); !errors.Is(err, context.Canceled) {
		t.Errorf("claim from an exhausted pool: err = %v, want to wait until cancelled", err)
	}
	rel1()
	u3, rel3, err := b.claim(ctx)
	if err != nil || u3 != u1 {
		t.Errorf("after release: uid %d err %v, want %d", u3, err, u1)
	}
	rel2()
	rel3()
}
