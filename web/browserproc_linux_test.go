//go:build linux

package web

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
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
		// wait only for a process that is still in the group.
		if g, _, ok := procStat(pid); !ok || g != pgid {
			unix.Close(fd)
			continue
		}
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	deadline := time.Now().Add(timeout)
	for pending := fds; len(pending) > 0; {
		left := time.Until(deadline)
		if left <= 0 {
			return fmt.Errorf("%d processes of group %d still running after %s", len(pending), pgid, timeout)
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
