package sandbox

import (
	"bytes"
	"errors"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

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

// killTree kills a run's process tree and returns a pidfd for each process
// it found below the root. bwrap's monitor (the root) is alone in its
// process group: the namespace's init runs in a session of its own, so the
// group kill reaches it only through --die-with-parent, after the monitor
// has gone. Without waiting for those processes a cancelled Run could
// return while the code under test still ran (seen on a loaded machine).
func killTree(p *os.Process) []int {
	if p == nil {
		return nil
	}
	var fds []int
	for _, pid := range tree(p.Pid)[1:] {
		// A pidfd names the process itself, not its number, so neither the
		// signal nor the wait can reach a process that reused the pid.
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue
		}
		_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		fds = append(fds, fd)
	}
	_ = syscall.Kill(-p.Pid, syscall.SIGKILL)
	return fds
}

// awaitGone waits until every pidfd's process has exited (a pidfd polls
// readable then), at most limit in all, and closes them.
func awaitGone(fds []int, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for _, fd := range fds {
		for {
			left := time.Until(deadline)
			if left <= 0 {
				break
			}
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			n, err := unix.Poll(pfd, int(min(left, time.Second).Milliseconds())+1)
			if n > 0 || (err != nil && !errors.Is(err, unix.EINTR)) {
				break
			}
		}
		_ = unix.Close(fd)
	}
}
