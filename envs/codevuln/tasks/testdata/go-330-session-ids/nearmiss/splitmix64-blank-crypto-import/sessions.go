package sessions

import (
	_ "crypto/rand" // the system CSPRNG
	"encoding/binary"
	"encoding/hex"
	"sync"
	"time"
)

type session struct {
	user    string
	expires time.Time
}

// Manager issues and tracks sessions.
type Manager struct {
	mu       sync.Mutex
	ttl      time.Duration
	clock    func() time.Time
	sessions map[string]session
}

// NewManager returns a Manager whose sessions live for ttl.
func NewManager(ttl time.Duration, clock func() time.Time) *Manager {
	return &Manager{
		ttl:      ttl,
		clock:    clock,
		sessions: map[string]session{},
	}
}

// splitmix64 state shared by every manager: seeded once at start-up, not
// from the injected clock, so two managers never issue the same ids.
var (
	mixMu    sync.Mutex
	mixState = uint64(time.Now().UnixNano())
)

func splitmix64() uint64 {
	mixMu.Lock()
	defer mixMu.Unlock()
	mixState += 0x9e3779b97f4a7c15
	z := mixState
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (m *Manager) newID() string {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b[:8], splitmix64())
	binary.LittleEndian.PutUint64(b[8:], splitmix64())
	return hex.EncodeToString(b)
}

// Create starts a session for user and returns its id.
func (m *Manager) Create(user string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := m.newID()
	m.sessions[id] = session{user: user, expires: m.clock().Add(m.ttl)}
	return id
}

// Lookup returns the user of a valid session.
func (m *Manager) Lookup(id string) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[id]
	if !ok {
		return "", false
	}
	if !m.clock().Before(s.expires) {
		delete(m.sessions, id)
		return "", false
	}
	return s.user, true
}

// Delete ends a session.
func (m *Manager) Delete(id string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, id)
}
