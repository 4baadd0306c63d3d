//go:build linux

package web

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// ownProcessGroup starts the browser in a process group of its own, so
// every process it forks (zygotes, renderers, the network service, which
// writes into the profile) can be found and stopped with it.
func ownProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	// What chromedp sets when it is not given a command hook: a test
	// binary killed mid-run takes the browser with it.
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}

// stopProcessGroup kills what is left of process group pgid and returns
// once every member has exited. The browser's main process exiting is not
// enough: its children outlive it briefly and may still be writing the
// profile a cleanup is removing ("unlinkat …/Default: directory not
// empty"). Exits are awaited through pidfds, which work for processes that
// are not our children, so nothing sleeps or polls on a clock.
func stopProcessGroup(pgid int, timeout time.Duration) error {
	if err := unix.Kill(-pgid, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
		return fmt.Errorf("kill process group %d: %w", pgid, err)
	}
	pids, err := groupMembers(pgid)
	if err != nil {
		return err
	}
	return awaitExit(pids, func(pid int) bool { g, _, ok := procStat(pid); return ok && g == pgid }, timeout)
}

// stopUsersOf kills every live process that still uses dir — started with
// it on its command line (--user-data-dir=dir), working in it, or holding
// a file under it open — and returns once they have exited. It is the
// check that holds whatever process group or session a browser helper
// put itself in (a crash handler that calls setsid, a future Chromium):
// a profile is removed only when nothing can write into it any more.
func stopUsersOf(dir string, timeout time.Duration) error {
	pids, err := usersOf(dir)
	if err != nil {
		return err
	}
	for _, pid := range pids {
		if err := unix.Kill(pid, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("kill %d: %w", pid, err)
		}
	}
	return awaitExit(pids, func(pid int) bool { return uses(pid, dir) }, timeout)
}

// usersOf lists the live processes using dir (see stopUsersOf).
func usersOf(dir string) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		if _, state, ok := procStat(pid); ok && state != 'Z' && state != 'X' && uses(pid, dir) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// uses reports whether process pid names dir on its command line, works
// in it or has a file under it open.
func uses(pid int, dir string) bool {
	proc := "/proc/" + strconv.Itoa(pid)
	under := func(p string) bool { return p == dir || strings.HasPrefix(p, dir+"/") }
	if b, err := os.ReadFile(proc + "/cmdline"); err == nil {
		for _, arg := range bytes.Split(b, []byte{0}) {
			if i := bytes.IndexByte(arg, '='); i >= 0 && bytes.HasPrefix(arg, []byte("--")) {
				arg = arg[i+1:]
			}
			if under(string(arg)) {
				return true
			}
		}
	}
	if cwd, err := os.Readlink(proc + "/cwd"); err == nil && under(cwd) {
		return true
	}
	fds, _ := os.ReadDir(proc + "/fd")
	for _, fd := range fds {
		if t, err := os.Readlink(proc + "/fd/" + fd.Name()); err == nil && under(t) {
			return true
		}
	}
	return false
}

// awaitExit returns once every process of pids has exited. still says
// whether a pid is still the process that was meant (a pid reused between
// the scan and pidfd_open is not waited for).
func awaitExit(pids []int, still func(pid int) bool, timeout time.Duration) error {
	var fds []unix.PollFd
	defer func() {
		for _, p := range fds {
			unix.Close(int(p.Fd))
		}
	}()
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if errors.Is(err, unix.ESRCH) {
			continue // gone since the scan
		}
		if err != nil {
			return fmt.Errorf("pidfd_open %d: %w", pid, err)
		}
		// The pid may have been reused between the scan and pidfd_open:
		// wait only for a process that is still the one meant.
		if !still(pid) {
			unix.Close(fd)
			continue
		}
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	deadline := time.Now().Add(timeout)
	for pending := fds; len(pending) > 0; {
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("%d processes still running after %s", len(pending), timeout)
		}
		if _, err := unix.Poll(pending, int(left.Milliseconds())+1); err != nil && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("poll pidfds: %w", err)
		}
		var still []unix.PollFd
		for _, p := range pending {
			if p.Revents == 0 {
				still = append(still, p)
			}
		}
		pending = still
	}
	return nil
}

// groupMembers lists the live processes of process group pgid. Zombies are
// left out: they write nothing, and in a container whose init does not
// reap them they never go away.
func groupMembers(pgid int) ([]int, error) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, state, ok := procStat(pid); ok && g == pgid && state != 'Z' && state != 'X' {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// procStat reads a process's group and state from /proc/PID/stat.
func procStat(pid int) (pgid int, state byte, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid pgrp …": comm may hold spaces and parens.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 3 || len(f[0]) != 1 {
		return 0, 0, false
	}
	g, err := strconv.Atoi(string(f[2]))
	if err != nil {
		return 0, 0, false
	}
	return g, f[0][0], true
}

// The group's leader exiting first leaves its children running, as the
// browser's main process does; stopProcessGroup returns only once they
// are gone too.
func TestStopProcessGroupOutlivesTheLeader(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 300 & sleep 300 & echo started; wait")
	ownProcessGroup(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cmd.Process.Kill()
	cmd.Wait()
	if left, err := groupMembers(pgid); err != nil || len(left) != 2 {
		t.Fatalf("after the leader exited: members %v (%v), want the two orphans", left, err)
	}
	if err := stopProcessGroup(pgid, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if left, err := groupMembers(pgid); err != nil || len(left) != 0 {
		t.Fatalf("still running after stopProcessGroup: %v (%v)", left, err)
	}
}

// A helper that left the browser's process group (setsid) but still works
// in the profile is found by the profile and awaited too.
func TestStopUsersOfFindsEscapedProcesses(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("setsid", "sh", "-c", "exec sleep 300")
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Skipf("setsid: %v", err)
	}
	defer cmd.Wait()
	pid := cmd.Process.Pid
	// setsid execs sh, which execs sleep: wait until the process runs sleep.
	for {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
		if err != nil {
			t.Fatal(err)
		}
		if bytes.HasPrefix(b, []byte("sleep")) {
			break
		}
		runtime.Gosched()
	}
	if got, err := usersOf(dir); err != nil || len(got) != 1 || got[0] != pid {
		t.Fatalf("users of %s: %v (%v), want [%d]", dir, got, err, pid)
	}
	if err := stopUsersOf(dir, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	if got, _ := usersOf(dir); len(got) != 0 {
		t.Fatalf("still using the profile: %v", got)
	}
	if users, _ := usersOf(filepath.Join(dir, "elsewhere")); len(users) != 0 {
		t.Fatalf("a process working in %s counted as a user of a subdirectory", dir)
	}
}
