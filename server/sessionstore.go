package server

import (
	"container/list"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/svbench/svbench/env"
)

// Session store bounds (issue #40): a live session holds a slot and its
// weight in bytes until its episode ends; a finished one keeps only what
// GET needs, in a bounded store of its own, so a trainer that forgets
// DELETE does not lock everyone else out.
const (
	DefaultMaxSessionBytes = 1 << 30
	// fairWindow is how long a refused client still counts as wanting a
	// slot: while it does, a client holding more than an equal share gets
	// no new one, so freed slots go to the one waiting.
	fairWindow = 30 * time.Second
	// sessionOverhead is what a session costs besides its example and
	// transcript (the episode, maps, the goroutine-free bookkeeping).
	sessionOverhead = 4 << 10
	// inlineWeight multiplies an inline example's bytes: the decoded row
	// (payload, prompt, meta) weighs about three times its JSON text
	// (measured: a 7.5 MB example held about 21 MB).
	inlineWeight = 3
)

// sessionScope says which route family may reach a session. A session is
// reachable only through the protocol that opened it and only by the
// client that opened it: its id leaks through the NeMo Gym cookie, logs
// and answers, and must not be a key to somebody else's episode.
type sessionScope uint8

const (
	scopeHTTP    sessionScope = iota // /v1/sessions and OpenEnv's HTTP /reset, /step, /state
	scopeWS                          // one OpenEnv WebSocket: never looked up by id
	scopeNemoGym                     // NeMo Gym's cookie
)

type session struct {
	id       string
	st       *envState
	ex       env.Example
	ep       env.Episode
	rubric   string
	maxTurns int
	prompt   []env.Message
	tools    []env.Tool
	owner    string
	scope    sessionScope
	idle     time.Duration // 0: the store's
	// inline is the weight of what the request carried inline (example,
	// answer); the transcript's is added as it grows.
	inline int64

	created time.Time

	mu         sync.Mutex // one step at a time; guards what follows
	turns      int
	transcript []env.Message
	done       bool
	result     *SessionStepResult
	closed     bool
	lastUsed   time.Time

	// Guarded by sessions.mu.
	weight   int64
	finished *list.Element // in sessions.finished once the episode ended
}

func newSessionID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "ses_" + hex.EncodeToString(b[:])
}

// idleTimeout is how long s may go without a request.
func (s *session) idleTimeout(def time.Duration) time.Duration {
	if s.idle > 0 && s.idle < def {
		return s.idle
	}
	return def
}

func (s *session) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closeLocked()
}

func (s *session) closeLocked() {
	if s.closed {
		return
	}
	s.closed = true
	_ = s.ep.Close()
}

// transcriptBytes is what the transcript weighs as text.
func transcriptBytes(msgs []env.Message) int64 {
	var n int64
	for _, m := range msgs {
		n += int64(len(m.Content) + len(m.Reasoning) + len(m.Name) + len(m.ToolCallID) + 64)
		for _, tc := range m.ToolCalls {
			n += int64(len(tc.Arguments) + len(tc.Name) + len(tc.ID) + 32)
		}
	}
	return n
}

// sessions is the set of sessions: live ones bounded in count, bytes,
// idle time and age and shared fairly between owners; finished ones kept
// for GET in a store bounded in count and bytes, oldest dropped first.
type sessions struct {
	mu   sync.Mutex
	byID map[string]*session

	max      int
	maxBytes int64
	idle     time.Duration
	ttl      time.Duration

	live      int
	liveBytes int64
	perOwner  map[string]int
	refused   map[string]time.Time // owners refused a slot, when last

	finished      *list.List // *session, newest at the front
	maxFinished   int
	finishedBytes int64
	maxFinBytes   int64
}

func newSessions(maxLive int, maxBytes int64, idle, ttl time.Duration) *sessions {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxSessionBytes
	}
	return &sessions{byID: map[string]*session{}, max: maxLive, maxBytes: maxBytes, idle: idle, ttl: ttl,
		perOwner: map[string]int{}, refused: map[string]time.Time{},
		finished: list.New(), maxFinished: max(4*maxLive, 1024), maxFinBytes: max(maxBytes/4, 1<<20)}
}

// slotRefusal says why add refused a session.
type slotRefusal int

const (
	slotOK slotRefusal = iota
	slotCount
	slotBytes
	slotFairShare
)

// add registers s as live unless that would pass the count or byte
// budget, or s's owner already holds its fair share while another owner
// is waiting for a slot.
func (ss *sessions) add(s *session, now time.Time) slotRefusal {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for o, t := range ss.refused {
		if now.Sub(t) > fairWindow {
			delete(ss.refused, o)
		}
	}
	s.weight = sessionOverhead + inlineWeight*s.inline
	why := slotOK
	switch {
	case ss.live >= ss.max:
		why = slotCount
	case ss.liveBytes+s.weight > ss.maxBytes:
		why = slotBytes
	case ss.perOwner[s.owner] >= ss.fairShareLocked(s.owner):
		why = slotFairShare
	}
	if why != slotOK {
		ss.refused[s.owner] = now
		return why
	}
	delete(ss.refused, s.owner)
	ss.byID[s.id] = s
	ss.live++
	ss.liveBytes += s.weight
	ss.perOwner[s.owner]++
	return slotOK
}

// fairShareLocked is how many live sessions owner may hold: all of them
// unless another owner was refused within fairWindow, else an equal share
// among the owners holding or wanting slots.
func (ss *sessions) fairShareLocked(owner string) int {
	contended := false
	owners := map[string]bool{owner: true}
	for o, n := range ss.perOwner {
		if n > 0 {
			owners[o] = true
		}
	}
	for o := range ss.refused {
		owners[o] = true
		contended = contended || o != owner
	}
	if !contended {
		return ss.max
	}
	return max(1, ss.max/len(owners))
}

// get finds a session reachable in scope by owner; nil otherwise, so
// another client cannot tell a foreign id from a dead one.
func (ss *sessions) get(id, owner string, scope sessionScope) *session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.byID[id]
	if s == nil || s.owner != owner || s.scope != scope {
		return nil
	}
	return s
}

// grow charges a live session for transcript it gained.
func (ss *sessions) grow(s *session, by int64) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if s.finished == nil && ss.byID[s.id] == s {
		s.weight += by
		ss.liveBytes += by
	}
}

// finish moves a live session whose episode ended to the finished store:
// its slot and bytes are free at once; GET still reads it until it is
// deleted, expires, or the store needs the room. The caller holds s.mu.
func (ss *sessions) finish(s *session) {
	// The episode's resources go; the session is not closed (a step on it
	// answers session_done, not session_not_found).
	if !s.closed {
		_ = s.ep.Close()
		s.ep = pendingEpisode{}
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.byID[s.id] != s || s.finished != nil {
		return
	}
	ss.dropLiveLocked(s)
	s.weight = sessionOverhead + inlineWeight*s.inline + transcriptBytes(s.transcript)
	s.finished = ss.finished.PushFront(s)
	ss.finishedBytes += s.weight
	for ss.finished.Len() > ss.maxFinished || (ss.finishedBytes > ss.maxFinBytes && ss.finished.Len() > 1) {
		old := ss.finished.Remove(ss.finished.Back()).(*session)
		ss.finishedBytes -= old.weight
		delete(ss.byID, old.id)
	}
}

func (ss *sessions) dropLiveLocked(s *session) {
	ss.live--
	ss.liveBytes -= s.weight
	if ss.perOwner[s.owner]--; ss.perOwner[s.owner] <= 0 {
		delete(ss.perOwner, s.owner)
	}
}

// forgetLocked removes s from the store, live or finished; ss.mu held.
func (ss *sessions) forgetLocked(s *session) {
	if ss.byID[s.id] != s {
		return
	}
	delete(ss.byID, s.id)
	if s.finished != nil {
		ss.finished.Remove(s.finished)
		ss.finishedBytes -= s.weight
		return
	}
	ss.dropLiveLocked(s)
}

// remove forgets the session and releases what its episode holds.
func (ss *sessions) remove(s *session) {
	ss.mu.Lock()
	ss.forgetLocked(s)
	ss.mu.Unlock()
	s.close()
}

// removeLocked is remove for a caller holding the session's lock.
func (ss *sessions) removeLocked(s *session) {
	ss.mu.Lock()
	ss.forgetLocked(s)
	ss.mu.Unlock()
	s.closeLocked()
}

// expired lists sessions past their idle timeout or age. A session busy in
// a step is not idle.
func (ss *sessions) expired(now time.Time) []*session {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	var out []*session
	for _, s := range ss.byID {
		if !s.mu.TryLock() {
			continue
		}
		if now.Sub(s.lastUsed) >= s.idleTimeout(ss.idle) || now.Sub(s.created) >= ss.ttl {
			out = append(out, s)
		}
		s.mu.Unlock()
	}
	return out
}

// janitor closes expired sessions until ctx ends, then closes them all.
func (ss *sessions) janitor(ctx context.Context) {
	// A session may ask for a shorter idle timeout than the store's, so
	// the sweep comes at least every 30 s.
	t := time.NewTicker(max(min(ss.idle/sessionSweepFraction, 30*time.Second), time.Second))
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			ss.closeAll()
			return
		case now := <-t.C:
			for _, s := range ss.expired(now) {
				ss.remove(s)
			}
		}
	}
}

func (ss *sessions) closeAll() {
	ss.mu.Lock()
	all := make([]*session, 0, len(ss.byID))
	for _, s := range ss.byID {
		all = append(all, s)
	}
	clear(ss.byID)
	clear(ss.perOwner)
	ss.finished.Init()
	ss.live, ss.liveBytes, ss.finishedBytes = 0, 0, 0
	ss.mu.Unlock()
	for _, s := range all {
		s.close()
	}
}

// count is the number of live sessions (finished ones hold no slot).
func (ss *sessions) count() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.live
}

// writeMetrics renders the store's occupancy in the exposition format.
func (ss *sessions) writeMetrics(b *strings.Builder) {
	ss.mu.Lock()
	live, fin, bytes, owners := ss.live, ss.finished.Len(), ss.liveBytes, len(ss.perOwner)
	ss.mu.Unlock()
	family(b, "svbench_sessions_live", "gauge", "Sessions whose episode is running (each holds a --max-sessions slot).")
	sample(b, "svbench_sessions_live", "", float64(live))
	family(b, "svbench_sessions_finished", "gauge", "Ended sessions kept for GET (no slot held).")
	sample(b, "svbench_sessions_finished", "", float64(fin))
	family(b, "svbench_sessions_bytes", "gauge", "Estimated bytes live sessions hold (--max-session-bytes bounds it).")
	sample(b, "svbench_sessions_bytes", "", float64(bytes))
	family(b, "svbench_sessions_clients", "gauge", "Clients holding live sessions.")
	sample(b, "svbench_sessions_clients", "", float64(owners))
}

// ownerOf is who a request comes from, as sessions are bound to it: the
// credential it presented (a digest, never the token) and the address it
// came from. Every loopback address is one client, so a trainer whose
// "localhost" resolves to ::1 one time and 127.0.0.1 the next keeps its
// sessions.
func (s *Server) ownerOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		host = "loopback"
	}
	cred := ""
	if s.cfg.Token != "" {
		if tok := presentedToken(r); tok != "" {
			h := sha256.Sum256([]byte(tok))
			cred = hex.EncodeToString(h[:8])
		}
	}
	return cred + "@" + host
}

// presentedToken is the bearer token a request carried, in its header or
// (for routes that allow it) taken off its URL.
func presentedToken(r *http.Request) string {
	const prefix = "Bearer "
	if auth := r.Header.Get("Authorization"); len(auth) >= len(prefix) && strings.EqualFold(auth[:len(prefix)], prefix) {
		return strings.TrimSpace(auth[len(prefix):])
	}
	tok, _ := r.Context().Value(urlTokenKey).(string)
	return tok
}
