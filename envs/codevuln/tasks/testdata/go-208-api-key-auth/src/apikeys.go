package apikeys

import (
	"context"
	"net/http"
	"strings"
	"sync"
)

type entry struct {
	secret string
	owner  string
}

// Store holds API keys by id.
type Store struct {
	mu   sync.RWMutex
	keys map[string]entry
}

// NewStore returns an empty store.
func NewStore() *Store { return &Store{keys: map[string]entry{}} }

// Add registers key "<id>.<secret>" for owner.
func (s *Store) Add(id, secret, owner string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keys[id] = entry{secret: secret, owner: owner}
}

// Authenticate checks an Authorization header and returns the key's owner.
func (s *Store) Authenticate(header string) (string, bool) {
	token, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return "", false
	}
	id, secret, ok := strings.Cut(token, ".")
	if !ok || id == "" {
		return "", false
	}
	s.mu.RLock()
	e, found := s.keys[id]
	s.mu.RUnlock()
	if !found {
		return "", false
	}
	if secret != e.secret {
		return "", false
	}
	return e.owner, true
}

type ownerKey struct{}

// Owner returns the authenticated owner stored in ctx by Middleware.
func Owner(ctx context.Context) string {
	o, _ := ctx.Value(ownerKey{}).(string)
	return o
}

// Middleware rejects requests without a valid API key.
func Middleware(s *Store, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		owner, ok := s.Authenticate(r.Header.Get("Authorization"))
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="api"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ownerKey{}, owner)))
	})
}
