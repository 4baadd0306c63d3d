package auditlog

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// Middleware logs each login attempt handled by next to w.
func Middleware(w io.Writer, next http.Handler) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: rw, status: http.StatusOK}
		user := r.FormValue("username")
		next.ServeHTTP(rec, r)
		line := fmt.Sprintf("time=%s status=%d user=%s ip=%s ua=%s\n",
			time.Now().UTC().Format(time.RFC3339), rec.status, user, r.RemoteAddr, r.UserAgent())
		mu.Lock()
		defer mu.Unlock()
		io.WriteString(w, line)
	})
}

// ParseLine splits a log line into its key=value fields. The last field (ua)
// extends to the end of the line because user agents contain spaces.
func ParseLine(line string) map[string]string {
	out := map[string]string{}
	line = strings.TrimRight(line, "\n")
	for line != "" {
		key, rest, ok := strings.Cut(line, "=")
		if !ok {
			break
		}
		if key == "ua" {
			out[key] = rest
			break
		}
		val, next, _ := strings.Cut(rest, " ")
		out[key] = val
		line = next
	}
	return out
}
