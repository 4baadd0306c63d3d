package llm

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/svbench/svbench/llm/llmtest"
)

// libraryNoise is what openai-go and encoding/json say about bodies that are
// not what they expected: no help to a person at a terminal.
var libraryNoise = []string{"invalid character", "expected destination type", "looking for beginning of value",
	"unexpected end of JSON", "OpenAI API error", "cannot unmarshal"}

func checkEndpointError(t *testing.T, err error) *EndpointError {
	t.Helper()
	var ee *EndpointError
	if !errors.As(err, &ee) {
		t.Fatalf("err = %v (%T), want an *EndpointError", err, err)
	}
	msg := err.Error()
	for _, noise := range libraryNoise {
		if strings.Contains(msg, noise) {
			t.Errorf("error carries library message %q: %s", noise, msg)
		}
	}
	if !strings.Contains(msg, "/v1/chat/completions") {
		t.Errorf("error does not name the URL: %s", msg)
	}
	if len(msg) > 1200 {
		t.Errorf("error is %d bytes long", len(msg))
	}
	return ee
}

func TestNonJSONAnswersNameTheEndpoint(t *testing.T) {
	cases := []struct {
		name         string
		fault        llmtest.Fault
		status       int
		contentType  string
		excerpt      string
		hint         string
		wantRequests int64
	}{
		{"web page on the base URL", llmtest.HTMLPage, 200, "text/html", "<title>Welcome to nginx!</title>", "ending in /v1", 1},
		{"plain text root (Ollama)", llmtest.PlainText, 200, "text/plain", "Ollama is running", "ending in /v1", 1},
		// 502 is transient: retried, then reported.
		{"proxy error page", llmtest.BadGateway, 502, "text/html", "<title>502 Bad Gateway</title>", "model server running", 3},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Options{Schedule: func(int64) llmtest.Fault { return tc.fault }})
			defer srv.Close()
			c := fastClient(t, srv, func(c *Config) { c.MaxRetries = 2 })
			_, err := c.Chat(context.Background(), userReq("m"))
			ee := checkEndpointError(t, err)
			if ee.Status != tc.status || ee.ContentType != tc.contentType {
				t.Errorf("status %d content type %q, want %d %q", ee.Status, ee.ContentType, tc.status, tc.contentType)
			}
			if !strings.Contains(ee.Message, tc.excerpt) || len(ee.Message) > maxExcerptBytes+32 {
				t.Errorf("message %q (%d bytes) lacks %q or is too long", ee.Message, len(ee.Message), tc.excerpt)
			}
			if strings.ContainsAny(ee.Message, "\r\n\t") {
				t.Errorf("control characters in message %q", ee.Message)
			}
			if !strings.Contains(ee.Hint, tc.hint) {
				t.Errorf("hint %q, want mention of %q", ee.Hint, tc.hint)
			}
			if got := srv.Requests(); got != tc.wantRequests {
				t.Errorf("requests = %d, want %d", got, tc.wantRequests)
			}
		})
	}
}

func TestHTMLBodyLabelledJSONIsNotRetried(t *testing.T) {
	srv, requests := rawServer(t, 200, "application/json", "<html><body>Login required</body></html>")
	c := newTestClient(t, Config{BaseURL: srv.URL + "/v1", MaxBackoff: time.Millisecond})
	_, err := c.Chat(context.Background(), userReq("m"))
	ee := checkEndpointError(t, err)
	if !strings.Contains(ee.Message, "Login required") || !strings.Contains(ee.Hint, "/v1") {
		t.Fatalf("err = %v", err)
	}
	if requests.Load() != 1 {
		t.Fatalf("requests = %d", requests.Load())
	}
}

func TestHTTPErrorsCarryServerMessage(t *testing.T) {
	long := strings.Repeat("x", 5000)
	cases := []struct {
		name, contentType, body string
		status                  int
		want                    string
		hint                    string
	}{
		{"OpenAI error object", "application/json",
			`{"error":{"message":"Unsupported parameter: 'temperature' is not supported with this model.","type":"invalid_request_error","param":"temperature","code":"unsupported_parameter"}}`,
			400, "Unsupported parameter: 'temperature' is not supported with this model.", "parameters"},
		{"error as a string (Ollama)", "application/json", `{"error":"model \"qwen3:8b\" not found, try pulling it first"}`,
			404, `model "qwen3:8b" not found, try pulling it first`, "model name"},
		{"vLLM top-level message", "application/json",
			`{"object":"error","message":"max_tokens must be at most 4096","type":"BadRequestError","param":null,"code":400}`,
			400, "max_tokens must be at most 4096", "parameters"},
		{"FastAPI detail", "application/json", `{"detail":[{"loc":["body","model"],"msg":"field required"}]}`,
			422, `"msg":"field required"`, "parameters"},
		{"HTML not-found page", "text/html", "<html>\n<head><title>404 Not Found</title></head>\n</html>",
			404, "<head><title>404 Not Found</title></head>", "ending in /v1"},
		{"bad key", "application/json", `{"error":{"message":"Incorrect API key provided: sk-abc***xyz."}}`,
			401, "Incorrect API key provided", "API key"},
		{"plain text", "text/plain", "Forbidden\n", 403, "Forbidden", "API key"},
		{"long message is bounded", "application/json", `{"error":{"message":"` + long + `"}}`, 400, "xxx…", "parameters"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, requests := rawServer(t, tc.status, tc.contentType, tc.body)
			c := newTestClient(t, Config{BaseURL: srv.URL + "/v1", MaxBackoff: time.Millisecond})
			_, err := c.Chat(context.Background(), userReq("m"))
			ee := checkEndpointError(t, err)
			if ee.Status != tc.status || !strings.Contains(ee.Message, tc.want) || len(ee.Message) > maxMessageBytes {
				t.Errorf("status %d message %q (%d bytes), want %d and %q", ee.Status, ee.Message, len(ee.Message), tc.status, tc.want)
			}
			if !strings.Contains(ee.Hint, tc.hint) {
				t.Errorf("hint %q, want mention of %q", ee.Hint, tc.hint)
			}
			if msg := err.Error(); !strings.Contains(msg, http.StatusText(tc.status)) || !strings.Contains(msg, ee.Message) {
				t.Errorf("error string lacks status or message: %s", msg)
			}
			if requests.Load() != 1 {
				t.Errorf("requests = %d, want 1", requests.Load())
			}
		})
	}
}

func TestErrorURLHasNoCredentials(t *testing.T) {
	srv := llmtest.New(llmtest.Options{Schedule: func(int64) llmtest.Fault { return llmtest.HTMLPage }})
	defer srv.Close()
	u, err := url.Parse(srv.BaseURL())
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword("alice", "hunter2")
	u.RawQuery = "api-key=sk-secret"
	c := newTestClient(t, Config{BaseURL: u.String(), APIKey: "sk-also-secret"})
	_, err = c.Chat(context.Background(), userReq("m"))
	ee := checkEndpointError(t, err)
	for _, secret := range []string{"hunter2", "alice", "sk-secret", "sk-also-secret"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("error reveals %q: %s", secret, err)
		}
	}
	if want := srv.URL + "/v1/chat/completions"; ee.URL != want {
		t.Errorf("URL = %q, want %q", ee.URL, want)
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:p@api.example.com/v1/chat/completions?key=s#frag": "https://api.example.com/v1/chat/completions",
		"http://127.0.0.1:8000/v1/chat/completions":                  "http://127.0.0.1:8000/v1/chat/completions",
		"http://host/v1/chat/completions?":                           "http://host/v1/chat/completions",
	} {
		u, err := url.Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := redactURL(u); got != want {
			t.Errorf("redactURL(%s) = %s, want %s", in, got, want)
		}
	}
}

// countingDialer is an HTTP client whose dials fail with err (or go to the
// network when err is nil) and are counted.
func countingDialer(dials *atomic.Int64, err error) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	d := &net.Dialer{}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		if err != nil {
			return nil, err
		}
		return d.DialContext(ctx, network, addr)
	}
	return &http.Client{Transport: tr}
}

func TestConnectionFailuresFailFast(t *testing.T) {
	// An address nothing listens on: bind a port, then free it.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	ln.Close()

	dnsErr := &net.OpError{Op: "dial", Net: "tcp",
		Err: &net.DNSError{Err: "no such host", Name: "model-server.invalid", IsNotFound: true}}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	cases := []struct {
		name, baseURL string
		dialErr       error
		message, hint string
	}{
		{"nothing listening", "http://" + closed + "/v1", nil, "connection refused", "server running"},
		{"refused (injected)", "http://127.0.0.1:9/v1", refused, "connection refused", "host and port"},
		{"unknown host", "http://model-server.invalid:8000/v1", dnsErr, `cannot resolve host "model-server.invalid": no such host`, "host name"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var dials atomic.Int64
			c := newTestClient(t, Config{BaseURL: tc.baseURL, HTTPClient: countingDialer(&dials, tc.dialErr),
				MaxRetries: 5, MaxBackoff: time.Millisecond})
			_, err := c.Chat(context.Background(), userReq("m"))
			ee := checkEndpointError(t, err)
			if ee.Status != 0 || !strings.Contains(ee.Message, tc.message) || !strings.Contains(ee.Hint, tc.hint) {
				t.Errorf("err = %v, want %q and a hint about %q", err, tc.message, tc.hint)
			}
			if strings.HasPrefix(err.Error(), "after ") {
				t.Errorf("retried: %v", err)
			}
			if n := dials.Load(); n != 1 {
				t.Errorf("dials = %d, want 1 (no retries)", n)
			}
		})
	}
}

func TestSanitize(t *testing.T) {
	cases := []struct {
		name, in string
		limit    int
		want     string
	}{
		{"whitespace collapsed", "  <html>\r\n\t<body>  hi </body>\n", 100, "<html> <body> hi </body>"},
		{"control characters", "a\x00b\x1b[31mred\x7f", 100, "a b [31mred"},
		{"format characters dropped", "safe\u202etxt.exe\u200b", 100, "safetxt.exe"},
		{"invalid UTF-8 dropped", "ok\xff\xfeok", 100, "okok"},
		{"cut with ellipsis", strings.Repeat("a", 50), 10, "aaaaaaa…"},
		{"no rune split", strings.Repeat("é", 10), 9, "ééé…"},
		{"fits exactly", "abcdefghij", 10, "abcdefghij"},
		{"trailing space is not more", "abcdefghij   \n", 10, "abcdefghij"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := sanitize([]byte(tc.in), tc.limit)
			if got != tc.want {
				t.Errorf("sanitize(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
			}
			if len(got) > tc.limit || !utf8.ValidString(got) {
				t.Errorf("result %q: %d bytes, valid UTF-8 %v", got, len(got), utf8.ValidString(got))
			}
		})
	}
}

// openai-go refuses to follow a redirect to another origin (it would carry
// the key there) and marks that final; svbench must not retry it either.
func TestCrossOriginRedirectIsNotRetried(t *testing.T) {
	other, otherRequests := rawServer(t, 200, "application/json", okBody)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	c := newTestClient(t, Config{BaseURL: srv.URL + "/v1", MaxRetries: 4, MaxBackoff: time.Millisecond})
	_, err := c.Chat(context.Background(), userReq("m"))
	ee := checkEndpointError(t, err)
	if !strings.Contains(ee.Message, "origin") || n.Load() != 1 || otherRequests.Load() != 0 {
		t.Fatalf("err = %v after %d requests (%d at the other origin)", err, n.Load(), otherRequests.Load())
	}
}

// TestIsContextLength: servers' wordings of a request over the model's
// context window are told apart from other 400s.
func TestIsContextLength(t *testing.T) {
	for _, tc := range []struct {
		status int
		msg    string
		want   bool
	}{
		{400, "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens", true},                                            // vLLM, OpenAI
		{400, "The input (5000 tokens) is longer than the model's context length (4096 tokens).", true},                                                  // SGLang
		{400, "the request exceeds the available context size, try increasing it", true},                                                                 // llama.cpp
		{422, "Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096. Given: 3000 `inputs` tokens and 2000 `max_new_tokens`", true}, // TGI
		{400, "temperature is not supported with this model", false},
		{404, "The model `x` does not exist (no context length known)", false}, // not a refusal of the request's size
		{500, "context length", false},
	} {
		got := isContextLength(tc.status, tc.msg)
		if got != tc.want {
			t.Errorf("isContextLength(%d, %q) = %v, want %v", tc.status, tc.msg, got, tc.want)
		}
	}
}
