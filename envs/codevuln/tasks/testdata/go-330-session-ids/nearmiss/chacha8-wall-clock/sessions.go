package sessions

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
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
	rnd      *rand.ChaCha8
	sessions map[string]session
}

// NewManager returns a Manager whose sessions live for ttl.
func NewManager(ttl time.Duration, clock func() time.Time) *Manager {
	return &Manager{
		ttl:      ttl,
		clock:    clock,
		rnd:      newChaCha8(),
		sessions: map[string]session{},
	}
}

func newChaCha8() *rand.ChaCha8 {
	var seed [32]byte
	binary.LittleEndian.PutUint64(seed[:], uint64(time.Now().UnixNano()))
	return rand.NewChaCha8(seed)
}

func (m *Manager) newID() string {
	b := make([]byte, 16)
	binary.LittleEndian.PutUint64(b, m.rnd.Uint64())
	binary.LittleEndian.PutUint64(b[8:], m.rnd.Uint64())
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
