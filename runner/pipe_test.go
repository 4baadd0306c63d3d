package runner

import (
	"net/http"
	"testing"
	"time"

	"github.com/svbench/svbench/base/pipenet"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/llm/llmtest"
)

// pipeListener is internal/pipenet's in-memory listener, so servers and
// fake endpoints can run inside a testing/synctest bubble.
type pipeListener = pipenet.Listener

func newPipeListener() *pipeListener { return pipenet.New() }

// newPipeClient is newClient for a test running in a synctest bubble (call
// it inside synctest.Test; create srv outside, so its idle loopback listener
// stays out of the bubble): srv's handler is served again on an in-memory
// listener in the bubble, so its latencies and hangs and the client's
// per-attempt timeout and backoff all run on the bubble's fake clock.
func newPipeClient(t *testing.T, srv *llmtest.Server, key string, timeout time.Duration) *llm.OpenAI {
	t.Helper()
	ln := newPipeListener()
	hs := &http.Server{Handler: srv.Config.Handler}
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = hs.Serve(ln)
	}()
	hc := &http.Client{Transport: &http.Transport{DialContext: ln.DialContext, MaxIdleConnsPerHost: 64}}
	t.Cleanup(func() {
		hc.CloseIdleConnections()
		_ = hs.Close()
		<-served
	})
	return newClientConfig(t, llm.Config{BaseURL: srv.BaseURL(), APIKey: key, Timeout: timeout, HTTPClient: hc})
}
