package server

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/svbench/svbench/env"
)

// admission shares the scoring workers (Config.Workers) between the served
// environments.
//
// Every environment has a lane: the items waiting for a worker, oldest
// first, and a limit on how many of its items run at once. A free worker
// goes to the waiting lane with the fewest items running (ties in turn), so
// busy environments converge on equal shares of the workers whatever their
// items cost: a storm of one environment's items delays another's by at most
// one item's scoring, never by the storm.
//
// Equal shares are not enough on their own: a running item cannot be
// pre-empted, so a light item arriving while heavy items (env.CostHeavy:
// seconds each) hold every worker would wait for one of them to finish.
// Heavy lanes therefore hold at most heavyCap workers together, leaving a
// reserve that only light lanes use; light items give their worker back
// within milliseconds, so they may use all of them.
type admission struct {
	mu           sync.Mutex
	workers      int // scoring workers in all
	running      int // workers in use
	heavyCap     int // most workers heavy lanes hold together
	heavyRunning int
	lanes        []*lane // in serving order, the order ties are taken in
	next         int     // the lane the next tie-break starts from
}

// lane is one environment's queue. Its mutable fields are guarded by
// admission.mu.
type lane struct {
	env   string
	cost  env.ScoreCost
	limit int // most items of this environment running at once

	running int
	queued  int       // items submitted and not started
	waiters []*waiter // goroutines blocked for a worker, oldest first
	wait    *histogram
}

// laneBatch is one request's items for one lane: their wait for a worker
// is measured from when the request handed them over.
type laneBatch struct {
	l     *lane
	since time.Time
	left  int // items not started yet; guarded by admission.mu
}

type waiter struct {
	b       *laneBatch
	ready   chan struct{}
	granted bool
}

// laneSpec describes one lane to newAdmission; limit 0 means the cost
// class's default.
type laneSpec struct {
	env   string
	cost  env.ScoreCost
	limit int
}

// heavyShare is how many of the workers heavy environments may hold
// together when light ones are served too: all but a quarter (at least
// one) kept for light items. With one worker nothing can be kept back.
func heavyShare(workers int, lightServed bool) int {
	if !lightServed || workers < 2 {
		return workers
	}
	return workers - max(1, workers/4)
}

func newAdmission(workers int, specs []laneSpec) *admission {
	light := false
	for _, sp := range specs {
		light = light || sp.cost != env.CostHeavy
	}
	a := &admission{workers: workers, heavyCap: heavyShare(workers, light)}
	for _, sp := range specs {
		limit := workers
		if sp.cost == env.CostHeavy {
			limit = a.heavyCap
		}
		if sp.limit > 0 {
			// An operator's limit may lower a lane's share or raise a
			// heavy lane's up to all workers; the reserve for light lanes
			// still applies to heavy lanes together.
			limit = min(sp.limit, workers)
		}
		a.lanes = append(a.lanes, &lane{env: sp.env, cost: sp.cost, limit: limit, wait: newHistogram()})
	}
	return a
}

// submit hands n items of a request to a lane; each then acquires a worker
// with acquire, and finish settles the ones that never started.
func (a *admission) submit(l *lane, n int) *laneBatch {
	a.mu.Lock()
	defer a.mu.Unlock()
	l.queued += n
	return &laneBatch{l: l, since: time.Now(), left: n}
}

// acquire blocks until one of b's items may run, or ctx ends. On success
// the caller scores the item and then calls release.
func (a *admission) acquire(ctx context.Context, b *laneBatch) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	a.mu.Lock()
	if len(b.l.waiters) == 0 && a.canRun(b.l) {
		// Nobody else can be owed this worker: dispatch leaves no waiter
		// that could run, so the fast path allocates nothing.
		a.start(b)
		a.mu.Unlock()
		return nil
	}
	w := &waiter{b: b, ready: make(chan struct{})}
	b.l.waiters = append(b.l.waiters, w)
	a.dispatch()
	a.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	a.mu.Lock()
	if w.granted {
		// Granted while the context ended: hand the worker on.
		a.releaseLocked(b.l)
	} else {
		ws := b.l.waiters
		for i := range ws {
			if ws[i] == w {
				b.l.waiters = append(ws[:i], ws[i+1:]...)
				break
			}
		}
	}
	a.mu.Unlock()
	return ctx.Err()
}

// release returns the worker of a finished item of l.
func (a *admission) release(l *lane) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.releaseLocked(l)
}

func (a *admission) releaseLocked(l *lane) {
	l.running--
	a.running--
	if l.cost == env.CostHeavy {
		a.heavyRunning--
	}
	a.dispatch()
}

// finish settles a batch whose goroutines are done: items that never
// started (the request ended first) no longer count as queued.
func (a *admission) finish(b *laneBatch) {
	a.mu.Lock()
	defer a.mu.Unlock()
	b.l.queued -= b.left
	b.left = 0
}

func (a *admission) canRun(l *lane) bool {
	return a.running < a.workers && l.running < l.limit &&
		(l.cost != env.CostHeavy || a.heavyRunning < a.heavyCap)
}

// dispatch hands free workers to waiters. Called with mu held after every
// change that may free a worker or add a waiter.
func (a *admission) dispatch() {
	for a.running < a.workers {
		best := -1
		for k := range a.lanes {
			i := (a.next + k) % len(a.lanes)
			l := a.lanes[i]
			if len(l.waiters) == 0 || !a.canRun(l) {
				continue
			}
			if best < 0 || l.running < a.lanes[best].running {
				best = i
			}
		}
		if best < 0 {
			return
		}
		a.next = (best + 1) % len(a.lanes)
		l := a.lanes[best]
		w := l.waiters[0]
		l.waiters[0] = nil
		l.waiters = l.waiters[1:]
		w.granted = true
		close(w.ready)
		a.start(w.b)
	}
}

// start gives one of b's items a worker. Called with mu held.
func (a *admission) start(b *laneBatch) {
	l := b.l
	l.running++
	a.running++
	if l.cost == env.CostHeavy {
		a.heavyRunning++
	}
	b.left--
	l.queued--
	l.wait.observe(time.Since(b.since).Seconds())
}

// describe is the lanes' limits for the start-up log.
func (a *admission) describe() string {
	parts := make([]string, 0, len(a.lanes))
	for _, l := range a.lanes {
		parts = append(parts, fmt.Sprintf("%s=%d(%s)", l.env, l.limit, l.cost))
	}
	return strings.Join(parts, " ")
}

// writeMetrics renders the queues in the exposition format.
func (a *admission) writeMetrics(b *strings.Builder) {
	a.mu.Lock()
	defer a.mu.Unlock()
	lanes := append([]*lane(nil), a.lanes...)
	sort.Slice(lanes, func(i, j int) bool { return lanes[i].env < lanes[j].env })
	family(b, "svbench_scoring_workers", "gauge", "Scoring workers shared by all environments (--workers).")
	sample(b, "svbench_scoring_workers", "", float64(a.workers))
	family(b, "svbench_scoring_workers_limit", "gauge", "Most items of an environment scored at once, by environment and declared cost.")
	for _, l := range lanes {
		sample(b, "svbench_scoring_workers_limit", labels("env", l.env, "cost", l.cost.String()), float64(l.limit))
	}
	family(b, "svbench_scoring_queued_items", "gauge", "Items accepted and waiting for a scoring worker, by environment.")
	for _, l := range lanes {
		sample(b, "svbench_scoring_queued_items", labels("env", l.env), float64(l.queued))
	}
	family(b, "svbench_scoring_running_items", "gauge", "Items being scored now, by environment.")
	for _, l := range lanes {
		sample(b, "svbench_scoring_running_items", labels("env", l.env), float64(l.running))
	}
	family(b, "svbench_scoring_wait_seconds", "histogram", "Time items waited for a scoring worker, by environment.")
	for _, l := range lanes {
		writeHistogram(b, "svbench_scoring_wait_seconds", []string{"env", l.env}, l.wait)
	}
}

// resolveEnvWorkers checks Config.EnvWorkers and keys it by canonical id:
// a misspelt or unserved name is an error at start-up, not a silently
// ignored limit.
func resolveEnvWorkers(r *env.Registry, served map[string]*envState, limits map[string]int) (map[string]int, error) {
	out := map[string]int{}
	for name, n := range limits {
		id, err := r.Resolve(name)
		if err != nil {
			return nil, fmt.Errorf("--env-workers %s=%d: %w", name, n, err)
		}
		if _, ok := served[id]; !ok {
			return nil, fmt.Errorf("--env-workers %s=%d: environment %s is not served (add it to --envs)", name, n, id)
		}
		if n < 1 {
			return nil, fmt.Errorf("--env-workers %s=%d: want at least 1", name, n)
		}
		out[id] = n
	}
	return out, nil
}

// run holds one of lane l's workers for fn, queueing as one item of l. It
// is how work that does not arrive as a /v1/score item (a rollout's episode
// steps and final scoring) shares the same workers: sandboxed processes
// and scanners run at most --workers at once whatever the entry point.
// It returns ctx's error, without calling fn, when ctx ends first.
func (a *admission) run(ctx context.Context, l *lane, fn func()) error {
	b := a.submit(l, 1)
	defer a.finish(b)
	if err := a.acquire(ctx, b); err != nil {
		return err
	}
	defer a.release(l)
	fn()
	return nil
}

// admittedEnv is an environment whose episodes do their work under
// admission: Start and every Step hold a worker of the environment's lane
// while they run, and nothing in between, so a rollout waiting on its
// model holds no worker. Close runs unqueued: releasing what an episode
// holds must not wait behind other work (and must not depend on a live
// context).
type admittedEnv struct {
	env.Environment
	adm  *admission
	lane *lane
}

func (e admittedEnv) Start(ctx context.Context, ex env.Example) (env.Episode, error) {
	var ep env.Episode
	var err error
	if qerr := e.adm.run(ctx, e.lane, func() { ep, err = e.Environment.Start(ctx, ex) }); qerr != nil {
		return nil, fmt.Errorf("waiting for a worker: %w", qerr)
	}
	if err != nil {
		return nil, err
	}
	return admittedEpisode{Episode: ep, adm: e.adm, lane: e.lane}, nil
}

type admittedEpisode struct {
	env.Episode
	adm  *admission
	lane *lane
}

func (ep admittedEpisode) Step(ctx context.Context, m env.Message) (env.StepResult, error) {
	var res env.StepResult
	var err error
	if qerr := ep.adm.run(ctx, ep.lane, func() { res, err = ep.Episode.Step(ctx, m) }); qerr != nil {
		return env.StepResult{}, fmt.Errorf("waiting for a worker: %w", qerr)
	}
	return res, err
}
