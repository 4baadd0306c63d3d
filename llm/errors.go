package llm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/svbench/svbench/base/clip"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"unicode"
	"unicode/utf8"
)

// Bounds on what an EndpointError quotes from a server: the body may be a
// multi-megabyte web page, and model servers echo prompts into errors.
const (
	maxExcerptBytes     = 200
	maxMessageBytes     = 400
	maxContentTypeBytes = 80
)

// baseURLHint is the advice for answers that show the request did not reach
// an OpenAI-compatible API at all.
const baseURLHint = "is the base URL (--base-url) the API root, usually ending in /v1?"

// EndpointError is a failure of an OpenAI-compatible endpoint, described
// for a person at a terminal: where the request went, what came back, and
// what to check. Every field is bounded and free of credentials, so callers
// may print it as is.
type EndpointError struct {
	// URL is the request URL without user info, query or fragment.
	URL string
	// Status is the HTTP status, 0 when no response arrived.
	Status int
	// ContentType is the response's media type, when there was a response.
	ContentType string
	// Message is the server's own error message when it sent one (the JSON
	// error.message), else a short excerpt of the body with control
	// characters removed, else what went wrong on the connection.
	Message string
	// Hint says what to check.
	Hint string
	// Err is the underlying cause, when there is one beyond the response.
	Err error

	// transient marks failures another attempt may not repeat.
	transient bool
	// contextLength marks a request over the model's context window.
	contextLength bool
}

func (e *EndpointError) Error() string {
	var b strings.Builder
	b.WriteString(e.URL)
	if e.Status > 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.Status)
		if t := http.StatusText(e.Status); t != "" {
			b.WriteString(" " + t)
		}
		if e.ContentType != "" {
			fmt.Fprintf(&b, " (%s)", e.ContentType)
		}
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	if e.Hint != "" {
		b.WriteString("; " + e.Hint)
	}
	return b.String()
}

func (e *EndpointError) Unwrap() error { return e.Err }

// redactURL drops credentials, query and fragment: a base URL may carry a
// key in either.
func redactURL(u *url.URL) string {
	if u == nil {
		return "(no URL)"
	}
	c := *u
	c.User = nil
	c.RawQuery, c.ForceQuery = "", false
	c.Fragment, c.RawFragment = "", ""
	return c.String()
}

// mediaType is the bounded media type of a Content-Type header.
func mediaType(h http.Header) string {
	ct := h.Get("Content-Type")
	if ct == "" {
		return ""
	}
	if mt, _, err := mime.ParseMediaType(ct); err == nil {
		ct = mt
	}
	return sanitize([]byte(ct), maxContentTypeBytes)
}

// httpError describes a response with status >= 400.
func httpError(u string, status int, h http.Header, body []byte, maxWait string) *EndpointError {
	msg := serverMessage(body)
	if msg == "" {
		msg = sanitize(body, maxExcerptBytes)
	}
	e := &EndpointError{URL: u, Status: status, ContentType: mediaType(h), Message: msg, Hint: statusHint(status, h, maxWait)}
	if isContextLength(status, msg) {
		e.contextLength = true
		e.Hint = ContextLengthHint
	}
	return e
}

// ContextLengthHint says what a request over the model's context window
// means and what to change.
const ContextLengthHint = "prompt + max_tokens exceeds the model's context window for this row: lower --max-tokens, or serve the model with a longer context (vLLM --max-model-len) to answer it"

// contextLengthWords are how servers word a request over the context
// window: OpenAI and vLLM ("maximum context length", code
// context_length_exceeded), SGLang ("longer than the model's context
// length"), llama.cpp ("exceeds the available context size"), TGI
// ("must be <= …" of inputs + max_new_tokens).
var contextLengthWords = []string{"context length", "context_length", "context window", "context size", "max_new_tokens` must be <="}

func isContextLength(status int, msg string) bool {
	if status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge && status != http.StatusUnprocessableEntity {
		return false
	}
	m := strings.ToLower(msg)
	for _, w := range contextLengthWords {
		if strings.Contains(m, w) {
			return true
		}
	}
	return false
}

// IsContextLength reports whether err is a server's refusal of one request
// for being longer than the model's context window (prompt + max_tokens):
// a property of that row, not a broken endpoint, so a run records the row
// as unanswered and goes on.
func IsContextLength(err error) bool {
	var ee *EndpointError
	return errors.As(err, &ee) && ee.contextLength
}

// statusHint says what to check for an HTTP error status.
func statusHint(status int, h http.Header, maxWait string) string {
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		return "check the API key (the environment variable it comes from) and that it may use this model"
	case status == http.StatusNotFound || status == http.StatusMethodNotAllowed:
		return baseURLHint + " Does the server serve this model name?"
	case status == http.StatusRequestEntityTooLarge:
		return "the request is larger than the server accepts: shorten the prompt or raise the server's limit"
	case status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status == http.StatusConflict:
		hint := "the server is rate limiting or overloaded: lower --concurrency or --max-in-flight"
		for _, name := range []string{"Retry-After-Ms", "Retry-After"} {
			if v := h.Get(name); v != "" {
				return hint + fmt.Sprintf(" (it sent %s: %s; svbench waits at most %s between attempts)", name, sanitize([]byte(v), 40), maxWait)
			}
		}
		return hint
	case status == http.StatusBadGateway || status == http.StatusServiceUnavailable || status == http.StatusGatewayTimeout:
		return "a proxy or the server is up but could not answer: is the model server running and healthy (check its logs)?"
	case status >= 500:
		return "the server failed: check its logs"
	case status >= 400:
		return "the server rejected the request: check the model name and the parameters it accepts (sampling, max_tokens, tools, extra body fields)"
	}
	return ""
}

// serverMessage finds the error text in a JSON error body, in the shapes
// servers use: OpenAI's {"error":{"message":…}}, {"error":"…"} (Ollama,
// llama.cpp), vLLM's older top-level {"message":…} and FastAPI's
// {"detail":…}. It returns "" for anything else.
func serverMessage(body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message json.RawMessage `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) != nil {
		return ""
	}
	for _, raw := range []json.RawMessage{v.Error, v.Message, v.Detail} {
		if s := jsonText(raw); s != "" {
			return sanitize([]byte(s), maxMessageBytes)
		}
	}
	return ""
}

// jsonText is a JSON string's value, an object's "message", or other
// non-null JSON verbatim.
func jsonText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Message json.RawMessage `json:"message"`
	}
	if json.Unmarshal(raw, &obj) == nil && len(obj.Message) > 0 {
		if m := jsonText(obj.Message); m != "" {
			return m
		}
	}
	return string(raw)
}

// sanitize makes at most limit bytes of printable one-line text from b:
// invalid UTF-8 and format characters (bidi overrides, zero-width joiners)
// are dropped, runs of spaces and control characters become one space, and
// an ellipsis marks a cut.
func sanitize(b []byte, limit int) string {
	const mark = "…"
	var out strings.Builder
	space, more := false, false
	for i := 0; i < len(b) && !more; {
		r, size := utf8.DecodeRune(b[i:])
		i += size
		switch {
		case r == utf8.RuneError && size <= 1, unicode.Is(unicode.Cf, r):
			continue
		case unicode.IsSpace(r) || unicode.IsControl(r):
			space = out.Len() > 0
			continue
		}
		n := utf8.RuneLen(r)
		if space {
			n++
		}
		if out.Len()+n > limit {
			more = true
			continue
		}
		if space {
			out.WriteByte(' ')
			space = false
		}
		out.WriteRune(r)
	}
	s := out.String()
	if !more {
		return s
	}
	return strings.TrimRight(clip.Prefix(s, max(limit-len(mark), 0)), " ") + mark
}

// dialFailure recognises connection failures another attempt will repeat:
// nothing listens at the address, or the host name does not resolve. They
// fail fast instead of going through the whole backoff schedule.
func dialFailure(u string, err error) *EndpointError {
	var dns *net.DNSError
	switch {
	case errors.As(err, &dns):
		return &EndpointError{URL: u, Err: err,
			Message: sanitize(fmt.Appendf(nil, "cannot resolve host %q: %s", dns.Name, dns.Err), maxMessageBytes),
			Hint:    "is the host name in the base URL (--base-url) right, and is a DNS server reachable?"}
	case errors.Is(err, syscall.ECONNREFUSED):
		return &EndpointError{URL: u, Err: err, Message: "connection refused",
			Hint: "is the model server running, and are the host and port in the base URL (--base-url) right?"}
	}
	return nil
}

// transportMessage is a short description of a transport error without
// the URL net/http puts into it (which would carry the query).
func transportMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return sanitize([]byte(err.Error()), maxMessageBytes)
}
