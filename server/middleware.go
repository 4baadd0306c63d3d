package server

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"
)

// route is one path's handlers by method, with a fixed endpoint label.
type route struct {
	endpoint string
	methods  map[string]http.HandlerFunc
	public   bool // no token needed (probes)
	// urlToken also takes the token as ?token= on the URL, for clients
	// that send no headers (OpenRLHF's /get_reward).
	urlToken bool
	needData bool // 503 until datasets load
	timeout  time.Duration
}

func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	add := func(pattern string, rt route) {
		mux.Handle(pattern, s.wrap(rt))
	}
	// Every single-segment name a route holds: NeMo Gym's tool routes may
	// not take one.
	reserved := []string{nemoGymRolloutPath}
	var ngPaths []string
	for _, e := range s.table() {
		e.route.endpoint = e.path
		add(e.path, e.route)
		reserved = append(reserved, firstSegment(e.path))
		if e.protocol == ProtocolNemoGym {
			ngPaths = append(ngPaths, e.path)
		}
	}
	ngPaths = append(ngPaths, s.nemoGymToolRoutes(add, reserved)...)
	mux.Handle("/"+nemoGymRolloutPath+"/{rid}/{rest...}", nemoGymRolloutPrefix(ngPaths, mux))
	add("/", route{endpoint: "other", public: true, methods: nil})
	return mux
}

// statusRecorder remembers the status and error code for metrics and logs.
type statusRecorder struct {
	http.ResponseWriter
	status  int
	errCode string
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

type ctxKey int

const requestIDKey ctxKey = 0

func requestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey).(string)
	return id
}

// wrap applies, in order: request id, panic recovery, metrics and access log,
// method check, auth, readiness, body limit and per-request timeout.
func (s *Server) wrap(rt route) http.Handler {
	timeout := rt.timeout
	if timeout <= 0 {
		timeout = s.cfg.Timeout
	}
	allowed := make([]string, 0, len(rt.methods))
	for m := range rt.methods {
		allowed = append(allowed, m)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set("X-Request-Id", id)
		r = r.WithContext(context.WithValue(r.Context(), requestIDKey, id))
		rec := &statusRecorder{ResponseWriter: w}
		s.metrics.inflight.Add(1)
		defer func() {
			s.metrics.inflight.Add(-1)
			if p := recover(); p != nil {
				if p == http.ErrAbortHandler {
					panic(p)
				}
				s.log.Error("panic serving request", "request_id", id, "endpoint", rt.endpoint, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
				if rec.status == 0 {
					writeError(rec, r, http.StatusInternalServerError, apiErrorf(CodeInternal, "internal error; quote request id %s when reporting it", id))
				}
			}
			if rec.status == 0 {
				rec.status = http.StatusOK
			}
			d := time.Since(start)
			s.metrics.request(rt.endpoint, rec.status, d)
			level := slog.LevelDebug
			if rec.status >= 500 {
				level = slog.LevelWarn
			}
			s.log.Log(r.Context(), level, "request", "request_id", id, "method", r.Method, "endpoint", rt.endpoint,
				"status", rec.status, "error_code", rec.errCode, "took", d)
		}()

		if rt.methods == nil {
			writeError(rec, r, http.StatusNotFound, apiErrorf(CodeNotFound, "no such endpoint %s; see GET /v1/environments and server/README.md", r.URL.Path))
			return
		}
		if rt.urlToken {
			// The token must reach no handler, log line or error message
			// from here on: take it off the URL whatever the outcome.
			r = withoutURLToken(r)
		}
		if !rt.public && !s.authorized(r, rt.urlToken) {
			rec.Header().Set("WWW-Authenticate", `Bearer realm="svbench"`)
			how := "send \"Authorization: Bearer <token>\""
			if rt.urlToken {
				how += " or, from a client that sends no headers, put it on the URL: " + rt.endpoint + "?token=<token>"
			}
			writeError(rec, r, http.StatusUnauthorized, apiErrorf(CodeUnauthorized, "missing or wrong bearer token: %s", how))
			return
		}
		h, ok := rt.methods[r.Method]
		if !ok && r.Method == http.MethodHead {
			h, ok = rt.methods[http.MethodGet]
		}
		if !ok {
			rec.Header().Set("Allow", strings.Join(allowed, ", "))
			writeError(rec, r, http.StatusMethodNotAllowed, apiErrorf(CodeMethodNotAllowed, "%s does not accept %s; use %s", rt.endpoint, r.Method, strings.Join(allowed, ", ")))
			return
		}
		if rt.needData && !s.ready.Load() {
			rec.Header().Set("Retry-After", "1")
			writeError(rec, r, http.StatusServiceUnavailable, apiErrorf(CodeNotReady, "datasets are still loading; retry when /readyz returns 200"))
			return
		}
		if r.ContentLength > s.cfg.MaxBody {
			// Refuse before reading a byte; closing the connection stops a
			// client that ignores the answer from pushing the rest.
			rec.Header().Set("Connection", "close")
			writeError(rec, r, http.StatusRequestEntityTooLarge, apiErrorf(CodeBodyTooLarge,
				"request body of %d bytes exceeds %d: send smaller batches or raise --max-body", r.ContentLength, s.cfg.MaxBody))
			return
		}
		r.Body = http.MaxBytesReader(rec, r.Body, s.cfg.MaxBody)
		// A client that stops reading its response must not pin a
		// goroutine forever; the recorder is unsupported in unit tests.
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(timeout + 10*time.Second))
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		h(rec, r.WithContext(ctx))
	})
}

// urlTokenKey is the context key of a token taken off the URL.
const urlTokenKey ctxKey = 1

// withoutURLToken moves ?token= from the URL into the request's context,
// so that nothing which prints the URL can print the token.
func withoutURLToken(r *http.Request) *http.Request {
	q := r.URL.Query()
	if !q.Has("token") {
		return r
	}
	tok := q.Get("token")
	q.Del("token")
	r = r.WithContext(context.WithValue(r.Context(), urlTokenKey, tok))
	u := *r.URL
	u.RawQuery = q.Encode()
	r.URL = &u
	r.RequestURI = u.RequestURI()
	return r
}

// authorized compares hashes so the comparison's time depends on neither
// the token's content nor its length. With fromURL, a token taken off the
// URL (withoutURLToken) counts as well as the header.
func (s *Server) authorized(r *http.Request, fromURL bool) bool {
	if s.cfg.Token == "" {
		return true
	}
	var tok string
	auth := r.Header.Get("Authorization")
	const prefix = "bearer "
	switch ut, ok := r.Context().Value(urlTokenKey).(string); {
	case len(auth) >= len(prefix) && strings.EqualFold(auth[:len(prefix)], prefix):
		tok = strings.TrimSpace(auth[len(prefix):])
	case fromURL && ok:
		tok = ut
	default:
		return false
	}
	got := sha256.Sum256([]byte(tok))
	return subtle.ConstantTimeCompare(got[:], s.tokenH[:]) == 1
}

// contextError maps a finished request context to a response.
func contextError(ctx context.Context) (int, *APIError) {
	if errors.Is(context.Cause(ctx), context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return http.StatusGatewayTimeout, apiErrorf(CodeTimeout, "request did not finish within the server's timeout; send smaller batches or raise --timeout")
	}
	return http.StatusServiceUnavailable, apiErrorf(CodeCanceled, "request cancelled: the client went away or the server is shutting down")
}
