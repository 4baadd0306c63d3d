package sandbox

import (
	"bytes"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// watchInterval is how often a run's process tree is measured. A run can
// overshoot its memory bound for at most this long; RLIMIT_AS still caps each
// process on its own in the meantime.
const watchInterval = 50 * time.Millisecond

// watchdog measures the resident memory and task count of every process
// descending from one run's root (bwrap) and reports the first bound the run
// passes. Descendants are found through the parent links in /proc/*/stat,
// which are readable for every process (a namespace or a non-dumpable
// process does not hide them); an orphan inside the sandbox is re-parented
// to the sandbox's own init, so it stays in the tree.
type watchdog struct {
	over chan string
	quit chan struct{}
	wg   sync.WaitGroup
	peak atomic.Int64
}

func newWatchdog(root int, lim Limits) *watchdog {
	w := &watchdog{over: make(chan string, 1), quit: make(chan struct{})}
	page := int64(os.Getpagesize())
	w.wg.Go(func() {
		t := time.NewTicker(watchInterval)
		defer t.Stop()
		for {
			select {
			case <-w.quit:
				return
			case <-t.C:
			}
			rss, tasks := treeUsage(root, page)
			if rss > w.peak.Load() {
				w.peak.Store(rss)
			}
			var reason string
			switch {
			case rss > lim.Memory:
				reason = KilledMemory
			case tasks > lim.Procs+2: // bwrap's monitor and the namespace's init
				reason = KilledProcs
			}
			if reason != "" {
				w.over <- reason
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

func (w *watchdog) peakMemory() int64 { return w.peak.Load() }

// treeUsage sums resident bytes and counts tasks of root and its descendants.
func treeUsage(root int, page int64) (rss int64, tasks int) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0
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
	queue := []int{root}
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		queue = append(queue, children[pid]...)
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
