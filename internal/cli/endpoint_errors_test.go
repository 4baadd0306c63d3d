package cli

import (
	"net"
	"strings"
	"testing"

	"github.com/svbench/svbench/llm/llmtest"
)

// The endpoint's own words reach the terminal: once the run said only
// "stopped after 3 consecutive model errors" and the body ("Unsupported
// parameter: 'temperature'…") was nowhere; a closed port cost 13.6 s.
func TestEvalShowsTheEndpointsOwnWords(t *testing.T) {
	tests := []struct {
		name  string
		fault llmtest.Fault
		want  []string
	}{
		{"400 with an OpenAI error", llmtest.BadRequest, []string{"400", "Unsupported parameter: 'temperature'", "/chat/completions"}},
		{"HTML page instead of an API", llmtest.HTMLPage, []string{"text/html", "base-url"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.New(llmtest.Options{Schedule: func(int64) llmtest.Fault { return tc.fault }})
			defer srv.Close()
			t.Setenv("EP_KEY", "sk-ep")
			code, _, stderr := runCLI(t, "eval", "--env", "e1", "-m", "m", "-b", srv.BaseURL(), "-k", "EP_KEY", "-n", "5", "-c", "1",
				"--out", t.TempDir(), "--progress", "none", "--max-retries", "1")
			if code == 0 {
				t.Fatalf("exit 0 on a failing endpoint: %s", stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("terminal lacks %q:\n%s", w, stderr)
				}
			}
		})
	}
	// That it is not retried is llm's TestConnectionFailuresFailFast; here:
	// the terminal says what happened.
	t.Run("connection refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close() // nothing listens there now
		t.Setenv("EP_KEY", "sk-ep")
		code, _, stderr := runCLI(t, "eval", "--env", "e1", "-m", "m", "-b", "http://"+addr+"/v1", "-k", "EP_KEY", "-n", "5", "-c", "1",
			"--out", t.TempDir(), "--progress", "none")
		if code == 0 || !strings.Contains(strings.ToLower(stderr), "refused") {
			t.Fatalf("exit %d: %s", code, stderr)
		}
	})
}
