package sandbox

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// uidPool hands out unprivileged uids, each to one run at a time across
// every svbench process on the host: a uid is held by an exclusive flock on
// its own lock file, which the kernel releases when the holder dies.
type uidPool struct {
	dir         string
	base, count int
}

func newUIDPool(dir string, base, count int) (*uidPool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: uid lock dir: %w", err)
	}
	if fi, err := os.Lstat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("sandbox: uid lock dir %s must be a directory only its owner can write", dir)
	}
	return &uidPool{dir: dir, base: base, count: count}, nil
}

func (p *uidPool) claim(ctx context.Context) (int, func(), error) {
	backoff := time.Millisecond
	for {
		start := rand.IntN(p.count)
		for i := range p.count {
			uid := p.base + (start+i)%p.count
			f, err := os.OpenFile(filepath.Join(p.dir, strconv.Itoa(uid)), os.O_RDWR|os.O_CREATE|unix.O_CLOEXEC, 0o600)
			if err != nil {
				return -1, nil, fmt.Errorf("sandbox: uid lock: %w", err)
			}
			if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
				f.Close()
				continue
			}
			return uid, func() { f.Close() }, nil
		}
		select {
		case <-ctx.Done():
			return -1, nil, ctx.Err()
		case <-time.After(backoff):
			backoff = min(2*backoff, 100*time.Millisecond)
		}
	}
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
