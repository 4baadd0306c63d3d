package procs

import (
	"context"
	"os"
	"runtime"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestDecide(t *testing.T) {
	for _, c := range []struct {
		share  float64
		raised bool
		want   bool
	}{
		{0.40, false, true},  // waiting on the network: raise
		{0.59, false, true},  // just below Low
		{0.70, false, false}, // between: stay
		{0.95, false, false}, // computing: stay at the cores
		{0.70, true, true},   // between: stay raised (no flapping)
		{0.84, true, true},
		{0.90, true, false}, // computing while raised: lower
	} {
		if got := decide(c.share, c.raised); got != c.want {
			t.Errorf("decide(%.2f, raised %v) = %v, want %v", c.share, c.raised, got, c.want)
		}
	}
}

// fakeProcess is a process whose CPU use per second the test sets, and
// which records what GOMAXPROCS was set to.
type fakeProcess struct {
	mu    sync.Mutex
	share float64 // of base cores, from now on
	used  time.Duration
	at    time.Time
	base  int
	sets  []int
	known bool
}

func (f *fakeProcess) cpu() (time.Duration, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := time.Now()
	f.used += time.Duration(float64(now.Sub(f.at)) * f.share * float64(f.base))
	f.at = now
	return f.used, f.known
}

func (f *fakeProcess) use(share float64) {
	f.cpu() // account the time so far at the old rate
	f.mu.Lock()
	f.share = share
	f.mu.Unlock()
}

func (f *fakeProcess) set(n int) {
	f.mu.Lock()
	f.sets = append(f.sets, n)
	f.mu.Unlock()
}

func (f *fakeProcess) history() []int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]int(nil), f.sets...)
}

func TestAdapterFollowsTheProcesssCPU(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeProcess{base: 2, at: time.Now(), known: true, share: 0.95}
		a := &adapter{base: 2, cpu: f.cpu, set: f.set, every: time.Second}
		stop := a.start(context.Background())
		time.Sleep(3500 * time.Millisecond) // computing: nothing changes
		synctest.Wait()
		if h := f.history(); len(h) != 0 {
			t.Fatalf("set %v while the process used 95%% of the cores", h)
		}
		f.use(0.4) // now waiting on the network
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if h := f.history(); len(h) != 1 || h[0] != 4 {
			t.Fatalf("after an interval at 40%%: set %v, want [4]", h)
		}
		f.use(0.9) // computing again
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if h := f.history(); len(h) != 2 || h[1] != 0 {
			t.Fatalf("after an interval at 90%%: set %v, want [4 0] (0: the runtime's default)", h)
		}
		f.use(0.3)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		stop() // raised when stopped: restored
		if h := f.history(); len(h) != 4 || h[2] != 4 || h[3] != 0 {
			t.Fatalf("stopped while raised: set %v, want [4 0 4 0]", h)
		}
	})
}

func TestAdapterWithoutAMeasureChangesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeProcess{base: 2, at: time.Now(), known: false, share: 0}
		stop := (&adapter{base: 2, cpu: f.cpu, set: f.set, every: time.Second}).start(context.Background())
		time.Sleep(5 * time.Second)
		stop()
		if h := f.history(); len(h) != 0 {
			t.Fatalf("set %v with no CPU measure", h)
		}
	})
}

// TestAdaptNestsAndRestores: concurrent callers share one controller, and
// the process's setting is the default again once the last one stops (or
// its context ends).
func TestAdaptNestsAndRestores(t *testing.T) {
	if _, set := os.LookupEnv("GOMAXPROCS"); set {
		t.Skip("GOMAXPROCS is set in the environment: Adapt leaves it alone")
	}
	before := runtime.GOMAXPROCS(0)
	ctx, cancel := context.WithCancel(context.Background())
	stop1 := Adapt(ctx)
	stop2 := Adapt(context.Background())
	mu.Lock()
	n := users
	mu.Unlock()
	if n != 2 {
		t.Fatalf("%d users, want 2", n)
	}
	cancel() // the first caller's context ends: it lets go
	stop1()  // and stopping again is harmless
	stop2()
	mu.Lock()
	n, running := users, stopFn != nil
	mu.Unlock()
	if n != 0 || running {
		t.Fatalf("after both stopped: %d users, controller running %v", n, running)
	}
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Errorf("GOMAXPROCS %d after the last stop, want %d", got, before)
	}
}

func TestAdaptLeavesAGOMAXPROCSFromTheEnvironment(t *testing.T) {
	t.Setenv("GOMAXPROCS", "3")
	stop := Adapt(context.Background())
	defer stop()
	mu.Lock()
	defer mu.Unlock()
	if users != 0 {
		t.Errorf("a controller started although GOMAXPROCS is set")
	}
}
