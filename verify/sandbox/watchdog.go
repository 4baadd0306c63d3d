package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// watchInterval is how often a run's process tree is measured. A run can
// overshoot its memory bound for at most this long; RLIMIT_AS still caps each
// process on its own in the meantime.
const watchInterval = 50 * time.Millisecond

// watchdog measures one run's process tree and what it stores, and reports
// the first bound the run passes:
//
//   - memory: the resident memory of every process descending from the run's
//     root (bwrap) plus what the run's tmpfs mounts hold. Those mounts live in
//     the run's own mount namespace (or a nested sandbox's), so they are read
//     through /proc/PID/root of a process inside; a file in /dev/shm that a
//     process also maps is counted twice, which errs on the safe side.
//   - procs: the tasks of that tree.
//   - disk: a tmpfs that is full (its size is Limits.Tmpfs: the program saw
//     ENOSPC), or the bytes and entries of the scratch directory and writable
//     mounts, plus files the run deleted but keeps open there.
//
// Descendants are found through the parent links in /proc/*/stat, which are
// readable for every process (a namespace or a non-dumpable process does not
// hide them); an orphan inside the sandbox is re-parented to the sandbox's
// own init, so it stays in the tree.
type watchdog struct {
	over     chan overrun
	quit     chan struct{}
	wg       sync.WaitGroup
	peakMem  atomic.Int64
	peakDisk atomic.Int64
}

// overrun is a bound a run passed: a Killed* reason and what exceeded it.
type overrun struct{ reason, detail string }

// maxScratchEntries bounds the files and directories a run may create in its
// scratch directory and writable mounts: inodes are a resource too, and
// walking millions of entries would cost the host more than the run.
const maxScratchEntries = 1 << 14

// diskMinInterval is the shortest time between two walks of the scratch
// tree; a walk that takes longer spaces the next one by four times its own
// duration, so measuring costs at most a fifth of a core.
const diskMinInterval = 100 * time.Millisecond

// diskRoots are the host directories whose contents count towards
// Limits.Disk: the scratch directory and the writable mounts. Writable binds
// (a compile stage's build cache) are not counted: only trusted stages get
// them.
func diskRoots(scratch string, mounts []Mount) []string {
	roots := []string{scratch}
	for _, m := range mounts {
		if m.Writable {
			roots = append(roots, m.Source)
		}
	}
	return roots
}

func newWatchdog(root int, lim Limits, disk []string) *watchdog {
	w := &watchdog{over: make(chan overrun, 1), quit: make(chan struct{})}
	page := int64(os.Getpagesize())
	ownNS, _ := os.Readlink("/proc/self/ns/mnt")
	w.wg.Go(func() {
		t := time.NewTicker(watchInterval)
		defer t.Stop()
		var nextDisk time.Time
		for {
			select {
			case <-w.quit:
				return
			case <-t.C:
			}
			pids := tree(root)
			rss, tasks := treeUsage(pids, page)
			tmp := tmpfsUsage(pids, root, ownNS)
			mem := rss + tmp.used
			if mem > w.peakMem.Load() {
				w.peakMem.Store(mem)
			}
			var o overrun
			switch {
			case mem > lim.Memory:
				o = overrun{KilledMemory, fmt.Sprintf("resident %d MiB + tmpfs %d MiB > %d MiB", rss>>20, tmp.used>>20, lim.Memory>>20)}
			case tasks > lim.Procs+2: // bwrap's monitor and the namespace's init
				o = overrun{KilledProcs, fmt.Sprintf("%d tasks > %d", tasks-2, lim.Procs)}
			case tmp.full != "":
				o = overrun{KilledDisk, fmt.Sprintf("tmpfs %s is full (%d MiB)", tmp.full, lim.Tmpfs>>20)}
			}
			if o.reason == "" && !time.Now().Before(nextDisk) {
				start := time.Now()
				used, entries, unreadable := diskUsage(disk, pids, tmp.devs)
				nextDisk = time.Now().Add(max(diskMinInterval, 4*time.Since(start)))
				if used > w.peakDisk.Load() {
					w.peakDisk.Store(used)
				}
				switch {
				case used > lim.Disk:
					o = overrun{KilledDisk, fmt.Sprintf("scratch holds %d MiB > %d MiB", used>>20, lim.Disk>>20)}
				case entries > maxScratchEntries:
					o = overrun{KilledDisk, fmt.Sprintf("scratch holds more than %d entries", maxScratchEntries)}
				case unreadable != "":
					// What svbench cannot read it cannot measure:
					// fail closed.
					o = overrun{KilledDisk, "scratch has a directory svbench cannot read: " + unreadable}
				}
			}
			if o.reason != "" {
				w.over <- o
				return
			}
		}
	})
	return w
}

func (w *watchdog) stop() {
	close(w.quit)
	w.wg.Wait()
}

func (w *watchdog) peaks() (memory, disk int64) { return w.peakMem.Load(), w.peakDisk.Load() }

// tree lists root and its descendants.
func tree(root int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return []int{root}
	}
	children := map[int][]int{}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if ppid, ok := parentOf(pid); ok {
			children[ppid] = append(children[ppid], pid)
		}
	}
	out := []int{root}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// treeUsage sums resident bytes and counts tasks of pids.
func treeUsage(pids []int, page int64) (rss int64, tasks int) {
	for _, pid := range pids {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/statm"); err == nil {
			if f := bytes.Fields(b); len(f) > 1 {
				if n, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
					rss += n * page
				}
			}
		}
		if ts, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task"); err == nil {
			tasks += len(ts)
		} else {
			tasks++
		}
	}
	return rss, tasks
}

// tmpfsMounts are where a sandbox (ours, or one a program nests) has tmpfs
// mounts a program may be able to write.
var tmpfsMounts = [...]string{"/", "/dev", "/dev/shm", "/tmp"}

type tmpfsState struct {
	used int64
	full string              // a mount with no space left, "" if none
	devs map[uint64]struct{} // the tmpfs instances seen
}

// tmpfsUsage measures the tmpfs instances at tmpfsMounts in every mount
// namespace of the run other than svbench's own, each instance once.
func tmpfsUsage(pids []int, root int, ownNS string) tmpfsState {
	st := tmpfsState{devs: map[uint64]struct{}{}}
	seenNS := map[string]bool{ownNS: true}
	for _, pid := range pids {
		if pid == root {
			continue
		}
		p := "/proc/" + strconv.Itoa(pid)
		ns, err := os.Readlink(p + "/ns/mnt")
		if err != nil || seenNS[ns] {
			continue
		}
		seenNS[ns] = true
		for _, m := range tmpfsMounts {
			var fs unix.Statfs_t
			var fi unix.Stat_t
			path := p + "/root" + m
			if unix.Statfs(path, &fs) != nil || fs.Type != unix.TMPFS_MAGIC || unix.Stat(path, &fi) != nil {
				continue
			}
			if _, ok := st.devs[fi.Dev]; ok {
				continue
			}
			st.devs[fi.Dev] = struct{}{}
			st.used += int64(fs.Blocks-fs.Bfree) * fs.Bsize
			if fs.Blocks > 0 && fs.Bavail == 0 && st.full == "" {
				st.full = m
			}
		}
	}
	return st
}

// diskUsage sums the allocated bytes of everything under roots and of the
// deleted files the run's processes keep open (on anything but a tmpfs,
// which tmpfsUsage counts), and counts the entries under roots, stopping
// past maxScratchEntries. unreadable names a directory the walk could not
// list.
func diskUsage(roots []string, pids []int, tmpfs map[uint64]struct{}) (used int64, entries int, unreadable string) {
	for _, r := range roots {
		_ = filepath.WalkDir(r, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				if errors.Is(err, fs.ErrPermission) && unreadable == "" {
					unreadable = p
				}
				return nil // vanished while walking
			}
			entries++
			if entries > maxScratchEntries {
				return filepath.SkipAll
			}
			if fi, err := d.Info(); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok {
					used += st.Blocks * 512
				}
			}
			return nil
		})
	}
	seen := map[[2]uint64]bool{}
	for _, pid := range pids {
		dir := "/proc/" + strconv.Itoa(pid) + "/fd"
		fds, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, fd := range fds {
			var st unix.Stat_t
			if unix.Stat(dir+"/"+fd.Name(), &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink != 0 {
				continue
			}
			if _, ok := tmpfs[st.Dev]; ok || seen[[2]uint64{st.Dev, st.Ino}] {
				continue
			}
			seen[[2]uint64{st.Dev, st.Ino}] = true
			used += st.Blocks * 512
		}
	}
	return used, entries, unreadable
}

// parentOf reads the parent pid from /proc/PID/stat ("pid (comm) state ppid
// …"; comm may hold spaces and parentheses, so parse after the last ')').
func parentOf(pid int) (int, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 2 {
		return 0, false
	}
	ppid, err := strconv.Atoi(string(f[1]))
	return ppid, err == nil
}
