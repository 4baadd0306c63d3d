// Package sandbox runs untrusted programs (model-written code and the tests
// that exercise it) with the isolation the host allows, and refuses to run
// them at all when it allows none unless the caller opts into a degraded mode.
//
// # Mechanisms
//
// Three modes, chosen by New (best first) and reported by Mode so a run's
// metadata and report can say how code was contained:
//
//   - "bwrap": Debian's bubblewrap. Every namespace is unshared (user, pid,
//     net, ipc, uts, cgroup, mount): the program sees an empty root holding
//     read-only binds of /usr (and /lib, /lib64, /bin as the host has them),
//     /etc/alternatives, /etc/ssl (CA certificates, openssl.cnf) and the
//     toolchains, a fresh /proc and /dev, a tmpfs /tmp and the scratch
//     directory at /scratch, the only writable bind
//     besides ones the caller names. The network namespace holds only a
//     loopback device, so 127.0.0.1 is not the host's. --die-with-parent and
//     the pid namespace mean the whole tree dies with bwrap.
//   - "unshare": util-linux unshare with user, net, pid and mount namespaces
//     (--kill-child, --mount-proc). The filesystem is the host's, so reads and
//     writes are bounded only by file permissions: weaker than bwrap, and
//     said so in the mode name.
//   - "degraded": no namespaces at all, only rlimits, the process group and
//     a scrubbed environment. New refuses this mode unless
//     Options.AllowDegraded is set.
//
// # Limits
//
// Resource limits are set by util-linux prlimit, which sets them on itself
// and then executes bwrap/unshare, so they hold from the first instruction of
// the sandboxed tree and are inherited by every process in it. (Go's
// SysProcAttr has no rlimit field, and setting limits on a started child
// races with its first fork.) RLIMIT_AS, RLIMIT_CPU, RLIMIT_FSIZE and
// RLIMIT_NPROC are used; the wall clock and the output size are enforced here
// by killing the process group.
//
// RLIMIT_NPROC counts every task of a user and is not enforced for root. When
// svbench runs as root (containers, CI) each concurrent run therefore gets its
// own unprivileged uid from a pool (Options.UIDBase), so a fork bomb meets
// its own limit and cannot starve another run, and host files readable only
// by root (/root, 0600 temp files) stay unreadable even in the unshare mode.
// Without root the limit is the user's current task count plus Limits.Procs.
//
// On timeout or cancellation the process group is killed with SIGKILL; the
// pid namespace (bwrap, unshare) takes every descendant with it, including
// ones that called setsid. When a pool uid was used, a final kill(-1, SIGKILL)
// as that uid reaps anything left, which covers the degraded mode too.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Mode names the isolation mechanism.
type Mode string

// Isolation modes, strongest first.
const (
	ModeBwrap    Mode = "bwrap"
	ModeUnshare  Mode = "unshare"
	ModeDegraded Mode = "degraded"
)

// Kill reasons reported in Result.Killed.
const (
	KilledTimeout   = "timeout"   // wall-clock limit
	KilledCPU       = "cpu"       // RLIMIT_CPU (SIGXCPU or SIGKILL at the hard limit)
	KilledMemory    = "memory"    // address-space limit hit (allocation failed)
	KilledProcs     = "procs"     // process-count limit hit (fork failed)
	KilledOutput    = "output"    // stdout+stderr over Limits.Output
	KilledSignal    = "signal"    // died from another signal
	KilledCancelled = "cancelled" // the caller's context ended
)

// ScratchMount is where the scratch directory appears inside a bwrap sandbox.
const ScratchMount = "/scratch"

// ErrNoIsolation is returned by New when neither bwrap nor unshare works and
// degraded execution was not allowed.
var ErrNoIsolation = errors.New("sandbox: no isolation mechanism works on this host")

// Limits bound one run. Zero fields take DefaultLimits' values.
type Limits struct {
	CPU          time.Duration
	Wall         time.Duration
	AddressSpace int64 // bytes of virtual memory per process
	Procs        int   // processes and threads
	FileSize     int64 // largest file a process may write, bytes
	Output       int64 // stdout+stderr bytes kept; more kills the run
}

// DefaultLimits suit a unit-test run of a small program.
var DefaultLimits = Limits{
	CPU: 10 * time.Second, Wall: 20 * time.Second, AddressSpace: 1 << 30,
	Procs: 64, FileSize: 16 << 20, Output: 256 << 10,
}

func (l Limits) withDefaults() Limits {
	d := DefaultLimits
	if l.CPU <= 0 {
		l.CPU = d.CPU
	}
	if l.Wall <= 0 {
		l.Wall = d.Wall
	}
	if l.AddressSpace <= 0 {
		l.AddressSpace = d.AddressSpace
	}
	if l.Procs <= 0 {
		l.Procs = d.Procs
	}
	if l.FileSize <= 0 {
		l.FileSize = d.FileSize
	}
	if l.Output <= 0 {
		l.Output = d.Output
	}
	return l
}

// Spec is one program run.
type Spec struct {
	// Argv is the program and its arguments; Argv[0] should be absolute.
	Argv []string
	// Dir is the host scratch directory: the working directory and the only
	// writable place (mounted at ScratchMount under bwrap). Without bwrap a
	// pool uid must be able to reach it: make it with NewScratch.
	Dir string
	// Subdir, when set, is the working directory relative to Dir.
	Subdir string
	// Env is the complete environment ("K=V"); nothing is inherited.
	Env    []string
	Stdin  []byte
	Limits Limits
	// ReadOnlyBinds are extra host paths made visible read-only at the
	// same path (toolchains).
	ReadOnlyBinds []string
	// WritableBinds are extra host directories made writable at the same
	// path (a build cache). A run with writable binds executes as the
	// shared uid (see Sandbox.PrepareShared), never as a pool uid, so only
	// trusted stages (a compiler that does not execute its input) may use it.
	WritableBinds []string
}

// Result is what a run produced.
type Result struct {
	ExitCode int
	Stdout   []byte
	Stderr   []byte
	// Truncated reports output beyond Limits.Output (the run was killed).
	Truncated bool
	// Killed is empty for a run that exited by itself, else one of the
	// Killed* reasons.
	Killed   string
	Duration time.Duration
	Mode     Mode
}

// OK reports a clean zero exit.
func (r Result) OK() bool { return r.Killed == "" && r.ExitCode == 0 }

// Options configure New.
type Options struct {
	// Mode forces a mechanism; empty picks the strongest that works.
	Mode Mode
	// AllowDegraded permits running without namespaces when nothing else
	// works (or when Mode is ModeDegraded).
	AllowDegraded bool
	// UIDBase and UIDCount define the uid pool used when running as root
	// (defaults 100000 and 4096). The uid just below the pool is the shared
	// uid of runs with writable binds.
	UIDBase, UIDCount int
}

// Sandbox runs programs. It is safe for concurrent use.
type Sandbox struct {
	mode    Mode
	bwrap   string
	unshare string
	prlimit string
	kill    string
	root    bool
	uidBase int
	pool    chan int
	hostRO  []string // base read-only binds (bwrap)
	symlink [][2]string

	scratchMu   sync.Mutex
	scratchBase string
}

// New probes the host and returns a sandbox using the strongest mechanism
// that actually works here (each candidate is tried with a trivial program).
func New(ctx context.Context, opts Options) (*Sandbox, error) {
	s := &Sandbox{root: os.Geteuid() == 0}
	var err error
	if s.prlimit, err = exec.LookPath("prlimit"); err != nil {
		return nil, fmt.Errorf("sandbox: prlimit not found (Debian package util-linux): %w", err)
	}
	s.kill, _ = exec.LookPath("kill")
	s.bwrap, _ = exec.LookPath("bwrap")
	s.unshare, _ = exec.LookPath("unshare")
	if opts.UIDBase <= 0 {
		opts.UIDBase = 100000
	}
	if opts.UIDCount <= 0 {
		opts.UIDCount = 4096
	}
	s.uidBase = opts.UIDBase
	if s.root {
		// A per-process offset keeps two svbench processes on one host from
		// handing out the same uids in the common case.
		n := min(opts.UIDCount, 256)
		off := (os.Getpid() * 97) % max(1, opts.UIDCount-n+1)
		s.pool = make(chan int, n)
		for i := range n {
			s.pool <- opts.UIDBase + off + i
		}
	}
	s.hostLayout()

	candidates := []Mode{ModeBwrap, ModeUnshare, ModeDegraded}
	if opts.Mode != "" {
		candidates = []Mode{opts.Mode}
	}
	var tried []string
	for _, m := range candidates {
		if m == ModeDegraded && !opts.AllowDegraded {
			tried = append(tried, "degraded: not allowed (set AllowDegraded / --allow-degraded-sandbox to run code without namespaces)")
			continue
		}
		if m == ModeBwrap && s.bwrap == "" {
			tried = append(tried, "bwrap: not installed (apt-get install bubblewrap)")
			continue
		}
		if m == ModeUnshare && s.unshare == "" {
			tried = append(tried, "unshare: not installed (Debian package util-linux)")
			continue
		}
		s.mode = m
		dir, cleanup, err := s.NewScratch()
		if err != nil {
			return nil, err
		}
		res, err := s.Run(ctx, Spec{Argv: []string{"/bin/sh", "-c", "exit 0"}, Dir: dir, Limits: Limits{Wall: 10 * time.Second}})
		cleanup()
		if err == nil && res.OK() {
			return s, nil
		}
		if err == nil {
			err = fmt.Errorf("exit %d, killed=%q: %s", res.ExitCode, res.Killed, strings.TrimSpace(string(res.Stderr)))
		}
		tried = append(tried, fmt.Sprintf("%s: %v", m, err))
	}
	return nil, fmt.Errorf("%w: %s; install bubblewrap (apt-get install bubblewrap) and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces>0)", ErrNoIsolation, strings.Join(tried, "; "))
}

// Mode reports the mechanism in use, for run metadata and reports.
func (s *Sandbox) Mode() Mode { return s.mode }

// SharedUID is the uid runs with writable binds execute as, or -1 when
// svbench is not root (every run then executes as the invoking user).
func (s *Sandbox) SharedUID() int {
	if !s.root {
		return -1
	}
	return s.uidBase - 1
}

// NewScratch creates an empty scratch directory any sandbox mode can use (its
// parent is traversable by pool uids) and a function removing it.
func (s *Sandbox) NewScratch() (string, func(), error) {
	s.scratchMu.Lock()
	if s.scratchBase == "" {
		base, err := scratchBase()
		if err != nil {
			s.scratchMu.Unlock()
			return "", nil, fmt.Errorf("sandbox: scratch base: %w", err)
		}
		s.scratchBase = base
	}
	base := s.scratchBase
	s.scratchMu.Unlock()
	dir, err := os.MkdirTemp(base, "run-")
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: scratch dir: %w", err)
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// scratchBase is one directory per user under the temp dir, shared by
// svbench processes so none leaves an empty directory behind. It is used
// only if it is a real directory owned by us that nobody else can write;
// otherwise a fresh private one is made.
func scratchBase() (string, error) {
	base := filepath.Join(os.TempDir(), fmt.Sprintf("svbench-sandbox-%d", os.Geteuid()))
	if err := os.Mkdir(base, 0o711); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	if fi, err := os.Lstat(base); err == nil && fi.IsDir() && fi.Mode()&0o022 == 0 {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == os.Geteuid() {
			if fi.Mode().Perm() != 0o711 {
				if err := os.Chmod(base, 0o711); err != nil {
					return "", err
				}
			}
			return base, nil
		}
	}
	base, err := os.MkdirTemp("", "svbench-sandbox-")
	if err == nil {
		err = os.Chmod(base, 0o711)
	}
	return base, err
}

// ScratchBase is the directory NewScratch creates scratch directories in
// ("" before the first one).
func (s *Sandbox) ScratchBase() string {
	s.scratchMu.Lock()
	defer s.scratchMu.Unlock()
	return s.scratchBase
}

// Close releases nothing today: every scratch directory is removed by the
// cleanup NewScratch returns, and the shared base stays for other runs.
func (s *Sandbox) Close() error { return nil }

// PrepareShared makes dir (recursively) owned by the shared uid, so runs with
// dir as a writable bind can write there. A no-op without root.
func (s *Sandbox) PrepareShared(dir string) error {
	if !s.root {
		return nil
	}
	return chownTree(dir, s.SharedUID())
}

func chownTree(dir string, uid int) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		return os.Lchown(p, uid, uid)
	})
}

// hostLayout records how the host lays out /lib, /lib64 and /bin (merged-/usr
// symlinks or directories) so bwrap reproduces it.
func (s *Sandbox) hostLayout() {
	s.hostRO = []string{"/usr"}
	for _, p := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if t, err := os.Readlink(p); err == nil {
				s.symlink = append(s.symlink, [2]string{t, p})
			}
			continue
		}
		s.hostRO = append(s.hostRO, p)
	}
	for _, p := range []string{"/etc/alternatives", "/etc/ld.so.cache", "/etc/localtime", "/etc/ssl"} {
		if _, err := os.Stat(p); err == nil {
			s.hostRO = append(s.hostRO, p)
		}
	}
}

// Run executes spec and waits for it. A non-nil error means the sandbox could
// not run the program (bad spec, missing binary, cancellation); what the
// program did, including being killed, is in the Result.
func (s *Sandbox) Run(ctx context.Context, spec Spec) (Result, error) {
	res := Result{Mode: s.mode}
	if len(spec.Argv) == 0 {
		return res, errors.New("sandbox: empty argv")
	}
	if spec.Dir == "" {
		return res, errors.New("sandbox: no scratch directory")
	}
	dir, err := filepath.Abs(spec.Dir)
	if err != nil {
		return res, fmt.Errorf("sandbox: scratch dir: %w", err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return res, fmt.Errorf("sandbox: scratch dir %s is not a directory", dir)
	}
	lim := spec.Limits.withDefaults()
	if spec.Subdir != "" && !filepath.IsLocal(spec.Subdir) {
		return res, fmt.Errorf("sandbox: subdir %q is not inside the scratch directory", spec.Subdir)
	}

	uid := -1
	if s.root {
		if len(spec.WritableBinds) > 0 {
			uid = s.SharedUID()
		} else {
			select {
			case uid = <-s.pool:
				defer func() { s.pool <- uid }()
			case <-ctx.Done():
				return res, ctx.Err()
			}
		}
		if err := chownTree(dir, uid); err != nil {
			return res, fmt.Errorf("sandbox: handing scratch dir to uid %d: %w", uid, err)
		}
	}
	nproc := lim.Procs
	if !s.root {
		nproc += userTasks(os.Getuid())
	}

	argv := []string{s.prlimit,
		"--as=" + strconv.FormatInt(lim.AddressSpace, 10),
		"--cpu=" + strconv.FormatInt(int64((lim.CPU+time.Second-1)/time.Second), 10),
		"--fsize=" + strconv.FormatInt(lim.FileSize, 10),
		"--nproc=" + strconv.Itoa(nproc),
		"--core=0",
		"--"}
	// bwrap receives its binds as open file descriptors, opened here with
	// svbench's own permissions: a pool uid need not be able to traverse
	// the parents of the scratch directory or of a toolchain.
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	fdOf := func(p string) (string, error) {
		f, err := os.OpenFile(p, os.O_RDONLY|unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", fmt.Errorf("sandbox: bind %s: %w", p, err)
		}
		files = append(files, f)
		return strconv.Itoa(2 + len(files)), nil
	}
	wrapped, err := s.wrap(spec, dir, fdOf)
	if err != nil {
		return res, err
	}
	argv = append(argv, wrapped...)

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.ExtraFiles = files
	cmd.Env = append([]string{}, spec.Env...)
	if s.mode != ModeBwrap {
		cmd.Dir = filepath.Join(dir, spec.Subdir)
	} else {
		cmd.Dir = "/"
		cmd.Env = nil // bwrap --clearenv/--setenv carries the environment
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if uid >= 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}
	}
	if spec.Stdin != nil {
		cmd.Stdin = bytes.NewReader(spec.Stdin)
	}
	var once sync.Once
	var reason string
	var mu sync.Mutex
	killWith := func(r string) {
		once.Do(func() {
			mu.Lock()
			reason = r
			mu.Unlock()
			if cmd.Process != nil {
				_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			}
		})
	}
	out := &boundedBuffers{limit: lim.Output, onOverflow: func() { killWith(KilledOutput) }}
	cmd.Stdout = out.writer(&out.stdout)
	cmd.Stderr = out.writer(&out.stderr)
	// Wait must not hang on a grandchild that kept the pipes open after the
	// group was killed (possible only without a pid namespace).
	cmd.WaitDelay = 2 * time.Second

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("sandbox: starting %s: %w", argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(lim.Wall)
	defer timer.Stop()
	var waitErr error
	select {
	case waitErr = <-done:
	case <-timer.C:
		killWith(KilledTimeout)
		waitErr = <-done
	case <-ctx.Done():
		killWith(KilledCancelled)
		waitErr = <-done
	}
	// Without root nothing distinguishes the sandbox's processes from the
	// user's; with a pool uid everything running as it belongs to this run.
	if uid >= 0 && len(spec.WritableBinds) == 0 {
		s.reap(uid)
	} else if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	res.Duration = time.Since(start)
	res.Stdout, res.Stderr, res.Truncated = out.result()
	mu.Lock()
	res.Killed = reason
	mu.Unlock()

	var ee *exec.ExitError
	switch {
	case waitErr == nil:
	case errors.As(waitErr, &ee):
	case errors.Is(waitErr, exec.ErrWaitDelay):
	default:
		return res, fmt.Errorf("sandbox: waiting for %s: %w", spec.Argv[0], waitErr)
	}
	st := cmd.ProcessState
	res.ExitCode = st.ExitCode()
	sig := syscall.Signal(0)
	if ws, ok := st.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		sig = ws.Signal()
		res.ExitCode = 128 + int(sig)
	} else if s.mode != ModeDegraded && res.ExitCode > 128 && res.ExitCode < 128+65 {
		// bwrap and unshare report a child killed by a signal as 128+n.
		sig = syscall.Signal(res.ExitCode - 128)
	} else if s.mode == ModeUnshare && bytes.Contains(res.Stderr, []byte("unshare: sigprocmask unblock failed")) {
		// unshare re-raises its child's fatal signal on itself and fails
		// only for SIGKILL, which it cannot unblock.
		sig = syscall.SIGKILL
	}
	if res.Killed == "" {
		res.Killed = classify(sig, res.ExitCode, res.Stderr)
	}
	if res.Killed == KilledCancelled {
		return res, ctx.Err()
	}
	return res, nil
}

// classify names why a program that exited on its own failed, when a limit
// explains it. The stderr markers are what CPython and the Go runtime print
// when an allocation or a fork fails; a program can print them on purpose,
// which only mislabels its own failure in the kill statistics.
func classify(sig syscall.Signal, code int, stderr []byte) string {
	switch sig {
	case 0:
	case syscall.SIGXCPU:
		return KilledCPU
	case syscall.SIGKILL:
		// RLIMIT_CPU's hard limit is SIGKILL; nothing else in the sandbox
		// sends it (our own kills set a reason first).
		return KilledCPU
	case syscall.SIGXFSZ:
		return KilledSignal
	default:
		if hasAny(stderr, memMarkers) {
			return KilledMemory
		}
		return KilledSignal
	}
	switch {
	case hasAny(stderr, procMarkers):
		// A shell survives failed forks and may still exit 0: the limit
		// was hit all the same.
		return KilledProcs
	case code != 0 && hasAny(stderr, memMarkers):
		return KilledMemory
	}
	return ""
}

var (
	memMarkers = [][]byte{[]byte("MemoryError"), []byte("runtime: out of memory"), []byte("fatal error: out of memory"),
		[]byte("Cannot allocate memory"), []byte("cannot allocate memory"), []byte("std::bad_alloc")}
	procMarkers = [][]byte{[]byte("BlockingIOError: [Errno 11]"), []byte("Resource temporarily unavailable"),
		[]byte("failed to create new OS thread"), []byte("fork: retry"), []byte("pthread_create failed"), []byte("Cannot fork")}
)

func hasAny(b []byte, ms [][]byte) bool {
	for _, m := range ms {
		if bytes.Contains(b, m) {
			return true
		}
	}
	return false
}

// wrap builds the isolation command around spec.Argv.
func (s *Sandbox) wrap(spec Spec, dir string, fdOf func(string) (string, error)) ([]string, error) {
	switch s.mode {
	case ModeBwrap:
		a := []string{s.bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL"}
		for _, p := range s.hostRO {
			a = append(a, "--ro-bind", p, p)
		}
		for _, l := range s.symlink {
			a = append(a, "--symlink", l[0], l[1])
		}
		for _, p := range spec.ReadOnlyBinds {
			fd, err := fdOf(p)
			if err != nil {
				return nil, err
			}
			a = append(a, "--ro-bind-fd", fd, p)
		}
		a = append(a, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp")
		for _, p := range spec.WritableBinds {
			fd, err := fdOf(p)
			if err != nil {
				return nil, err
			}
			a = append(a, "--bind-fd", fd, p)
		}
		fd, err := fdOf(dir)
		if err != nil {
			return nil, err
		}
		a = append(a, "--bind-fd", fd, ScratchMount, "--chdir", filepath.Join(ScratchMount, spec.Subdir), "--clearenv")
		for _, kv := range spec.Env {
			k, v, ok := strings.Cut(kv, "=")
			if ok && k != "" {
				a = append(a, "--setenv", k, v)
			}
		}
		return append(append(a, "--"), spec.Argv...), nil
	case ModeUnshare:
		a := []string{s.unshare, "--user", "--net", "--pid", "--ipc", "--uts", "--fork", "--kill-child", "--mount-proc"}
		if !s.root {
			a = append(a, "--map-root-user")
		}
		return append(append(a, "--"), spec.Argv...), nil
	default:
		return append([]string{}, spec.Argv...), nil
	}
}

// reap kills every process left running as uid, by running kill(-1) as that
// uid: the kernel then signals exactly the processes that uid may signal,
// which are its own.
func (s *Sandbox) reap(uid int) {
	if s.kill == "" {
		return
	}
	cmd := exec.Command(s.kill, "-9", "-1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid), Groups: []uint32{}}}
	_ = cmd.Run() // "kill -1" also signals itself; its exit status says nothing
}

// userTasks counts the tasks (threads) owned by uid, the quantity
// RLIMIT_NPROC is compared with.
func userTasks(uid int) int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		fi, err := os.Stat("/proc/" + e.Name())
		if err != nil {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != uid {
			continue
		}
		tasks, err := os.ReadDir("/proc/" + e.Name() + "/task")
		if err != nil {
			n++
			continue
		}
		n += len(tasks)
	}
	return n
}

// boundedBuffers keep at most limit bytes of stdout and stderr together.
type boundedBuffers struct {
	mu             sync.Mutex
	stdout, stderr bytes.Buffer
	n, limit       int64
	over           bool
	onOverflow     func()
}

type bufWriter struct {
	b   *boundedBuffers
	dst *bytes.Buffer
}

func (b *boundedBuffers) writer(dst *bytes.Buffer) *bufWriter { return &bufWriter{b, dst} }

func (w *bufWriter) Write(p []byte) (int, error) {
	b := w.b
	b.mu.Lock()
	room := b.limit - b.n
	take := int64(len(p))
	overflow := false
	if take > room {
		take = max(room, 0)
		if !b.over {
			b.over, overflow = true, true
		}
	}
	w.dst.Write(p[:take])
	b.n += take
	b.mu.Unlock()
	if overflow {
		b.onOverflow()
	}
	return len(p), nil
}

func (b *boundedBuffers) result() ([]byte, []byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.stdout.Bytes()), bytes.Clone(b.stderr.Bytes()), b.over
}
