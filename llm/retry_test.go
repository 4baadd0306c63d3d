package llm

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/svbench/svbench/llm/llmtest"
)

// The tests in this file run in synctest bubbles on in-memory transports:
// waits of seconds or minutes take no real time, and elapsed times are exact.

func TestRetryAfterIsHonoured(t *testing.T) {
	header := func(kv ...string) func() http.Header {
		return func() http.Header {
			h := http.Header{}
			for i := 0; i < len(kv); i += 2 {
				h.Set(kv[i], kv[i+1])
			}
			return h
		}
	}
	cases := []struct {
		name   string
		header func() http.Header // built inside the bubble, at the time of the answer
		want   time.Duration
	}{
		{"Retry-After seconds", header("Retry-After", "2"), 2 * time.Second},
		{"Retry-After fraction", header("Retry-After", "0.5"), 500 * time.Millisecond},
		{"Retry-After-Ms", header("Retry-After-Ms", "250"), 250 * time.Millisecond},
		{"Retry-After-Ms wins", header("Retry-After-Ms", "250", "Retry-After", "9"), 250 * time.Millisecond},
		{"Retry-After HTTP date", func() http.Header {
			return http.Header{"Retry-After": {time.Now().Add(3 * time.Second).UTC().Format(http.TimeFormat)}}
		}, 3 * time.Second},
		{"Retry-After at MaxBackoff", header("Retry-After", "60"), time.Minute},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &script{steps: []step{
					{status: http.StatusTooManyRequests, header: tc.header(), body: `{"error":{"message":"slow down"}}`},
					{status: http.StatusOK, body: okBody},
				}}
				c := scriptClient(t, s, func(c *Config) { c.MaxBackoff = time.Minute })
				if _, err := c.Chat(context.Background(), userReq("m")); err != nil {
					t.Fatal(err)
				}
				if gaps := s.gaps(); len(gaps) != 1 || gaps[0] != tc.want {
					t.Fatalf("waits = %v, want [%s]", gaps, tc.want)
				}
			})
		})
	}
}

func TestRetryAfterBeyondMaxBackoffEndsRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []step{
			{status: http.StatusTooManyRequests, header: http.Header{"Retry-After": {"120"}}, body: `{"error":{"message":"slow down"}}`},
			{status: http.StatusOK, body: okBody},
		}}
		c := scriptClient(t, s, func(c *Config) { c.MaxBackoff = time.Minute })
		start := time.Now()
		_, err := c.Chat(context.Background(), userReq("m"))
		var ee *EndpointError
		if !errors.As(err, &ee) || ee.Status != http.StatusTooManyRequests || ee.Message != "slow down" {
			t.Fatalf("err = %v, want the server's 429", err)
		}
		if !strings.Contains(ee.Hint, "Retry-After: 120") || !strings.Contains(ee.Hint, "1m0s") {
			t.Errorf("hint %q does not explain the wait", ee.Hint)
		}
		if s.requests() != 1 || time.Since(start) != 0 {
			t.Fatalf("%d requests after %s, want 1 at once", s.requests(), time.Since(start))
		}
	})
}

func TestBackoffIsCappedByMaxBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []step{{status: http.StatusInternalServerError, body: `{"error":{"message":"boom"}}`}}}
		const maxBackoff = 3 * time.Second
		c := scriptClient(t, s, func(c *Config) { c.MaxRetries = 6; c.MaxBackoff = maxBackoff })
		_, err := c.Chat(context.Background(), userReq("m"))
		if err == nil || !strings.HasPrefix(err.Error(), "after 7 attempts: ") || !strings.Contains(err.Error(), "boom") {
			t.Fatalf("err = %v", err)
		}
		gaps := s.gaps()
		if len(gaps) != 6 {
			t.Fatalf("waits = %v, want 6", gaps)
		}
		for _, g := range gaps {
			if g <= 0 || g > maxBackoff {
				t.Fatalf("waits = %v, want each in (0, %s]", gaps, maxBackoff)
			}
		}
	})
}

func TestAttemptFailuresAreRetried(t *testing.T) {
	const timeout, maxBackoff = 2 * time.Minute, 10 * time.Millisecond
	cases := []struct {
		name    string
		fault   llmtest.Fault
		message string
	}{
		{"hang past the attempt timeout", llmtest.Hang, "no complete answer within 2m0s"},
		{"truncated JSON", llmtest.MalformedJSON, "truncated or malformed JSON: {\"id\":\"x\""},
		{"empty choices", llmtest.EmptyChoices, "the answer has no choices"},
		{"connection reset", llmtest.ConnectionReset, "the connection closed before a complete answer: llmtest: connection reset"},
		{"500", llmtest.ServerError, "boom"},
		{"429", llmtest.RateLimited, "rate limited"},
		{"502 page", llmtest.BadGateway, "<title>502 Bad Gateway</title>"},
	}
	client := func(t *testing.T, tr *llmtest.Transport) *OpenAI {
		return newTestClient(t, Config{BaseURL: tr.BaseURL(), HTTPClient: &http.Client{Transport: tr},
			Timeout: timeout, MaxRetries: 2, MaxBackoff: maxBackoff})
	}
	for _, tc := range cases {
		t.Run(tc.name+"/recovers", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := llmtest.NewTransport(llmtest.Options{HangFor: time.Hour, Schedule: func(n int64) llmtest.Fault {
					if n < 2 {
						return tc.fault
					}
					return llmtest.OK
				}})
				start := time.Now()
				resp, err := client(t, tr).Chat(context.Background(), userReq("m"))
				if err != nil {
					t.Fatal(err)
				}
				if !strings.Contains(resp.Message.Content, "Benign") || tr.Requests() != 3 {
					t.Fatalf("content %q after %d requests", resp.Message.Content, tr.Requests())
				}
				if el := time.Since(start); tc.fault == llmtest.Hang && (el < 2*timeout || el > 2*timeout+2*maxBackoff) {
					t.Fatalf("took %s, want two timeouts and two short waits", el)
				}
			})
		})
		t.Run(tc.name+"/gives up", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tr := llmtest.NewTransport(llmtest.Options{HangFor: time.Hour, Schedule: func(int64) llmtest.Fault { return tc.fault }})
				_, err := client(t, tr).Chat(context.Background(), userReq("m"))
				var ee *EndpointError
				if !errors.As(err, &ee) || !strings.HasPrefix(err.Error(), "after 3 attempts: ") || !strings.Contains(err.Error(), tc.message) {
					t.Fatalf("err = %v, want an EndpointError after 3 attempts saying %q", err, tc.message)
				}
				if tr.Requests() != 3 {
					t.Fatalf("requests = %d, want 3", tr.Requests())
				}
			})
		})
	}
}

// Every kind of transient failure spends the same budget: there is one
// retry loop, not one inside another.
func TestOneRetryBudgetAcrossFailureKinds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		kinds := []llmtest.Fault{llmtest.ServerError, llmtest.MalformedJSON, llmtest.Hang, llmtest.ConnectionReset, llmtest.EmptyChoices, llmtest.RateLimited}
		tr := llmtest.NewTransport(llmtest.Options{HangFor: time.Hour, Schedule: func(n int64) llmtest.Fault { return kinds[n%int64(len(kinds))] }})
		c := newTestClient(t, Config{BaseURL: tr.BaseURL(), HTTPClient: &http.Client{Transport: tr},
			Timeout: time.Second, MaxRetries: 4, MaxBackoff: time.Millisecond})
		_, err := c.Chat(context.Background(), userReq("m"))
		if err == nil || !strings.HasPrefix(err.Error(), "after 5 attempts: ") {
			t.Fatalf("err = %v", err)
		}
		if tr.Requests() != 5 {
			t.Fatalf("requests = %d, want 5", tr.Requests())
		}
	})
}

func TestNegativeMaxRetriesDisablesRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []step{{status: http.StatusServiceUnavailable, body: `{"error":{"message":"loading model"}}`}}}
		c := scriptClient(t, s, func(c *Config) { c.MaxRetries = -1 })
		_, err := c.Chat(context.Background(), userReq("m"))
		var ee *EndpointError
		if !errors.As(err, &ee) || ee.Status != http.StatusServiceUnavailable || s.requests() != 1 {
			t.Fatalf("err = %v after %d requests", err, s.requests())
		}
	})
}

func TestCallerCancellationStopsWaiting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []step{{status: http.StatusTooManyRequests, header: http.Header{"Retry-After": {"30"}}, body: `{}`}}}
		c := scriptClient(t, s, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := c.Chat(ctx, userReq("m"))
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the caller's deadline", err)
		}
		if s.requests() != 1 {
			t.Fatalf("requests = %d", s.requests())
		}
	})
}

func TestOpenRouterErrorInsideOKIsRetriedAndReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &script{steps: []step{{status: http.StatusOK,
			body: `{"id":"gen-1","object":"chat.completion","choices":[],"error":{"message":"Provider returned error","code":502}}`}}}
		c := scriptClient(t, s, func(c *Config) { c.MaxRetries = 1; c.MaxBackoff = time.Millisecond })
		_, err := c.Chat(context.Background(), userReq("m"))
		if err == nil || !strings.Contains(err.Error(), "server error: Provider returned error") || s.requests() != 2 {
			t.Fatalf("err = %v after %d requests", err, s.requests())
		}
	})
}
