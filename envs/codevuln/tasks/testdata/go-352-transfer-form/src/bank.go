package bank

import (
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
}

// NewApp returns the handler.
func NewApp(s Sessions, l Ledger) *App { return &App{sessions: s, ledger: l} }

var form = template.Must(template.New("form").Parse(`<!doctype html>
<form method="post" action="/transfer">
<p>Signed in as {{.User}}</p>
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

// ServeHTTP handles /transfer.
func (a *App) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/transfer" {
		http.NotFound(w, r)
		return
	}
	user, _, ok := a.user(r)
	if !ok {
		http.Error(w, "sign in first", http.StatusUnauthorized)
		return
	}
	switch r.Method {
	case http.MethodGet:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		form.Execute(w, struct{ User string }{user})
	case http.MethodPost:
		r.Body = http.MaxBytesReader(w, r.Body, 1<<14)
		if err := r.ParseForm(); err != nil {
			http.Error(w, "bad form", http.StatusBadRequest)
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
