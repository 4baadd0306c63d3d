// Package usage counts the tokens a run's model calls consume, by role
// (policy, judge, target) and model, and prices them from a user-supplied
// price file. Wrap every client a run uses with one Recorder; the runner
// copies its Snapshot into metadata.json.
package usage

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
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
	// journal, when set, receives one JSON line per recorded call, written
	// as it happens (see SetJournal).
	journal io.Writer
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
		// A call the run itself cancelled (Ctrl-C, a stop on errors) did
		// not fail: the endpoint never answered it either way.
		if ctx.Err() == nil {
			c.rec.Fail(c.role, req.Model)
		}
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
	r.log(Event{Kind: KindCall, Role: role, Model: model, Usage: &u})
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
	r.log(Event{Kind: KindCached, Role: role, Model: model, Usage: &u})
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
	r.log(Event{Kind: KindRejected, Role: role, Model: model, Usage: &u})
}

// Fail records one failed call.
func (r *Recorder) Fail(role, model string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entry(role, model).Errors++
	r.log(Event{Kind: KindFailed, Role: role, Model: model})
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
	r.accumulate(prev)
}

// Accumulate adds prev's counts to the recorder's (a merge of shards adds
// every shard's usage).
func (r *Recorder) Accumulate(prev []artifact.ModelUsage) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.accumulate(prev)
}

func (r *Recorder) accumulate(prev []artifact.ModelUsage) {
	for _, u := range prev {
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

// Journal event kinds.
const (
	KindCall     = "call"     // an answered call
	KindCached   = "cached"   // replayed from the response cache
	KindRejected = "rejected" // answered after a cache entry was rejected
	KindFailed   = "failed"   // the call failed
	KindBase     = "base"     // counts carried over from before the journal
)

// Event is one line of a usage journal.
type Event struct {
	Kind  string     `json:"kind"`
	Role  string     `json:"role,omitempty"`
	Model string     `json:"model,omitempty"`
	Usage *env.Usage `json:"usage,omitempty"`
	// Base holds the counts of a KindBase line.
	Base []artifact.ModelUsage `json:"base,omitempty"`
}

// SetJournal makes the recorder write every call it records to w, one
// JSON line per call in a single Write, as the call is counted. The
// runner keeps such a journal beside results.jsonl: metadata.json is only
// checkpointed, so after kill -9 the journal still has every call that was
// paid for, and a resumed run adds up from it (ReadJournal). A write error
// ends journaling; counting goes on. nil stops it.
func (r *Recorder) SetJournal(w io.Writer) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.journal = w
}

// WriteBase journals the recorder's current counts as one KindBase line:
// a journal started for a run whose earlier sessions had none begins with
// what metadata.json recorded.
func (r *Recorder) WriteBase() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	var base []artifact.ModelUsage
	for _, e := range r.m {
		base = append(base, *e)
	}
	if len(base) > 0 {
		r.log(Event{Kind: KindBase, Base: base})
	}
}

// log writes one event; r.mu is held.
func (r *Recorder) log(e Event) {
	if r.journal == nil {
		return
	}
	b, err := json.Marshal(e)
	if err == nil {
		_, err = r.journal.Write(append(b, '\n'))
	}
	if err != nil {
		r.journal = nil
	}
}

// ReadJournal adds a journal up into usage counts, as Snapshot returns
// them. An unterminated or undecodable last line (a process killed while
// writing it) is ignored; an undecodable line before the last is an error.
func ReadJournal(rd io.Reader) ([]artifact.ModelUsage, error) {
	rec := New()
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var pending error
	line := 0
	for sc.Scan() {
		line++
		if pending != nil {
			return nil, pending
		}
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var e Event
		if err := json.Unmarshal(b, &e); err != nil {
			pending = fmt.Errorf("usage journal line %d: %w", line, err)
			continue
		}
		var u env.Usage
		if e.Usage != nil {
			u = *e.Usage
		}
		switch e.Kind {
		case KindCall:
			rec.Add(e.Role, e.Model, u)
		case KindCached:
			rec.AddCached(e.Role, e.Model, u)
		case KindRejected:
			rec.AddCacheRejected(e.Role, e.Model, u)
		case KindFailed:
			rec.Fail(e.Role, e.Model)
		case KindBase:
			rec.Accumulate(e.Base)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("usage journal: %w", err)
	}
	return rec.Snapshot(), nil
}
