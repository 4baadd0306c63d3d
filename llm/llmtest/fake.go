// Package llmtest is an in-process OpenAI-compatible chat completions server
// for tests and benchmarks: scripted answers, injected faults, latency.
package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
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
}

// Server is a fake endpoint.
type Server struct {
	*httptest.Server

	optsMu sync.RWMutex
	opts   Options

	requests atomic.Int64
	mu       sync.Mutex
	bodies   []map[string]any
	auth     []string
}

// New starts a server.
func New(opts Options) *Server {
	if opts.RetryAfter == "" {
		opts.RetryAfter = "0"
	}
	if opts.HangFor == 0 {
		opts.HangFor = 10 * time.Second
	}
	s := &Server{opts: opts}
	s.Server = httptest.NewServer(http.HandlerFunc(s.handle))
	return s
}

// Update changes the script while the server runs.
func (s *Server) Update(fn func(*Options)) {
	s.optsMu.Lock()
	defer s.optsMu.Unlock()
	fn(&s.opts)
}

// URL for llm.Config.BaseURL.
func (s *Server) BaseURL() string { return s.Server.URL + "/v1" }

// Requests is the number of requests received.
func (s *Server) Requests() int64 { return s.requests.Load() }

// Bodies returns the logged request bodies.
func (s *Server) Bodies() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]map[string]any(nil), s.bodies...)
}

// AuthHeaders returns the logged Authorization headers.
func (s *Server) AuthHeaders() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

func (s *Server) handle(w http.ResponseWriter, r *http.Request) {
	n := s.requests.Add(1) - 1
	s.optsMu.RLock()
	o := s.opts
	s.optsMu.RUnlock()
	if r.URL.Path != "/v1/chat/completions" {
		http.Error(w, `{"error":{"message":"not found"}}`, http.StatusNotFound)
		return
	}
	body, _ := io.ReadAll(r.Body)
	var raw map[string]any
	if err := json.Unmarshal(body, &raw); err != nil {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"error":{"message":%q,"type":"invalid_request_error"}}`, err.Error())
		return
	}
	if o.KeepLog {
		s.mu.Lock()
		s.bodies = append(s.bodies, raw)
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.mu.Unlock()
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
		if hj, ok := w.(http.Hijacker); ok {
			conn, _, err := hj.Hijack()
			if err == nil {
				conn.Close()
			}
		}
		return
	}
	req := ChatRequest{Raw: raw}
	_ = json.Unmarshal(body, &req)
	reply := Reply{Content: `{"label": "Benign", "confidence": 0.5}`}
	if o.Respond != nil {
		reply = o.Respond(req)
	}
	msg := map[string]any{"role": "assistant", "content": reply.Content}
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
	model, _ := raw["model"].(string)
	json.NewEncoder(w).Encode(map[string]any{
		"id": fmt.Sprintf("chatcmpl-%d", n), "object": "chat.completion", "created": time.Now().Unix(), "model": model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
		"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
	})
}
