// Package procs raises GOMAXPROCS above the core count while a process
// mostly waits on the network, and lowers it back when it computes.
//
// Why: with GOMAXPROCS equal to the cores, a goroutine whose connection
// became readable runs only when a processor has drained its queue of
// runnable goroutines (or at sysmon's 10 ms network poll). An evaluation
// waiting on a model endpoint has short bursts of work when answers arrive
// together, and each answer waits out the burst: on two cores the harness
// benchmark spent about 3 ms per 50 ms call so, at 40% CPU. Twice the cores
// in processors lets the OS interleave those goroutines (the run alone went
// from about 92% to 95% of the endpoint's limit). Work that keeps the cores
// busy loses to the oversubscription instead (E2's verifiers: 6 to 26%
// slower), so the setting follows the process's own CPU use: raised when
// it stays below Low of the cores, lowered when it climbs above High.
//
// The OS's account of the process's CPU time is the measure, not the Go
// scheduler's: the latter counts processors, which is what changes here.
// GOMAXPROCS set in the environment wins: nothing is changed then.
package procs

import (
	"context"
	"os"
	"runtime"
	"sync"
	"time"
)

// Thresholds of the share of the cores the process used over the last
// interval.
const (
	Low  = 0.6  // below: waiting, not computing; raise
	High = 0.85 // above: computing; lower
	// Every is the interval the share is measured over.
	Every = 500 * time.Millisecond
)

// controller is the one adapter of the process: GOMAXPROCS is global, so
// concurrent runs (several evals in one process, parallel tests) share it,
// and the last to stop restores the runtime's default.
var (
	mu     sync.Mutex
	users  int
	stopFn func()
)

// Adapt starts adapting GOMAXPROCS until the returned function is called
// (or ctx ends). Calls nest: the setting is restored when the last caller
// stops. It does nothing where GOMAXPROCS is set in the environment.
func Adapt(ctx context.Context) (stop func()) {
	if _, set := os.LookupEnv("GOMAXPROCS"); set {
		return func() {}
	}
	mu.Lock()
	defer mu.Unlock()
	users++
	if users == 1 {
		a := &adapter{base: runtime.GOMAXPROCS(0), cpu: processCPU, set: setProcs, every: Every}
		stopFn = a.start(context.WithoutCancel(ctx))
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			users--
			if users == 0 {
				stopFn()
				stopFn = nil
			}
		})
	}
	unhook := context.AfterFunc(ctx, release)
	return func() {
		unhook()
		release()
	}
}

// adapter is the control loop, with what it reads and sets injected so a
// test can drive it.
type adapter struct {
	base  int                          // the cores' worth: the runtime's default
	cpu   func() (time.Duration, bool) // the process's CPU time so far, false where unknown
	set   func(n int)                  // sets GOMAXPROCS; 0 restores the default
	every time.Duration
}

// start runs the loop until the returned function is called, which
// restores the default if the loop raised it and waits for the loop to end.
func (a *adapter) start(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		raised := false
		defer func() {
			if raised {
				a.set(0)
			}
		}()
		t := time.NewTicker(a.every)
		defer t.Stop()
		lastCPU, known := a.cpu()
		if !known {
			return // no measure, no change
		}
		lastAt := time.Now()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				c, ok := a.cpu()
				if !ok {
					continue
				}
				share := (c - lastCPU).Seconds() / (now.Sub(lastAt).Seconds() * float64(a.base))
				lastCPU, lastAt = c, now
				if want := decide(share, raised); want != raised {
					raised = want
					if raised {
						a.set(2 * a.base)
					} else {
						a.set(0)
					}
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// decide says whether GOMAXPROCS should be raised after an interval in
// which the process used share of the cores.
func decide(share float64, raised bool) bool {
	switch {
	case !raised && share < Low:
		return true
	case raised && share > High:
		return false
	}
	return raised
}

func setProcs(n int) {
	if n == 0 {
		runtime.SetDefaultGOMAXPROCS()
		return
	}
	runtime.GOMAXPROCS(n)
}
