// Package llmtest is an in-process OpenAI-compatible chat completions server
// for tests and benchmarks: scripted answers, thinking models' reasoning,
// injected faults, latency.
//
// [New] serves the fake endpoint over a loopback socket. [NewTransport]
// serves the same endpoint in memory as an [http.RoundTripper], for tests
// that run inside a testing/synctest bubble, where real network I/O would
// keep the fake clock from advancing.
package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Fault is what the server does instead of answering normally.
type Fault int

// Faults the server can inject.
const (
	OK              Fault = iota
	RateLimited           // 429 with Retry-After
	ServerError           // 500
	Hang                  // sleeps past any sane client timeout
	MalformedJSON         // 200 with a truncated body
	EmptyChoices          // 200 with "choices": []
	Unauthorized          // 401
	ConnectionReset       // hijack and close the connection mid-response
	BadRequest            // 400 with an OpenAI error object carrying Options.ErrorMessage
	HTMLPage              // 200 text/html: a base URL pointing at a web server
	BadGateway            // 502 text/html: a proxy's error page
	PlainText             // 200 text/plain: Ollama's "Ollama is running" root
)

// ChatRequest is the part of a request body tests inspect.
type ChatRequest struct {
	Model    string           `json:"model"`
	Messages []map[string]any `json:"messages"`
	Tools    []map[string]any `json:"tools"`
	Raw      map[string]any   `json:"-"`
}

// Reply is what the responder says.
type Reply struct {
	Content   string
	ToolCalls []ToolCall
	// Reasoning is returned beside Content, as a reasoning parser splits it
	// off (see Options.ReasoningField). When Content is empty too, content
	// is sent as null, as vLLM does when a thinking model runs out of tokens.
	Reasoning string
	// ReasoningTokens is reported as usage.completion_tokens_details.reasoning_tokens
	// and added to completion_tokens.
	ReasoningTokens int64
}

// ToolCall is a function call the fake model makes.
type ToolCall struct{ ID, Name, Arguments string }

// Options script the fake endpoint's behaviour.
type Options struct {
	// Respond produces the assistant reply (default: a fixed JSON answer).
	Respond func(req ChatRequest) Reply
	// Schedule picks a fault for the n-th request (0-based); default OK.
	Schedule func(n int64) Fault
	// Latency is added before every answer.
	Latency time.Duration
	// RetryAfter is sent with 429s (default "0").
	RetryAfter string
	// HangFor is how long Hang sleeps (default 10 s) unless the client leaves.
	HangFor time.Duration
	// KeepLog records every request body and Authorization header.
	KeepLog bool
	// ReasoningField names the message field Reply.Reasoning goes into:
	// "reasoning_content" (default; vLLM, SGLang, DeepSeek, Qwen3) or
	// "reasoning" (OpenRouter, newer Ollama and vLLM).
	ReasoningField string
	// ErrorMessage is the error.message of BadRequest (default: OpenAI's
	// answer to temperature sent to a reasoning model).
	ErrorMessage string
}

// Server is a fake endpoint on a loopback socket.
type Server struct {
	*httptest.Server
	*endpoint
}

// New starts a server.
func New(opts Options) *Server {
	e := newEndpoint(opts)
	return &Server{Server: httptest.NewServer(http.HandlerFunc(e.handle)), endpoint: e}
}

// BaseURL is the value for llm.Config.BaseURL.
func (s *Server) BaseURL() string { return s.Server.URL + "/v1" }

// Transport is a fake endpoint served in memory: set it as an
// http.Client's Transport. It answers any host; BaseURL gives one.
type Transport struct {
	*endpoint
}

// NewTransport builds an in-memory endpoint.
func NewTransport(opts Options) *Transport {
	return &Transport{endpoint: newEndpoint(opts)}
}

// BaseURL is the value for llm.Config.BaseURL (with the Transport in
// llm.Config.HTTPClient).
func (t *Transport) BaseURL() string { return "http://llmtest.invalid/v1" }

// RoundTrip runs the handler on the request.
func (t *Transport) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		defer r.Body.Close()
	}
	w := &memWriter{ResponseRecorder: httptest.NewRecorder()}
	t.handle(w, r)
	if w.reset {
		return nil, fmt.Errorf("llmtest: connection reset by the fake server: %w", syscall.ECONNRESET)
	}
	if err := r.Context().Err(); err != nil {
		return nil, err
	}
	resp := w.Result()
	resp.Request = r
	return resp, nil
}

// memWriter records an in-memory answer; a ConnectionReset fault marks it.
type memWriter struct {
	*httptest.ResponseRecorder
	reset bool
}

func (w *memWriter) resetConnection() { w.reset = true }

// endpoint is the fake's state, shared by Server and Transport.
type endpoint struct {
	optsMu sync.RWMutex
	opts   Options

	requests atomic.Int64
	mu       sync.Mutex
	bodies   []map[string]any
	auth     []string
}

func newEndpoint(opts Options) *endpoint {
	if opts.RetryAfter == "" {
		opts.RetryAfter = "0"
	}
	if opts.HangFor == 0 {
		opts.HangFor = 10 * time.Second
	}
	if opts.ReasoningField == "" {
		opts.ReasoningField = "reasoning_content"
	}
	if opts.ErrorMessage == "" {
		opts.ErrorMessage = "Unsupported parameter: 'temperature' is not supported with this model."
	}
	return &endpoint{opts: opts}
}

// Update changes the script while the server runs.
func (e *endpoint) Update(fn func(*Options)) {
	e.optsMu.Lock()
	defer e.optsMu.Unlock()
	fn(&e.opts)
}

// Requests is the number of requests received.
func (e *endpoint) Requests() int64 { return e.requests.Load() }

// Bodies returns the logged request bodies.
func (e *endpoint) Bodies() []map[string]any {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]map[string]any(nil), e.bodies...)
}

// AuthHeaders returns the logged Authorization headers.
func (e *endpoint) AuthHeaders() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.auth...)
}

const htmlPage = `<!DOCTYPE html>
<html>
<head>
<title>Welcome to nginx!</title>
<style>
html { color-scheme: light dark; }
body { width: 35em; margin: 0 auto; font-family: Tahoma, Verdana, Arial, sans-serif; }
</style>
</head>
<body>
<h1>Welcome to nginx!</h1>
<p>If you see this page, the nginx web server is successfully installed and working.</p>
</body>
</html>
`

const badGatewayPage = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.25.3</center>\r\n</body>\r\n</html>\r\n"

func (e *endpoint) handle(w http.ResponseWriter, r *http.Request) {
	n := e.requests.Add(1) - 1
	e.optsMu.RLock()
	o := e.opts
	e.optsMu.RUnlock()
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	// Read into a buffer the request's size: io.ReadAll's doubling from
	// 512 bytes was most of the fake endpoint's allocation, CPU the harness
	// benchmark shares with what it measures.
	var buf bytes.Buffer
	if r.ContentLength > 0 && r.ContentLength < 64<<20 {
		buf.Grow(int(r.ContentLength) + bytes.MinRead)
	}
	_, _ = buf.ReadFrom(r.Body)
	body := buf.Bytes()
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, err.Error())
		return
	}
	if o.KeepLog {
		e.mu.Lock()
		e.bodies = append(e.bodies, raw)
		e.auth = append(e.auth, r.Header.Get("Authorization"))
		e.mu.Unlock()
	}
	fault := OK
	if o.Schedule != nil {
		fault = o.Schedule(n)
	}
	if o.Latency > 0 {
		select {
		case <-time.After(o.Latency):
		case <-r.Context().Done():
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	switch fault {
	case RateLimited:
		w.Header().Set("Retry-After", o.RetryAfter)
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"message":"rate limited","type":"rate_limit_error"}}`)
		return
	case ServerError:
		w.WriteHeader(http.StatusInternalServerError)
		io.WriteString(w, `{"error":{"message":"boom","type":"server_error"}}`)
		return
	case Unauthorized:
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"message":"bad key","type":"invalid_request_error"}}`)
		return
	case BadRequest:
		w.WriteHeader(http.StatusBadRequest)
		b, _ := json.Marshal(map[string]any{"error": map[string]any{
			"message": o.ErrorMessage, "type": "invalid_request_error", "param": nil, "code": nil}})
		w.Write(b)
		return
	case HTMLPage:
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, htmlPage)
		return
	case BadGateway:
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusBadGateway)
		io.WriteString(w, badGatewayPage)
		return
	case PlainText:
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "Ollama is running")
		return
	case Hang:
		select {
		case <-time.After(o.HangFor):
		case <-r.Context().Done():
		}
		return
	case MalformedJSON:
		io.WriteString(w, `{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assis`)
		return
	case EmptyChoices:
		io.WriteString(w, `{"id":"x","object":"chat.completion","created":0,"model":"fake","choices":[]}`)
		return
	case ConnectionReset:
		switch rw := w.(type) {
		case http.Hijacker:
			conn, _, err := rw.Hijack()
			if err == nil {
				conn.Close()
			}
		case interface{ resetConnection() }:
			rw.resetConnection()
		}
		return
	}
	req := requestOf(raw)
	reply := Reply{Content: `{"label": "Benign", "confidence": 0.5}`}
	if o.Respond != nil {
		reply = o.Respond(req)
	}
	msg := map[string]any{"role": "assistant", "content": reply.Content}
	if reply.Reasoning != "" {
		msg[o.ReasoningField] = reply.Reasoning
		if reply.Content == "" {
			msg["content"] = nil
		}
	}
	finish := "stop"
	if len(reply.ToolCalls) > 0 {
		var tcs []map[string]any
		for _, tc := range reply.ToolCalls {
			tcs = append(tcs, map[string]any{"id": tc.ID, "type": "function",
				"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments}})
		}
		msg["tool_calls"] = tcs
		finish = "tool_calls"
	}
	usage := map[string]any{"prompt_tokens": 10, "completion_tokens": 5 + reply.ReasoningTokens, "total_tokens": 15 + reply.ReasoningTokens}
	if reply.ReasoningTokens > 0 {
		usage["completion_tokens_details"] = map[string]any{"reasoning_tokens": reply.ReasoningTokens}
	}
	json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": time.Now().Unix(), "model": req.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   usage,
	})
}

// requestOf reads a ChatRequest out of the body already decoded as raw: a
// second decoding of the body was the fake endpoint's largest cost, paid
// on the cores of the harness it stands beside in benchmarks.
func requestOf(raw map[string]any) ChatRequest {
	req := ChatRequest{Raw: raw}
	req.Model, _ = raw["model"].(string)
	req.Messages = objects(raw["messages"])
	req.Tools = objects(raw["tools"])
	return req
}

// objects is v's elements when v is an array, with nil for each element
// that is not an object (json.Unmarshal's zero for such an element).
func objects(v any) []map[string]any {
	arr, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]map[string]any, len(arr))
	for i, x := range arr {
		out[i], _ = x.(map[string]any)
	}
	return out
}
