package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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
			ro := t.TempDir()
			// bwrap resolves a bind's descriptor as the run's uid, which
			// must be able to traverse the test's temp dir (0700).
			if err := os.Chmod(filepath.Dir(ro), 0o711); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(ro, "in.txt"), []byte("given"), 0o644)
			rw, err := s.SharedDir(t.TempDir(), "out")
			if err != nil {
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

// TestNestedSandbox: a program run with Spec.Nesting can start bwrap again,
// with the arguments E3's runner uses (sized tmpfs mounts, a read-only root
// and /dev, the strict filter from SeccompFilterPath); the inner program
// does not see what the outer one chose not to give it, cannot write outside
// its bounded mounts and cannot create namespaces. Without Nesting the
// strict filter refuses bwrap its namespaces.
func TestNestedSandbox(t *testing.T) {
	const bwrap = `bwrap --unshare-user --unshare-pid --unshare-ipc --unshare-uts --die-with-parent --new-session --cap-drop ALL ` +
		`--ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 ` +
		`--dev /dev --remount-ro /dev --size 1048576 --tmpfs /dev/shm --size 1048576 --tmpfs /tmp --remount-ro / `
	const probe = `-- /bin/sh -c 'cat /scratch/outer-only.txt 2>/dev/null || echo "inner: hidden"; ` +
		`touch /x /dev/x 2>/dev/null && echo "inner: root writable"; ` +
		`stat -f -c "inner: tmp %b blocks of %S" /tmp; stat -f -c "inner: shm %b blocks of %S" /dev/shm; ` +
		`unshare -U true 2>/dev/null && echo "inner: unshare works" || echo "inner: no namespaces"'`
	for m, s := range isolated(t) {
		for _, tc := range []struct {
			name    string
			nesting bool
			cmd     string
			want    string
		}{
			{"nesting", true, `exec 9<` + SeccompFilterPath + `; ` + bwrap + `--seccomp 9 ` + probe,
				"inner: hidden\ninner: tmp 256 blocks of 4096\ninner: shm 256 blocks of 4096\ninner: no namespaces"},
			{"strict-no-filter-file", false, `test -e ` + SeccompFilterPath + ` && echo "filter file present"`, ""},
			{"strict", false, bwrap + probe, ""},
		} {
			t.Run(string(m)+"/"+tc.name, func(t *testing.T) {
				dir := scratch(t, s)
				os.WriteFile(filepath.Join(dir, "outer-only.txt"), []byte("secret"), 0o644)
				res, err := s.Run(context.Background(), Spec{Argv: []string{"/bin/sh", "-c", tc.cmd}, Dir: dir, Nesting: tc.nesting})
				if err != nil {
					t.Fatal(err)
				}
				got := strings.TrimSpace(string(res.Stdout))
				if tc.nesting && (!res.OK() || got != tc.want) {
					t.Errorf("nested: exit %d killed %q stdout %q stderr %q", res.ExitCode, res.Killed, got, res.Stderr)
				}
				if !tc.nesting && (res.OK() || got != "" || tc.name == "strict" && !strings.Contains(string(res.Stderr), "namespace")) {
					t.Errorf("bwrap nested without Spec.Nesting: exit %d stdout %q stderr %q", res.ExitCode, got, res.Stderr)
				}
			})
		}
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

// fillScript first tries to write the root and /dev, then writes up to
// 3 GiB into the directory argv[1] names in 8 MiB files (RLIMIT_FSIZE bounds
// each file), keeping every file open and, with argv[2] == "unlink", deleted;
// it prints a line per chunk written and then waits, so what it holds stays
// held until the sandbox acts. The watchdog may kill it the moment the mount
// is full, before it prints why it stopped, so every line it must print comes
// before the fill.
const fillScript = `
import errno, os, sys, time
d, mode = sys.argv[1], sys.argv[2]
for p in ("/held-in-root", "/dev/held-in-dev"):
    try:
        open(p, "w").write("x")
        print("wrote", p, flush=True)
    except OSError as e:
        print("refused", p, errno.errorcode.get(e.errno), flush=True)
chunk = b"x" * (8 << 20)
held, n, err = [], 0, "none"
while n < 3 << 30:
    p = os.path.join(d, "f%d" % len(held))
    try:
        f = open(p, "wb", buffering=0)
        held.append(f)
        if mode == "unlink":
            os.unlink(p)
        f.write(chunk)
    except OSError as e:
        err = errno.errorcode.get(e.errno, str(e.errno))
        break
    n += len(chunk)
    print("chunk", flush=True)
print("stopped", n >> 20, "MiB", err, flush=True)
time.sleep(30)
`

// TestRAMBackedMountsAreBounded: /tmp and /dev/shm are tmpfs (RAM); a program
// that fills them gets ENOSPC at Limits.Tmpfs, is killed as "disk" with the
// mount named, and cannot write the root or /dev at all. What it held is
// within Limits.Memory (resident memory and tmpfs together).
func TestRAMBackedMountsAreBounded(t *testing.T) {
	py := python(t)
	const tmpfs = 32 << 20
	lim := Limits{Tmpfs: tmpfs, Memory: 512 << 20, Wall: 30 * time.Second, CPU: 30 * time.Second}
	for m, s := range isolated(t) {
		for _, dir := range []string{"/tmp", "/dev/shm"} {
			t.Run(string(m)+dir, func(t *testing.T) {
				res, err := s.Run(context.Background(), Spec{
					Argv: []string{py.Exe, "-I", "-c", fillScript, dir, "keep"}, Dir: scratch(t, s),
					ReadOnlyBinds: py.Binds(), Limits: lim,
				})
				if err != nil {
					t.Fatal(err)
				}
				out := string(res.Stdout)
				if res.Killed != KilledDisk || !strings.Contains(res.Detail, dir+" is full") {
					t.Errorf("Killed %q detail %q, want disk naming %s (stdout %q stderr %q)", res.Killed, res.Detail, dir, out, res.Stderr)
				}
				// Whole chunks only: the write that hit the bound is not
				// counted, so more than tmpfs/8 chunks means the bound let
				// a full chunk past it.
				if n := strings.Count(out, "chunk\n"); n*8 > tmpfs>>20 {
					t.Errorf("wrote %d MiB into %s, want at most %d MiB: %q", n*8, dir, tmpfs>>20, out)
				}
				// The kill may come before the script says why it stopped;
				// when it did say, it must be ENOSPC.
				if i := strings.Index(out, "stopped"); i >= 0 {
					var mib int
					var why string
					if _, err := fmt.Sscanf(out[i:], "stopped %d MiB %s", &mib, &why); err != nil || why != "ENOSPC" {
						t.Errorf("stopped on %q (%v), want ENOSPC: %q", why, err, out)
					}
				}
				for _, p := range []string{"/held-in-root", "/dev/held-in-dev"} {
					if !strings.Contains(out, "refused "+p+" EROFS") {
						t.Errorf("%s was not refused as read-only: %q", p, out)
					}
				}
				if res.PeakMemory > lim.Memory {
					t.Errorf("peak memory %d MiB above the run's bound %d MiB", res.PeakMemory>>20, lim.Memory>>20)
				}
			})
		}
	}
}

// TestScratchDiskIsBounded: the scratch directory is host disk; a run that
// fills it, or holds deleted files open there, or creates entries without
// end, is killed as "disk" while it holds little more than Limits.Disk.
func TestScratchDiskIsBounded(t *testing.T) {
	py := python(t)
	const disk = 64 << 20
	lim := Limits{Disk: disk, Wall: 60 * time.Second, CPU: 60 * time.Second}
	manyFiles := `
import os, time
for i in range(` + fmt.Sprint(maxScratchEntries+1000) + `):
    open("e%d" % i, "w").close()
print("created all", flush=True)
time.sleep(30)
`
	for m, s := range isolated(t) {
		for _, tc := range []struct {
			name   string
			argv   []string
			detail string
		}{
			{"files", []string{py.Exe, "-I", "-c", fillScript, ScratchMount, "keep"}, "scratch holds"},
			{"deleted-but-open", []string{py.Exe, "-I", "-c", fillScript, ScratchMount, "unlink"}, "scratch holds"},
			{"entries", []string{py.Exe, "-I", "-c", manyFiles}, "entries"},
		} {
			t.Run(string(m)+"/"+tc.name, func(t *testing.T) {
				dir := scratch(t, s)
				res, err := s.Run(context.Background(), Spec{Argv: tc.argv, Dir: dir, ReadOnlyBinds: py.Binds(), Limits: lim})
				if err != nil {
					t.Fatal(err)
				}
				if res.Killed != KilledDisk || !strings.Contains(res.Detail, tc.detail) {
					t.Errorf("Killed %q detail %q, want disk %q (stdout %q stderr %q)", res.Killed, res.Detail, tc.detail, res.Stdout, res.Stderr)
				}
				// 3 GiB is far beyond the bound; 65k small files are
				// not, and may all exist before the next measurement.
				if strings.Contains(string(res.Stdout), "stopped") {
					t.Errorf("the run finished its writes: %q", res.Stdout)
				}
				held := hostUsage(t, dir)
				t.Logf("peak %d MiB, left on disk %d MiB, bound %d MiB", res.PeakDisk>>20, held>>20, disk>>20)
				if held > disk+diskSlack || res.PeakDisk > disk+diskSlack {
					t.Errorf("held %d MiB (peak seen %d MiB), more than the bound %d MiB + %d MiB", held>>20, res.PeakDisk>>20, disk>>20, diskSlack>>20)
				}
			})
		}
	}
}

// diskSlack is what a run may write between two measurements of its scratch
// directory (documented in the README's sandbox section).
const diskSlack = 128 << 20

func hostUsage(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if fi, err := d.Info(); err == nil {
			n += fi.Sys().(*syscall.Stat_t).Blocks * 512
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
