// Package sandbox runs untrusted programs (model-written code and the tests
// that exercise it) in one kind of sandbox, the same on every Linux host that
// allows unprivileged user namespaces, and refuses to run them anywhere else.
//
// # Mechanism
//
// Debian's bubblewrap (bwrap). Every namespace is unshared (user, pid, net,
// ipc, uts, cgroup, mount): the program sees an empty root holding read-only
// binds of /usr (and /lib, /lib64, /bin as the host lays them out),
// /etc/alternatives, /etc/ssl and the toolchains, a fresh /dev, a fresh /proc
// of its own pid namespace (or none, Spec.NoProc), private tmpfs mounts at
// /tmp and /dev/shm of Limits.Tmpfs bytes each, and the scratch directory at
// /scratch, the only writable bind besides the ones the caller names; the
// root bwrap builds and /dev are read-only, so no other RAM-backed mount can
// be filled. A seccomp filter (seccomp.go) denies the system calls code under
// test never needs. The network namespace holds only a loopback device,
// brought up by bwrap, so 127.0.0.1 works and is not the host's.
// --die-with-parent and the pid namespace mean the whole tree dies with the
// run. Nothing of svbench's environment reaches any process inside: bwrap and
// prlimit themselves start with an empty environment (pid 1 of the sandbox is
// bwrap, and /proc/1/environ is readable from inside), and the program gets
// exactly Spec.Env.
//
// There is no weaker fallback: a host without bwrap or without user
// namespaces gets ErrNoIsolation naming the package and the sysctl, so a
// verdict never depends on which mechanism a host happened to offer.
// Sandboxes nest: a program inside may start bwrap again (E3 runs the code
// under test in an inner sandbox that cannot see the trusted test runner).
//
// # Limits
//
// Per process, util-linux prlimit sets RLIMIT_AS, RLIMIT_CPU, RLIMIT_FSIZE and
// RLIMIT_NPROC on itself and then executes bwrap, so they hold from the first
// instruction and are inherited. Per run, a watchdog sums the resident memory
// and counts the tasks of every process descending from the run and kills the
// run when either passes Limits.Memory (which counts what the run's tmpfs
// mounts hold too) or Limits.Procs: forty processes that each stay under the
// per-process limit do not add up to more than the run may hold. It also
// kills a run whose tmpfs is full or whose scratch directory and writable
// mounts hold more than Limits.Disk (see watchdog). The wall clock and the output size are enforced here by killing
// the process group.
//
// RLIMIT_NPROC counts every task of a user and is not enforced for root. When
// svbench runs as root (containers, CI) each concurrent run therefore gets its
// own unprivileged uid from a pool, claimed with a lock file so that two
// svbench processes on one host never share a uid, and host files readable
// only by root stay unreadable.
package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Mode names the isolation mechanism, for run metadata and reports.
type Mode string

// ModeBwrap is the only mechanism: bubblewrap with every namespace unshared.
const ModeBwrap Mode = "bwrap"

// Kill reasons reported in Result.Killed.
const (
	KilledTimeout   = "timeout"   // wall-clock limit
	KilledCPU       = "cpu"       // RLIMIT_CPU (SIGXCPU or SIGKILL at the hard limit)
	KilledMemory    = "memory"    // a process's address space or the run's total memory
	KilledProcs     = "procs"     // process-count limit hit (fork failed, or the run's total)
	KilledOutput    = "output"    // stdout+stderr over Limits.Output
	KilledDisk      = "disk"      // scratch over Limits.Disk, or a tmpfs full (Limits.Tmpfs)
	KilledSignal    = "signal"    // died from another signal
	KilledCancelled = "cancelled" // the caller's context ended
)

// ScratchMount is where the scratch directory appears inside the sandbox.
const ScratchMount = "/scratch"

// ErrNoIsolation is returned by New when bubblewrap is missing or cannot
// create its namespaces on this host.
var ErrNoIsolation = errors.New("sandbox: bubblewrap isolation does not work on this host")

// InstallHint is what a user without a working sandbox should do.
const InstallHint = "install bubblewrap (apt-get install bubblewrap, or `make deps`) and allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 and user.max_user_namespaces>0; in a container, run it with --security-opt seccomp=unconfined or an equivalent that permits unshare(CLONE_NEWUSER))"

// Limits bound one run. Zero fields take DefaultLimits' values.
type Limits struct {
	CPU          time.Duration
	Wall         time.Duration
	AddressSpace int64 // bytes of virtual memory per process
	Memory       int64 // resident bytes of the whole run (every process together)
	Procs        int   // processes and threads of the whole run
	FileSize     int64 // largest file a process may write, bytes
	Output       int64 // stdout+stderr bytes kept; more kills the run
	// Tmpfs is the size of each RAM-backed mount the program can write,
	// /tmp and /dev/shm (the root and /dev are read-only). What they hold
	// counts towards Memory too, so Memory is the run's bound on RAM.
	Tmpfs int64
	// Disk bounds the bytes the run holds in its scratch directory and
	// writable Mounts, files it deleted but keeps open included, and
	// (maxScratchEntries) how many entries it creates there.
	Disk int64
}

// DefaultLimits suit a unit-test run of a small program.
var DefaultLimits = Limits{
	CPU: 10 * time.Second, Wall: 20 * time.Second, AddressSpace: 1 << 30, Memory: 1 << 30,
	Procs: 64, FileSize: 16 << 20, Output: 256 << 10, Tmpfs: 64 << 20, Disk: 256 << 20,
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
	if l.Memory <= 0 {
		l.Memory = max(d.Memory, l.AddressSpace)
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
	if l.Tmpfs <= 0 {
		l.Tmpfs = d.Tmpfs
	}
	if l.Disk <= 0 {
		l.Disk = max(d.Disk, l.FileSize)
	}
	return l
}

// Mount makes a host path visible at Target inside the sandbox.
type Mount struct {
	Source   string // host path
	Target   string // absolute path inside the sandbox
	Writable bool
}

// Spec is one program run.
type Spec struct {
	// Argv is the program and its arguments; Argv[0] should be absolute.
	Argv []string
	// Dir is the host scratch directory, mounted writable at ScratchMount:
	// make it with NewScratch.
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
	// shared uid (see Sandbox.SharedDir), never as a pool uid, so only
	// trusted stages (a compiler that does not execute its input) may use it.
	WritableBinds []string
	// Mounts are extra host paths at other places.
	Mounts []Mount
	// NoProc leaves /proc out: the program cannot read its own memory or
	// file descriptors through it (/proc/self/mem, /dev/fd/N).
	NoProc bool
	// ExtraFiles become file descriptors 3, 4, … of the program.
	ExtraFiles []*os.File
	// Nesting lets the program start bubblewrap itself: the seccomp filter
	// then allows namespaces (unshare, clone with CLONE_NEW*) and the
	// classic mount calls, and the strict filter is readable at
	// SeccompFilterPath for the program to install on the sandbox it
	// starts. Only a trusted program (E3's test runner) may ask for it.
	Nesting bool
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
	// PeakMemory is the largest total the watchdog saw of resident memory
	// and of what the run's tmpfs mounts hold.
	PeakMemory int64
	// PeakDisk is the most the run held in its scratch directory and
	// writable mounts (deleted but open files included).
	PeakDisk int64
	// Detail says which bound a watchdog kill (memory, procs, disk) passed
	// and by how much.
	Detail string
}

// OK reports a clean zero exit.
func (r Result) OK() bool { return r.Killed == "" && r.ExitCode == 0 }

// Options configure New.
type Options struct {
	// Mode may be empty or ModeBwrap; anything else is an error (there is
	// no weaker mode to choose).
	Mode Mode
	// UIDBase and UIDCount define the uid pool used when running as root
	// (defaults 100000 and 4096). The uid just below the pool is the shared
	// uid of runs with writable binds.
	UIDBase, UIDCount int
	// LockDir holds the pool's lock files (default /var/tmp/svbench-uids).
	LockDir string
}

// Sandbox runs programs. It is safe for concurrent use.
type Sandbox struct {
	bwrap   string
	prlimit string
	root    bool
	uids    *uidPool
	uidBase int
	hostRO  []string // base read-only binds
	symlink [][2]string

	scratchMu   sync.Mutex
	scratchBase string

	// seccomp programs as bwrap reads them: strict, and for Spec.Nesting.
	strict, nesting []byte
}

// New checks that bubblewrap works here (a trivial program is run) and
// returns a sandbox using it.
func New(ctx context.Context, opts Options) (*Sandbox, error) {
	if opts.Mode != "" && opts.Mode != ModeBwrap {
		return nil, fmt.Errorf("sandbox: unknown mode %q (the only mode is %q)", opts.Mode, ModeBwrap)
	}
	s := &Sandbox{root: os.Geteuid() == 0}
	var err error
	if s.bwrap, err = exec.LookPath("bwrap"); err != nil {
		return nil, fmt.Errorf("%w: bwrap not found; %s", ErrNoIsolation, InstallHint)
	}
	if s.prlimit, err = exec.LookPath("prlimit"); err != nil {
		return nil, fmt.Errorf("%w: prlimit not found (apt-get install util-linux): %v", ErrNoIsolation, err)
	}
	if opts.UIDBase <= 0 {
		opts.UIDBase = 100000
	}
	if opts.UIDCount <= 0 {
		opts.UIDCount = 4096
	}
	s.uidBase = opts.UIDBase
	if s.root {
		dir := opts.LockDir
		if dir == "" {
			dir = "/var/tmp/svbench-uids"
		}
		if s.uids, err = newUIDPool(dir, opts.UIDBase, opts.UIDCount); err != nil {
			return nil, err
		}
	}
	s.hostLayout()
	for _, f := range []struct {
		dst     *[]byte
		nesting bool
	}{{&s.strict, false}, {&s.nesting, true}} {
		raw, err := seccompProgram(f.nesting)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNoIsolation, err)
		}
		*f.dst = encodeProgram(raw)
	}
	dir, cleanup, err := s.NewScratch()
	if err != nil {
		return nil, err
	}
	defer cleanup()
	res, err := s.Run(ctx, Spec{Argv: []string{"/bin/sh", "-c", "exit 0"}, Dir: dir, Limits: Limits{Wall: 10 * time.Second}})
	if err == nil && !res.OK() {
		err = fmt.Errorf("exit %d, killed=%q: %s", res.ExitCode, res.Killed, strings.TrimSpace(string(res.Stderr)))
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v; %s", ErrNoIsolation, err, InstallHint)
	}
	return s, nil
}

// Mode reports the mechanism, for run metadata and reports.
func (s *Sandbox) Mode() Mode { return ModeBwrap }

// SharedUID is the uid runs with writable binds execute as, or -1 when
// svbench is not root (every run then executes as the invoking user).
func (s *Sandbox) SharedUID() int {
	if !s.root {
		return -1
	}
	return s.uidBase - 1
}

// Close releases nothing today: every scratch directory is removed by the
// cleanup NewScratch returns, and the shared base stays for other runs.
func (s *Sandbox) Close() error { return nil }

// Run executes spec and waits for it. A non-nil error means the sandbox could
// not run the program (bad spec, missing binary, cancellation); what the
// program did, including being killed, is in the Result.
func (s *Sandbox) Run(ctx context.Context, spec Spec) (Result, error) {
	res := Result{Mode: ModeBwrap}
	dir, err := checkSpec(spec)
	if err != nil {
		return res, err
	}
	lim := spec.Limits.withDefaults()
	uid, release, err := s.runAs(ctx, spec, dir)
	if err != nil {
		return res, err
	}
	defer release()
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
	fds := &bwrapFiles{files: append([]*os.File{}, spec.ExtraFiles...)}
	defer fds.close()
	wrapped, err := s.wrap(spec, dir, lim, fds.bind, fds.data)
	if err != nil {
		return res, err
	}
	argv = append(argv, wrapped...)

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.ExtraFiles = fds.files
	// Empty, not nil: a nil Env would hand svbench's whole environment
	// (API keys, the server's token) to prlimit and bwrap, and bwrap is
	// pid 1 inside, whose /proc/1/environ the program can read.
	cmd.Env = []string{}
	cmd.Dir = "/"
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
	var doomed []int // pidfds of the processes a kill found
	killWith := func(r string) {
		once.Do(func() {
			fds := killTree(cmd.Process)
			mu.Lock()
			reason, doomed = r, fds
			mu.Unlock()
		})
	}
	out := &boundedBuffers{limit: lim.Output, onOverflow: func() { killWith(KilledOutput) }}
	cmd.Stdout = out.writer(&out.stdout)
	cmd.Stderr = out.writer(&out.stderr)
	cmd.WaitDelay = 2 * time.Second

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("sandbox: starting %s: %w", argv[0], err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	timer := time.NewTimer(lim.Wall)
	defer timer.Stop()
	watch := newWatchdog(cmd.Process.Pid, lim, diskRoots(dir, spec.Mounts))
	defer watch.stop()
	var waitErr error
	select {
	case waitErr = <-done:
	case <-timer.C:
		killWith(KilledTimeout)
		waitErr = <-done
	case r := <-watch.over:
		killWith(r.reason)
		res.Detail = r.detail
		waitErr = <-done
	case <-ctx.Done():
		killWith(KilledCancelled)
		waitErr = <-done
	}
	// The pid namespace's init is gone, so the kernel has killed every
	// process inside; the group kill covers the window before bwrap set
	// the namespace up.
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	mu.Lock()
	pidfds := doomed
	mu.Unlock()
	awaitGone(pidfds, 10*time.Second)
	res.Duration = time.Since(start)
	res.PeakMemory, res.PeakDisk = watch.peaks()
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
	} else if res.ExitCode > 128 && res.ExitCode < 128+65 {
		// bwrap reports a child killed by a signal as 128+n.
		sig = syscall.Signal(res.ExitCode - 128)
	}
	if res.Killed == "" {
		res.Killed = classify(sig, res.ExitCode, res.Stderr)
	}
	if res.Killed == KilledCancelled {
		return res, ctx.Err()
	}
	return res, nil
}

// checkSpec refuses a spec the sandbox cannot run and returns its scratch
// directory, absolute.
func checkSpec(spec Spec) (string, error) {
	if len(spec.Argv) == 0 {
		return "", errors.New("sandbox: empty argv")
	}
	if spec.Dir == "" {
		return "", errors.New("sandbox: no scratch directory")
	}
	dir, err := filepath.Abs(spec.Dir)
	if err != nil {
		return "", fmt.Errorf("sandbox: scratch dir: %w", err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("sandbox: scratch dir %s is not a directory", dir)
	}
	if spec.Subdir != "" && !filepath.IsLocal(spec.Subdir) {
		return "", fmt.Errorf("sandbox: subdir %q is not inside the scratch directory", spec.Subdir)
	}
	return dir, nil
}

// runAs picks the uid the program runs as and hands it the scratch tree:
// as root, a pool uid of its own (or the shared one when the run writes
// outside its scratch directory); otherwise -1, the caller's. release
// returns a pool uid.
func (s *Sandbox) runAs(ctx context.Context, spec Spec, dir string) (uid int, release func(), err error) {
	release = func() {}
	if !s.root {
		return -1, release, nil
	}
	// The scratch tree is handed to the run's uid: it must be one
	// NewScratch made, never a directory of someone else's.
	if rel, err := filepath.Rel(s.ScratchBase(), dir); s.ScratchBase() == "" || err != nil || !filepath.IsLocal(rel) || strings.Contains(rel, string(filepath.Separator)) {
		return 0, nil, fmt.Errorf("sandbox: scratch dir %s was not made by NewScratch (under %s)", dir, s.ScratchBase())
	}
	if len(spec.WritableBinds) > 0 || hasWritableMount(spec.Mounts) {
		uid = s.SharedUID()
	} else if uid, release, err = s.uids.claim(ctx); err != nil {
		return 0, nil, err
	}
	if err := chownTree(dir, uid); err != nil {
		release()
		return 0, nil, fmt.Errorf("sandbox: handing scratch dir to uid %d: %w", uid, err)
	}
	return uid, release, nil
}
