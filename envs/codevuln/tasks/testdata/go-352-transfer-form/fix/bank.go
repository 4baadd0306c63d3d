package bank

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
)

// Sessions maps a session cookie value to the signed-in user.
type Sessions interface {
	User(sessionID string) (string, bool)
}

// Ledger moves money between accounts.
type Ledger interface {
	Transfer(from, to string, cents int64) error
}

// App is the transfer page.
type App struct {
	sessions Sessions
	ledger   Ledger
	key      []byte
}

// NewApp returns the handler.
func NewApp(s Sessions, l Ledger) *App {
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic("bank: no system randomness: " + err.Error())
	}
	return &App{sessions: s, ledger: l, key: key}
}

var form = template.Must(template.New("form").Parse(`<!doctype html>
<form method="post" action="/transfer">
<p>Signed in as {{.User}}</p>
<input type="hidden" name="csrf_token" value="{{.Token}}">
<input name="to"> <input name="amount">
<button>Send</button>
</form>`))

func (a *App) user(r *http.Request) (string, string, bool) {
	c, err := r.Cookie("session")
	if err != nil {
		return "", "", false
	}
	u, ok := a.sessions.User(c.Value)
	return u, c.Value, ok
}

// token binds the anti-CSRF token to the session: another site can neither
// read it (same-origin policy) nor compute it (it needs the server key).
func (a *App) token(session string) string {
	m := hmac.New(sha256.New, a.key)
	m.Write([]byte("csrf\x00" + session))
	return hex.EncodeToString(m.Sum(nil))
}

// ServeHTTP handles /transfer.
func (a *App) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/transfer" {
		http.NotFound(w, r)
		return
	}
	user, session, ok := a.user(r)
	if !ok {
		http.Error(w, "sign in first", http.StatusUnauthorized)
		return
	}
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		form.Execute(w, struct{ User, Token string }{user, a.token(session)})
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, 1<<14)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
			return
		}
		// Only the body counts: a token in the URL would leak via Referer and logs.
		if !hmac.Equal([]byte(r.PostForm.Get("csrf_token")), []byte(a.token(session))) {
			http.Error(w, "invalid CSRF token", http.StatusForbidden)
			return
		}
		to := r.PostForm.Get("to")
		cents, err := strconv.ParseInt(r.PostForm.Get("amount"), 10, 64)
		if to == "" || err != nil || cents <= 0 {
			http.Error(w, "invalid transfer", http.StatusBadRequest)
			return
		}
		if err := a.ledger.Transfer(user, to, cents); err != nil {
			http.Error(w, "transfer failed", http.StatusConflict)
			return
		}
		fmt.Fprintf(w, "sent %d to %s\n", cents, template.HTMLEscapeString(to))
	default:
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}
