// Package usage counts the tokens a run's model calls consume, by role
// (policy, judge, target) and model, and prices them from a user-supplied
// price file. Wrap every client a run uses with one Recorder; the runner
// copies its Snapshot into metadata.json.
package usage

import (
	"cmp"
	"context"
	"slices"
	"sync"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
)

// Recorder accumulates usage. The zero value is not usable; use New. It is
// safe for concurrent use by every worker of a run.
type Recorder struct {
	mu sync.Mutex
	m  map[key]*artifact.ModelUsage
}

type key struct{ role, model string }

// New returns an empty recorder.
func New() *Recorder {
	return &Recorder{m: map[key]*artifact.ModelUsage{}}
}

// Wrap returns a client that records every call c answers under role and the
// requested model. A nil recorder returns c unchanged, so callers need no
// branch when accounting is off.
func (r *Recorder) Wrap(c llm.Client, role string) llm.Client {
	if r == nil || c == nil {
		return c
	}
	return &client{next: c, rec: r, role: role}
}

type client struct {
	next llm.Client
	rec  *Recorder
	role string
}

func (c *client) Chat(ctx context.Context, req llm.Request) (llm.Response, error) {
	resp, err := c.next.Chat(ctx, req)
	if err != nil {
		c.rec.Fail(c.role, req.Model)
		return resp, err
	}
	switch {
	case resp.Cached:
		c.rec.AddCached(c.role, req.Model, resp.Usage)
	case resp.CacheRejected:
		c.rec.AddCacheRejected(c.role, req.Model, resp.Usage)
	default:
		c.rec.Add(c.role, req.Model, resp.Usage)
	}
	return resp, nil
}

// Add records one answered call. Components that do not go through an
// llm.Client (an in-process target reporting its own usage) call it
// directly.
func (r *Recorder) Add(role, model string, u env.Usage) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.entry(role, model)
	e.Calls++
	e.Usage.Add(u)
}

// AddCached records one call replayed from the response cache.
func (r *Recorder) AddCached(role, model string, u env.Usage) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.entry(role, model)
	e.CachedCalls++
	e.CachedUsage.Add(u)
}

// AddCacheRejected records one answered call that replaced a cache entry
// which failed its checks.
func (r *Recorder) AddCacheRejected(role, model string, u env.Usage) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.entry(role, model)
	e.Calls++
	e.CacheRejected++
	e.Usage.Add(u)
}

// Fail records one failed call.
func (r *Recorder) Fail(role, model string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entry(role, model).Errors++
}

func (r *Recorder) entry(role, model string) *artifact.ModelUsage {
	k := key{role, model}
	e := r.m[k]
	if e == nil {
		e = &artifact.ModelUsage{Role: role, Model: model}
		r.m[k] = e
	}
	return e
}

// Restore replaces the recorder's counts with prev (a resumed run's
// metadata), so usage keeps adding up across sessions of one run; nil
// empties it for a new run.
func (r *Recorder) Restore(prev []artifact.ModelUsage) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.m = map[key]*artifact.ModelUsage{}
	for _, u := range prev {
		u.Cost = nil
		e := r.entry(u.Role, u.Model)
		e.Calls += u.Calls
		e.CachedCalls += u.CachedCalls
		e.Errors += u.Errors
		e.CacheRejected += u.CacheRejected
		e.Usage.Add(u.Usage)
		e.CachedUsage.Add(u.CachedUsage)
	}
}

// Snapshot returns the counts so far, sorted by role (policy first) then
// model; nil when nothing was recorded.
func (r *Recorder) Snapshot() []artifact.ModelUsage {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.m) == 0 {
		return nil
	}
	out := make([]artifact.ModelUsage, 0, len(r.m))
	for _, e := range r.m {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b artifact.ModelUsage) int {
		if c := cmp.Compare(roleRank(a.Role), roleRank(b.Role)); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Role, b.Role); c != 0 {
			return c
		}
		return cmp.Compare(a.Model, b.Model)
	})
	return out
}

func roleRank(role string) int {
	switch role {
	case artifact.RolePolicy:
		return 0
	case artifact.RoleTarget:
		return 1
	case artifact.RoleJudge:
		return 2
	}
	return 3
}

// Totals adds usage up by role: what report.md and the dashboard show.
func Totals(us []artifact.ModelUsage) map[string]env.Usage {
	out := map[string]env.Usage{}
	for _, u := range us {
		t := out[u.Role]
		t.Add(u.Usage)
		out[u.Role] = t
	}
	return out
}

// WrapJudge records a judge's calls under role. An llm.Judge has its client
// wrapped, so its tokens are counted; any other env.Judge reports no tokens,
// so only its calls and failures are counted, under model.
func (r *Recorder) WrapJudge(j env.Judge, role, model string) env.Judge {
	if r == nil || j == nil {
		return j
	}
	if lj, ok := j.(llm.Judge); ok {
		lj.Client = r.Wrap(lj.Client, role)
		return lj
	}
	return &judge{next: j, rec: r, role: role, model: model}
}

type judge struct {
	next        env.Judge
	rec         *Recorder
	role, model string
}

func (j *judge) Ask(ctx context.Context, system, prompt string) (string, error) {
	out, err := j.next.Ask(ctx, system, prompt)
	if err != nil {
		j.rec.Fail(j.role, j.model)
	} else {
		j.rec.Add(j.role, j.model, env.Usage{})
	}
	return out, err
}
