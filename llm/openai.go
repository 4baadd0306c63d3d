package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/shared"

	"github.com/svbench/svbench/env"
)

// Config configures an OpenAI-compatible endpoint.
type Config struct {
	BaseURL string
	// APIKey is sent as a bearer token. It is held only in memory: nothing in
	// svbench writes it anywhere.
	APIKey string
	// Timeout bounds one attempt (default 120 s).
	Timeout time.Duration
	// MaxRetries is the number of retries after the first attempt (default 5;
	// negative disables retries).
	MaxRetries int
	// MaxInFlight bounds concurrent requests through this client (default 64).
	MaxInFlight int
	// InitialBackoff and MaxBackoff shape the exponential backoff with full
	// jitter (defaults 500 ms and 30 s). A Retry-After header wins when present.
	InitialBackoff time.Duration
	MaxBackoff     time.Duration
	// MaxResponseBytes bounds a response body (default 8 MiB): model output is
	// hostile input.
	MaxResponseBytes int64
	HTTPClient       *http.Client
}

// OpenAI is a Client for any OpenAI-compatible chat completions endpoint.
type OpenAI struct {
	client openai.Client
	cfg    Config
	slots  chan struct{}
}

// NewOpenAI builds a client. An empty BaseURL means OpenAI's own API.
func NewOpenAI(cfg Config) (*OpenAI, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 120 * time.Second
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 5
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	if cfg.MaxInFlight <= 0 {
		cfg.MaxInFlight = 64
	}
	if cfg.InitialBackoff <= 0 {
		cfg.InitialBackoff = 500 * time.Millisecond
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 30 * time.Second
	}
	if cfg.MaxResponseBytes <= 0 {
		cfg.MaxResponseBytes = 8 << 20
	}
	hc := cfg.HTTPClient
	if hc == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// Keep enough idle connections for the in-flight bound, or every
		// request past the default 2 per host pays a new handshake.
		tr.MaxIdleConnsPerHost = cfg.MaxInFlight
		tr.MaxIdleConns = cfg.MaxInFlight * 2
		hc = &http.Client{Transport: tr}
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	limited := *hc
	limited.Transport = limitTransport{base: base, max: cfg.MaxResponseBytes}

	opts := []option.RequestOption{
		option.WithHTTPClient(&limited),
		// svbench owns retries so it can honour Retry-After, count attempts
		// and treat empty or malformed bodies as transient.
		option.WithMaxRetries(0),
		option.WithAPIKey(cfg.APIKey),
	}
	if cfg.BaseURL != "" {
		u := cfg.BaseURL
		if !strings.HasSuffix(u, "/") {
			u += "/"
		}
		opts = append(opts, option.WithBaseURL(u))
	}
	return &OpenAI{client: openai.NewClient(opts...), cfg: cfg, slots: make(chan struct{}, cfg.MaxInFlight)}, nil
}

// IsReasoningModel reports whether a model takes max_completion_tokens and
// rejects temperature (OpenAI's gpt-5 and o-series). Provider prefixes such
// as "openai/" are ignored.
func IsReasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndexByte(m, '/'); i >= 0 {
		m = m[i+1:]
	}
	for _, p := range []string{"gpt-5", "o1", "o3", "o4"} {
		if m == p || strings.HasPrefix(m, p+"-") || strings.HasPrefix(m, p+".") {
			return true
		}
	}
	return false
}

// Params builds the request body: exported so tests and dry runs can see
// exactly what would be sent.
func Params(req Request) openai.ChatCompletionNewParams {
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(req.Model)}
	for _, m := range req.Messages {
		p.Messages = append(p.Messages, messageParam(m))
	}
	for _, t := range req.Tools {
		var schema map[string]any
		if len(t.Parameters) > 0 {
			_ = json.Unmarshal(t.Parameters, &schema)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name:        t.Name,
			Description: openai.String(t.Description),
			Parameters:  shared.FunctionParameters(schema),
		}))
	}
	s := req.Sampling
	reasoning := IsReasoningModel(req.Model)
	if s.MaxTokens > 0 {
		if reasoning {
			p.MaxCompletionTokens = openai.Int(int64(s.MaxTokens))
		} else {
			p.MaxTokens = openai.Int(int64(s.MaxTokens))
		}
	}
	if !reasoning {
		if s.Temperature != nil {
			p.Temperature = openai.Float(*s.Temperature)
		}
		if s.TopP != nil {
			p.TopP = openai.Float(*s.TopP)
		}
	}
	if s.Seed != nil {
		p.Seed = openai.Int(*s.Seed)
	}
	if len(s.Extra) > 0 {
		p.SetExtraFields(s.Extra)
	}
	return p
}

func messageParam(m env.Message) openai.ChatCompletionMessageParamUnion {
	switch m.Role {
	case env.RoleSystem:
		return openai.SystemMessage(m.Content)
	case env.RoleTool:
		return openai.ToolMessage(m.Content, m.ToolCallID)
	case env.RoleAssistant:
		a := openai.ChatCompletionAssistantMessageParam{}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = openai.String(m.Content)
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       tc.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
	default:
		return openai.UserMessage(m.Content)
	}
}

// maxRetryAfter caps how long a server may ask us to wait before one retry.
const maxRetryAfter = 5 * time.Minute

// maxToolCalls bounds the tool calls taken from one assistant message.
const maxToolCalls = 64

// Chat sends one chat completion, retrying transient failures.
func (c *OpenAI) Chat(ctx context.Context, req Request) (Response, error) {
	select {
	case c.slots <- struct{}{}:
		defer func() { <-c.slots }()
	case <-ctx.Done():
		return Response{}, ctx.Err()
	}
	params := Params(req)
	var lastErr error
	for attempt := 0; ; attempt++ {
		resp, err := c.once(ctx, params)
		if err == nil {
			return resp, nil
		}
		lastErr = err
		if ctx.Err() != nil {
			return Response{}, ctx.Err()
		}
		retry, wait := c.retryable(err, attempt)
		if !retry || attempt >= c.cfg.MaxRetries {
			if attempt > 0 {
				return Response{}, fmt.Errorf("after %d attempts: %w", attempt+1, lastErr)
			}
			return Response{}, lastErr
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return Response{}, ctx.Err()
		case <-t.C:
		}
	}
}

// errEmptyChoices is returned when an endpoint answers 200 with no choices,
// which some servers do under load; it is retried.
var errEmptyChoices = errors.New("response has no choices")

func (c *OpenAI) once(ctx context.Context, params openai.ChatCompletionNewParams) (Response, error) {
	actx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	cc, err := c.client.Chat.Completions.New(actx, params)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return Response{}, &timeoutError{after: c.cfg.Timeout}
		}
		return Response{}, err
	}
	if len(cc.Choices) == 0 {
		return Response{}, errEmptyChoices
	}
	ch := cc.Choices[0]
	msg := env.Message{Role: env.RoleAssistant, Content: ch.Message.Content}
	if msg.Content == "" && ch.Message.Refusal != "" {
		msg.Content = ch.Message.Refusal
	}
	for i, tc := range ch.Message.ToolCalls {
		if i == maxToolCalls {
			break
		}
		msg.ToolCalls = append(msg.ToolCalls, env.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	return Response{
		Message:      msg,
		FinishReason: string(ch.FinishReason),
		Model:        cc.Model,
		Usage: env.Usage{
			PromptTokens:     cc.Usage.PromptTokens,
			CompletionTokens: cc.Usage.CompletionTokens,
			TotalTokens:      cc.Usage.TotalTokens,
		},
	}, nil
}

type timeoutError struct{ after time.Duration }

func (e *timeoutError) Error() string { return fmt.Sprintf("request timed out after %s", e.after) }

// retryable classifies an error and says how long to wait before retrying.
func (c *OpenAI) retryable(err error, attempt int) (bool, time.Duration) {
	backoff := c.backoff(attempt)
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		switch {
		case apiErr.StatusCode == http.StatusTooManyRequests || apiErr.StatusCode == http.StatusRequestTimeout ||
			apiErr.StatusCode == http.StatusConflict || apiErr.StatusCode >= 500:
			if apiErr.Response != nil {
				if d, ok := retryAfter(apiErr.Response.Header, time.Now()); ok {
					return true, min(d, maxRetryAfter)
				}
			}
			return true, backoff
		default:
			// 400, 401, 403, 404, 422: retrying will not change the answer.
			return false, 0
		}
	}
	var te *timeoutError
	var ne net.Error
	var tooBig *bodyTooLargeError
	switch {
	case errors.As(err, &tooBig):
		return false, 0
	case errors.As(err, &te), errors.Is(err, errEmptyChoices),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EPIPE),
		errors.As(err, &ne):
		return true, backoff
	}
	// Malformed JSON bodies surface as decode errors from the SDK; proxies
	// in front of inference servers produce them transiently.
	if strings.Contains(err.Error(), "unexpected end of JSON") || strings.Contains(err.Error(), "invalid character") {
		return true, backoff
	}
	return false, 0
}

// backoff is exponential with full jitter: uniform in [0, min(max, base·2^n)].
func (c *OpenAI) backoff(attempt int) time.Duration {
	d := c.cfg.InitialBackoff << min(attempt, 20)
	if d <= 0 || d > c.cfg.MaxBackoff {
		d = c.cfg.MaxBackoff
	}
	return time.Duration(rand.Int64N(int64(d)) + 1)
}

// retryAfter parses Retry-After (seconds or HTTP date) and the
// retry-after-ms header some gateways send.
func retryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
		return time.Duration(s * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d, true
		}
		return 0, true
	}
	return 0, false
}

// limitTransport caps response bodies.
type limitTransport struct {
	base http.RoundTripper
	max  int64
}

func (t limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	resp.Body = &limitedBody{rc: resp.Body, left: t.max, max: t.max}
	return resp, nil
}

type bodyTooLargeError struct{ max int64 }

func (e *bodyTooLargeError) Error() string {
	return fmt.Sprintf("response body larger than %d bytes", e.max)
}

type limitedBody struct {
	rc   io.ReadCloser
	left int64
	max  int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One more byte tells a body of exactly max bytes from a larger one.
		var one [1]byte
		n, _ := b.rc.Read(one[:])
		if n > 0 {
			return 0, &bodyTooLargeError{max: b.max}
		}
		return 0, io.EOF
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
