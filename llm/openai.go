package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/svbench/svbench/env"
)

// Config configures an OpenAI-compatible endpoint.
//
// Retries are split between openai-go and svbench. openai-go's own retry
// loop makes every retry: it sees 408, 409, 429 and 5xx answers, honours
// Retry-After and Retry-After-Ms, and retries connection errors. svbench
// adds only what openai-go cannot see, as signals to that same loop (see
// call.roundTrip): an attempt that outlives Timeout, and a 2xx answer with
// a truncated or malformed JSON body or no choices. Connection refused and
// DNS failures, and answers that are not JSON at all, fail at once. There is
// one backoff schedule, one retry budget and one place that waits.
type Config struct {
	BaseURL string
	// APIKey is sent as a bearer token. It is held only in memory: nothing in
	// svbench writes it anywhere.
	APIKey string
	// Timeout bounds one attempt, body included (default 120 s). An attempt
	// that times out is retried.
	Timeout time.Duration
	// MaxRetries is the number of retries after the first attempt (default 5;
	// negative disables retries).
	MaxRetries int
	// MaxInFlight bounds concurrent requests through this client (default 64).
	MaxInFlight int
	// MaxBackoff bounds every wait between attempts (default 60 s, the
	// window of per-minute rate limits). Waits follow openai-go's schedule,
	// 0.5 s·2ⁿ capped at MaxBackoff minus up to 25 % jitter (not full
	// jitter), or the server's Retry-After / Retry-After-Ms when it sends
	// one. A server asking for a longer wait than MaxBackoff ends the
	// retries at once with its answer, instead of retrying before it allows.
	// Tests set milliseconds.
	MaxBackoff time.Duration
	// InitialBackoff is ignored.
	//
	// Deprecated: openai-go's backoff starts at 0.5 s and cannot be
	// configured; MaxBackoff caps it (set milliseconds in tests).
	InitialBackoff time.Duration
	// MaxResponseBytes bounds a response body (default 8 MiB): model output is
	// hostile input.
	MaxResponseBytes int64
	HTTPClient       *http.Client
	// Headers are sent with every request (vf-eval's --header: a gateway's
	// routing or tenant header). Authorization is the API key's and cannot
	// be set here.
	Headers map[string]string
}

// OpenAI is a Client for any OpenAI-compatible chat completions endpoint.
type OpenAI struct {
	client openai.Client
	cfg    Config
	slots  chan struct{}

	// served is the server's /models list, asked once after a 404 so the
	// error can name the models it does serve.
	servedOnce sync.Once
	served     []string
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
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 60 * time.Second
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
		option.WithMaxRetries(cfg.MaxRetries),
		option.WithMaxRetryDelay(cfg.MaxBackoff),
		option.WithAPIKey(cfg.APIKey),
	}
	if cfg.BaseURL != "" {
		u := cfg.BaseURL
		if !strings.HasSuffix(u, "/") {
			u += "/"
		}
		opts = append(opts, option.WithBaseURL(u))
	}
	for k, v := range cfg.Headers {
		if strings.EqualFold(k, "Authorization") {
			return nil, fmt.Errorf("header %q: the API key is sent from the key variable, not as a header", k)
		}
		opts = append(opts, option.WithHeader(k, v))
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

// RequestBody is the chat completion request svbench sends for req,
// exactly as sent: exported so tests and dry runs can see it. It is
// encoded here, in one pass over svbench's own types, rather than by
// openai-go's reflective encoder (a twentieth of the harness's CPU at
// 1,000 rows/s), which still carries it with its retries and errors.
func RequestBody(req Request) ([]byte, error) {
	body := chatBody{Model: req.Model, Messages: make([]chatMessage, 0, len(req.Messages))}
	for _, m := range req.Messages {
		body.Messages = append(body.Messages, messageBody(m))
	}
	for _, t := range req.Tools {
		f := chatFunction{Name: t.Name, Description: t.Description}
		if p := bytes.TrimSpace(t.Parameters); len(p) > 0 && p[0] == '{' && json.Valid(p) {
			f.Parameters = json.RawMessage(p)
		}
		body.Tools = append(body.Tools, chatTool{Type: "function", Function: f})
	}
	s := req.Sampling
	reasoning := IsReasoningModel(req.Model)
	if s.MaxTokens > 0 {
		if reasoning {
			body.MaxCompletionTokens = s.MaxTokens
		} else {
			body.MaxTokens = s.MaxTokens
		}
	}
	if !reasoning {
		body.Temperature, body.TopP = s.Temperature, s.TopP
	}
	body.Seed = s.Seed
	b, err := json.Marshal(body)
	if err != nil || len(s.Extra) == 0 {
		return b, err
	}
	// The extra fields go in verbatim, over svbench's own of the same name.
	merged := map[string]json.RawMessage{}
	if err := json.Unmarshal(b, &merged); err != nil {
		return nil, err
	}
	for k, v := range s.Extra {
		if merged[k], err = json.Marshal(v); err != nil {
			return nil, fmt.Errorf("sampling extra field %q: %w", k, err)
		}
	}
	return json.Marshal(merged)
}

type chatBody struct {
	Model               string        `json:"model"`
	Messages            []chatMessage `json:"messages"`
	Tools               []chatTool    `json:"tools,omitempty"`
	MaxTokens           int           `json:"max_tokens,omitempty"`
	MaxCompletionTokens int           `json:"max_completion_tokens,omitempty"`
	// A temperature of 0 is sent as 0: only an unset one is left out.
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
}

type chatMessage struct {
	Role       env.Role       `json:"role"`
	Content    *string        `json:"content,omitempty"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type chatToolCall struct {
	ID       string           `json:"id"`
	Type     string           `json:"type"`
	Function chatCallFunction `json:"function"`
}

type chatCallFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type chatTool struct {
	Type     string       `json:"type"`
	Function chatFunction `json:"function"`
}

type chatFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// messageBody renders one turn of the conversation sent back to the model.
//
// An assistant turn's Reasoning is never sent back. DeepSeek's API rejects
// requests whose messages carry reasoning_content (400), strict OpenAI-style
// validators reject the unknown field, and servers that accept it either
// drop it or, like Qwen3's and DeepSeek-R1's chat templates, strip earlier
// turns' thinking from the prompt anyway: sending it would only spend
// context (up to MaxReasoningBytes per turn) and bandwidth. Reasoning stays
// in the rollout for rubrics and reports.
func messageBody(m env.Message) chatMessage {
	switch m.Role {
	case env.RoleSystem, env.RoleTool:
		return chatMessage{Role: m.Role, Content: &m.Content, ToolCallID: m.ToolCallID}
	case env.RoleAssistant:
		a := chatMessage{Role: env.RoleAssistant}
		// An assistant turn that only calls tools has no content.
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content = &m.Content
		}
		for _, tc := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, chatToolCall{ID: tc.ID, Type: "function", Function: chatCallFunction{Name: tc.Name, Arguments: tc.Arguments}})
		}
		return a
	default:
		return chatMessage{Role: env.RoleUser, Content: &m.Content}
	}
}

// MaxToolCalls bounds the tool calls taken from one assistant message (the
// response cache holds replayed answers to the same bound).
const MaxToolCalls = 64

// Chat sends one chat completion, retrying transient failures (see Config).
// Failures of the endpoint are *EndpointError.
func (c *OpenAI) Chat(ctx context.Context, req Request) (Response, error) {
	select {
	case c.slots <- struct{}{}:
		defer func() { <-c.slots }()
	case <-ctx.Done():
		return Response{}, ctx.Err()
	}
	rctx, abort := context.WithCancelCause(ctx)
	defer abort(nil)
	cl := &call{timeout: c.cfg.Timeout, maxWait: c.cfg.MaxBackoff, abort: abort}
	// openai-go copies the body into raw instead of decoding it: roundTrip
	// has decoded it already, and openai-go's own errors for bodies that are
	// not JSON say nothing a person could act on.
	body, err := RequestBody(req)
	if err != nil {
		return Response{}, fmt.Errorf("encode the request: %w", err)
	}
	var raw []byte
	// openai-go sends body in place of its own encoding of the (empty)
	// parameters, with its authentication, retries and errors.
	_, err = c.client.Chat.Completions.New(rctx, openai.ChatCompletionNewParams{},
		option.WithRequestBody("application/json", body),
		option.WithMiddleware(cl.roundTrip), option.WithResponseBodyInto(&raw))
	if err != nil && ctx.Err() != nil {
		return Response{}, ctx.Err()
	}
	if err = cl.result(rctx, err); err != nil {
		var ee *EndpointError
		if errors.As(err, &ee) && ee.Status == http.StatusNotFound {
			if prefix, rest, ok := strings.Cut(req.Model, "/"); ok && KnownProvider(prefix) {
				ee.Hint += fmt.Sprintf(" The model name %q keeps the provider prefix %q (Inspect's provider/model form): a server that is not a router may know it as %q.", req.Model, prefix+"/", rest)
			}
			// A bare 404 leaves the user guessing the served name; the
			// server's own list ends the guessing.
			if served := c.servedModels(ctx); len(served) > 0 {
				ee.Hint += " " + servedHint(req.Model, served)
			}
		}
		if cl.attempts > 1 {
			return Response{}, fmt.Errorf("after %d attempts: %w", cl.attempts, err)
		}
		return Response{}, err
	}
	return cl.resp, nil
}

// call is one logical request. openai-go runs roundTrip once per attempt,
// one attempt at a time; roundTrip keeps what the final answer or error
// needs.
type call struct {
	timeout time.Duration
	maxWait time.Duration
	// abort ends the whole request with its cause: openai-go retries every
	// error that arrives without a response, and a cancelled context is
	// the one signal it stops for.
	abort context.CancelCauseFunc

	attempts int
	url      string
	// The last response, whatever its status.
	status int
	header http.Header
	body   []byte
	// The last 2xx body decoded, or what is wrong with it.
	resp Response
	err  error
}

var errAttemptTimeout = errors.New("attempt timed out")

// roundTrip is openai-go middleware around one attempt. It bounds the
// attempt by Config.Timeout, reads the whole body within it, and turns what
// openai-go cannot judge into signals its retry loop understands:
//
//   - a timeout becomes an error without a response, which openai-go
//     retries like the broken connections it sees itself;
//   - a 2xx body that is empty, truncated or has no choices gets the
//     x-should-retry header, which openai-go honours (it never retries a
//     2xx on its own);
//   - connection refused, an unresolvable host and an oversized body abort
//     the request, which openai-go does not retry.
func (c *call) roundTrip(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	c.attempts++
	c.url = redactURL(req.URL)
	c.status, c.header, c.body, c.resp, c.err = 0, nil, nil, Response{}, nil
	actx, cancel := context.WithTimeoutCause(req.Context(), c.timeout, errAttemptTimeout)
	defer cancel()
	res, err := next(req.WithContext(actx))
	var body []byte
	if err == nil {
		body, err = io.ReadAll(res.Body)
		res.Body.Close()
	}
	if err != nil {
		return nil, c.transportError(req.Context(), actx, res, err)
	}
	c.status, c.header, c.body = res.StatusCode, res.Header, body
	res.Body = io.NopCloser(bytes.NewReader(body))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return res, nil // openai-go retries or reports it; result explains it
	}
	c.resp, c.err = parseCompletion(c.url, res, body)
	var ee *EndpointError
	if errors.As(c.err, &ee) && ee.transient {
		res.Header.Set("X-Should-Retry", "true")
	}
	return res, nil
}

// transportError describes an attempt that got no complete response, and
// aborts the request when another attempt would fail the same way.
func (c *call) transportError(parent, attempt context.Context, res *http.Response, err error) error {
	if parent.Err() != nil {
		return err // the caller left; openai-go reports its context's error
	}
	if errors.Is(context.Cause(attempt), errAttemptTimeout) {
		return &EndpointError{URL: c.url, Message: fmt.Sprintf("no complete answer within %s", c.timeout),
			Hint: "the model may be slow or the server stuck: raise --timeout or lower max_tokens",
			Err:  &timeoutError{after: c.timeout}, transient: true}
	}
	var tooBig *bodyTooLargeError
	if errors.As(err, &tooBig) {
		ee := &EndpointError{URL: c.url, Message: tooBig.Error(), Err: tooBig,
			Hint: "lower max_tokens, or raise the response size limit"}
		if res != nil {
			ee.Status, ee.ContentType = res.StatusCode, mediaType(res.Header)
		}
		c.abort(ee)
		return ee
	}
	if ee := dialFailure(c.url, err); ee != nil {
		c.abort(ee)
		return ee
	}
	// Anything else (a reset, EOF, a refused redirect) goes back unchanged,
	// so openai-go's own judgement of it stands; result describes it.
	return err
}

// result is the outcome of the request given openai-go's error.
func (c *call) result(rctx context.Context, err error) error {
	if err == nil {
		if c.status/100 != 2 {
			return &EndpointError{URL: c.url, Status: c.status, ContentType: mediaType(c.header),
				Message: sanitize(c.body, maxExcerptBytes), Hint: baseURLHint}
		}
		return c.err
	}
	if rctx.Err() != nil {
		if cause := context.Cause(rctx); cause != nil {
			return cause // roundTrip aborted the request
		}
	}
	var ee *EndpointError
	switch {
	case errors.As(err, &ee):
		return ee
	case c.status >= 400:
		// openai-go's own error says only "400 Bad Request", and for some
		// JSON error shapes not even that; the body says why.
		return httpError(c.url, c.status, c.header, c.body, c.maxWait.String())
	case c.url == "":
		return fmt.Errorf("chat completion request: %w", err) // no attempt was made
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET):
		return &EndpointError{URL: c.url, Message: "the connection closed before a complete answer: " + transportMessage(err),
			Hint: "did the server crash or a proxy cut the connection? check the server logs", Err: err}
	}
	return &EndpointError{URL: c.url, Message: transportMessage(err), Err: err,
		Hint: "is the server reachable from here, and does the base URL (--base-url) name it?"}
}

// parseCompletion decodes a 2xx body. Failures another attempt may not
// repeat (truncated JSON, no choices) are marked transient; an answer that
// is not JSON at all means the request went to the wrong place.
func parseCompletion(u string, res *http.Response, body []byte) (Response, error) {
	fail := func(transient bool, msg, hint string) (Response, error) {
		return Response{}, &EndpointError{URL: u, Status: res.StatusCode, ContentType: mediaType(res.Header),
			Message: msg, Hint: hint, transient: transient}
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n\ufeff")
	switch {
	case len(trimmed) == 0:
		return fail(true, "empty body", "the server may be overloaded: check its logs")
	case trimmed[0] != '{':
		return fail(false, "the answer is not JSON: "+sanitize(body, maxExcerptBytes), baseURLHint)
	}
	// encoding/json checks the whole body before decoding any of it, so a
	// truncated answer fails here rather than decoding in part.
	var cc completionBody
	if json.Unmarshal(trimmed, &cc) != nil {
		return fail(true, "truncated or malformed JSON: "+sanitize(body, maxExcerptBytes),
			"the server or a proxy cut the answer short: check their logs")
	}
	if len(cc.Choices) == 0 {
		msg := "the answer has no choices"
		if m := jsonText(cc.Error); m != "" {
			msg += "; server error: " + sanitize([]byte(m), maxMessageBytes)
		}
		return fail(true, msg, "the server may be overloaded: check its logs")
	}
	ch := cc.Choices[0].Message
	msg := env.Message{Role: env.RoleAssistant, Content: lenientString(ch.Content), Reasoning: reasoningText(ch.ReasoningContent, ch.Reasoning)}
	if msg.Content == "" {
		msg.Content = lenientString(ch.Refusal)
	}
	// A server without a reasoning parser leaves the thinking in content:
	// the same rule as every scoring path (env.CommitAnswers) keeps only
	// the committed answer there.
	msg = env.CommitAnswers([]env.Message{msg})[0]
	msg.Reasoning = boundReasoning(msg.Reasoning)
	var calls []env.ToolCall
	if json.Unmarshal(ch.ToolCalls, &calls) == nil {
		msg.ToolCalls = calls[:min(len(calls), MaxToolCalls):min(len(calls), MaxToolCalls)]
	}
	var usage completionUsage
	_ = json.Unmarshal(cc.Usage, &usage)
	return Response{
		Message:      msg,
		FinishReason: lenientString(cc.Choices[0].FinishReason),
		Model:        lenientString(cc.Model),
		Usage: env.Usage{
			PromptTokens:     int64(usage.PromptTokens),
			CompletionTokens: int64(usage.CompletionTokens),
			TotalTokens:      int64(usage.TotalTokens),
			ReasoningTokens:  int64(usage.CompletionTokensDetails.ReasoningTokens),
		},
	}, nil
}

// completionBody is what svbench reads of a chat completion. A field a
// server may send in another type than OpenAI's (content null or a list
// of parts, reasoning null, arguments as an object, token counts as
// floats) is kept raw and read leniently: a value of another type reads
// as empty, never as a malformed answer.
type completionBody struct {
	Model   json.RawMessage `json:"model"`
	Choices []struct {
		FinishReason json.RawMessage `json:"finish_reason"`
		Message      struct {
			Content          json.RawMessage `json:"content"`
			Refusal          json.RawMessage `json:"refusal"`
			ReasoningContent json.RawMessage `json:"reasoning_content"`
			Reasoning        json.RawMessage `json:"reasoning"`
			ToolCalls        json.RawMessage `json:"tool_calls"`
		} `json:"message"`
	} `json:"choices"`
	Usage json.RawMessage `json:"usage"`
	// Error is what some servers send in place of choices.
	Error json.RawMessage `json:"error"`
}

type completionUsage struct {
	PromptTokens            lenientCount `json:"prompt_tokens"`
	CompletionTokens        lenientCount `json:"completion_tokens"`
	TotalTokens             lenientCount `json:"total_tokens"`
	CompletionTokensDetails struct {
		ReasoningTokens lenientCount `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// lenientCount is a token count: a JSON number (an integer, or a float a
// server wrote as one), anything else 0.
type lenientCount int64

func (c *lenientCount) UnmarshalJSON(b []byte) error {
	var f float64
	if json.Unmarshal(b, &f) == nil && f >= 0 && f < 1<<62 {
		*c = lenientCount(f)
	}
	return nil
}

// lenientString is a JSON string's value; any other JSON value is "".
func lenientString(raw json.RawMessage) string {
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	return ""
}

type timeoutError struct{ after time.Duration }

func (e *timeoutError) Error() string { return fmt.Sprintf("request timed out after %s", e.after) }

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

// maxServedNames bounds the model names a 404's hint lists.
const maxServedNames = 20

// servedModels lists the server's /models once (10 s, no retries); nil
// when the server has no such list.
func (c *OpenAI) servedModels(ctx context.Context) []string {
	c.servedOnce.Do(func() {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		page, err := c.client.Models.List(lctx, option.WithMaxRetries(0))
		if err != nil || page == nil {
			return
		}
		for _, m := range page.Data {
			if id := sanitize([]byte(m.ID), 200); id != "" {
				c.served = append(c.served, id)
			}
		}
	})
	return c.served
}

// servedHint names the models a server serves, the one the requested name
// most likely meant first.
func servedHint(model string, served []string) string {
	for _, s := range served {
		if s != model && strings.HasSuffix(model, "/"+s) {
			return fmt.Sprintf("The server serves %q: pass -m %s.", s, s)
		}
	}
	list := served
	more := ""
	if len(list) > maxServedNames {
		list, more = list[:maxServedNames], fmt.Sprintf(", and %d more", len(served)-maxServedNames)
	}
	return fmt.Sprintf("The server serves (GET /models): %s%s.", strings.Join(list, ", "), more)
}

// enginePrefixes are Inspect's providers that run a model themselves
// (vllm/…, hf/…): the prefix names the engine and is never part of the
// name an OpenAI-compatible server knows the model by.
var enginePrefixes = map[string]bool{
	"vllm": true, "hf": true, "sglang": true, "ollama": true, "llama-cpp-python": true, "transformer_lens": true,
}

// providerHosts are the API hosts of the providers whose names prefix
// model ids in Inspect's provider/model form.
var providerHosts = map[string]string{
	"openai":    "api.openai.com",
	"anthropic": "api.anthropic.com",
	"google":    "generativelanguage.googleapis.com",
	"mistral":   "api.mistral.ai",
	"together":  "api.together.xyz",
	"groq":      "api.groq.com",
	"deepseek":  "api.deepseek.com",
	"fireworks": "api.fireworks.ai",
}

// KnownProvider reports whether name is a provider prefix of Inspect's
// provider/model form.
func KnownProvider(name string) bool { _, ok := providerHosts[name]; return ok || enginePrefixes[name] }

// StripProviderPrefix removes a provider prefix ("openai/gpt-4o-mini") when
// the base URL is that provider's own API (an empty base URL is OpenAI's):
// the provider's server knows the model without it. Routers such as
// OpenRouter and local servers keep the name as written. An engine prefix
// (vllm/, hf/, …) is always removed: it names what Inspect would run the
// model with, never part of a served name. It reports whether it stripped
// anything.
func StripProviderPrefix(model, baseURL string) (string, bool) {
	prefix, rest, ok := strings.Cut(model, "/")
	if ok && rest != "" && enginePrefixes[prefix] {
		return rest, true
	}
	host, known := providerHosts[prefix]
	if !ok || !known || rest == "" {
		return model, false
	}
	h := "api.openai.com"
	if baseURL != "" {
		u, err := url.Parse(baseURL)
		if err != nil {
			return model, false
		}
		h = u.Hostname()
	}
	if h != host {
		return model, false
	}
	return rest, true
}
