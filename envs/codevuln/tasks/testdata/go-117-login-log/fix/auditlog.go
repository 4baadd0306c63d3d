package auditlog

import (
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
)

type recorder struct {
	http.ResponseWriter
	status int
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// quoteIfNeeded leaves ordinary values as they are and writes anything else
// as a Go-quoted string, in which every control or non-printable character
// is escaped, so one value can never end the line or fake another field.
func quoteIfNeeded(s string) string {
	if s == "" {
		return `""`
	}
	for _, r := range s {
		if r == ' ' || r == '"' || r == '=' || r == '\\' || !unicode.IsPrint(r) || r > unicode.MaxASCII && !unicode.IsLetter(r) {
			return strconv.QuoteToASCII(s)
		}
	}
	return s
}

// Middleware logs each login attempt handled by next to w.
func Middleware(w io.Writer, next http.Handler) http.Handler {
	var mu sync.Mutex
	return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: rw, status: http.StatusOK}
		user := r.FormValue("username")
		next.ServeHTTP(rec, r)
		line := fmt.Sprintf("time=%s status=%d user=%s ip=%s ua=%s\n",
			time.Now().UTC().Format(time.RFC3339), rec.status, quoteIfNeeded(user), quoteIfNeeded(r.RemoteAddr), quoteIfNeeded(r.UserAgent()))
		mu.Lock()
		defer mu.Unlock()
		io.WriteString(w, line)
	})
}

// ParseLine splits a log line into its key=value fields; quoted values are
// unquoted.
func ParseLine(line string) map[string]string {
	out := map[string]string{}
	line = strings.TrimRight(line, "\n")
	for line != "" {
		key, rest, ok := strings.Cut(line, "=")
		if !ok {
			break
		}
		var val string
		if strings.HasPrefix(rest, `"`) {
			q, err := strconv.QuotedPrefix(rest)
			if err != nil {
				break
			}
			val, _ = strconv.Unquote(q)
			rest = rest[len(q):]
		} else {
			val, rest, _ = strings.Cut(rest, " ")
			out[key] = val
			line = rest
			continue
		}
		out[key] = val
		line = strings.TrimPrefix(rest, " ")
	}
	return out
}
