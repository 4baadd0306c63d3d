package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/svbench/svbench/base/clip"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/runner"
)

// MaxRolloutTurns caps a request's max_turns whatever the caller asks.
const MaxRolloutTurns = 64

// RolloutRequest asks the server to play one whole episode against the
// caller's inference endpoint and score it.
type RolloutRequest struct {
	Env       string          `json:"env"`
	ExampleID json.RawMessage `json:"example_id,omitempty"`
	Example   json.RawMessage `json:"example,omitempty"`
	Rubric    string          `json:"rubric,omitempty"`
	// BaseURL is an OpenAI-compatible endpoint ("http://127.0.0.1:8000/v1");
	// it must be on the server's --rollout-allow list.
	BaseURL  string       `json:"base_url"`
	Model    string       `json:"model"`
	Sampling llm.Sampling `json:"sampling"`
	// APIKeyEnv names a server environment variable holding the endpoint's
	// key; it must be on the server's --rollout-key-env list. Empty: no key.
	APIKeyEnv string `json:"api_key_env,omitempty"`
	MaxTurns  int    `json:"max_turns,omitempty"`
}

// RolloutResponse carries the trajectory and its score.
type RolloutResponse struct {
	Env       string       `json:"env"`
	ExampleID string       `json:"example_id"`
	Rollout   *env.Rollout `json:"rollout"`
	Score     *ScoreResult `json:"score,omitempty"`
	// Error is set when the episode ended abnormally but still produced a
	// scored trajectory (an environment error mid-episode).
	Error *APIError `json:"error,omitempty"`
}

// rolloutFailure is the error body of a rollout that the model endpoint
// broke: the partial trajectory rides along so nothing is lost.
type rolloutFailure struct {
	ErrorBody
	Rollout *env.Rollout `json:"rollout,omitempty"`
}

func (s *Server) handleRollout(w http.ResponseWriter, r *http.Request) {
	var req RolloutRequest
	if status, aerr := decodeBody(r, &req); aerr != nil {
		writeError(w, r, status, aerr)
		return
	}
	st, aerr := s.lookupEnv(req.Env)
	if aerr != nil {
		writeError(w, r, http.StatusNotFound, aerr)
		return
	}
	if req.Model == "" {
		writeError(w, r, http.StatusBadRequest, apiErrorf(CodeBadRequest, `field "model" missing: name the model the endpoint serves`))
		return
	}
	if req.MaxTurns < 0 || req.MaxTurns > MaxRolloutTurns {
		writeError(w, r, http.StatusBadRequest, apiErrorf(CodeBadRequest, `field "max_turns" must be between 0 (environment default) and %d`, MaxRolloutTurns))
		return
	}
	base, aerr := s.allow.checkURL(req.BaseURL)
	if aerr != nil {
		status := http.StatusBadRequest
		if aerr.Code == CodeForbiddenTarget {
			status = http.StatusForbidden
		}
		writeError(w, r, status, aerr)
		return
	}
	apiKey := ""
	if req.APIKeyEnv != "" {
		if !slices.Contains(s.cfg.RolloutKeyEnvs, req.APIKeyEnv) {
			writeError(w, r, http.StatusForbidden, apiErrorf(CodeForbiddenTarget, "api_key_env %q is not on the server's --rollout-key-env list", req.APIKeyEnv))
			return
		}
		apiKey = os.Getenv(req.APIKeyEnv)
		if apiKey == "" {
			writeError(w, r, http.StatusBadRequest, apiErrorf(CodeBadRequest, "api_key_env %q is not set on the server", req.APIKeyEnv))
			return
		}
	}
	ex, aerr := s.resolveExample(st, req.ExampleID, req.Example, nil)
	if aerr != nil {
		writeError(w, r, http.StatusBadRequest, aerr)
		return
	}
	select {
	case s.rollSem <- struct{}{}:
		defer func() { <-s.rollSem }()
	default:
		w.Header().Set("Retry-After", "1")
		writeError(w, r, http.StatusTooManyRequests, apiErrorf(CodeBusy, "%d rollouts already running; retry later or raise --max-rollouts", s.cfg.MaxRollouts))
		return
	}
	mk := s.cfg.ModelClient
	if mk == nil {
		mk = openAIClient
	}
	client, err := mk(base, apiKey, s.modelHC)
	if err != nil {
		writeError(w, r, http.StatusBadRequest, apiErrorf(CodeBadRequest, "model client for %s: %v", base, err))
		return
	}

	start := time.Now()
	res := ScoreResult{env: st.id}
	defer func() {
		res.dur = time.Since(start)
		s.recordItems("/v1/rollout", []ScoreResult{res})
	}()
	ctx := r.Context()
	// The episode's own work (start, tool calls, simulated turns) and the
	// final scoring queue for the scoring workers like /v1/score's items;
	// the model calls between them hold none.
	ae := admittedEnv{Environment: st.env, adm: s.adm, lane: st.lane}
	ro, err := runner.RunEpisode(ctx, client, ae, ex, runner.EpisodeConfig{Model: req.Model, Sampling: req.Sampling, MaxTurns: req.MaxTurns})
	var me *runner.ModelError
	switch {
	case ctx.Err() != nil:
		status, aerr := contextError(ctx)
		res.Error = aerr
		writeJSON(w, status, rolloutFailure{ErrorBody{*aerr, requestID(ctx)}, ro})
		return
	case errors.As(err, &me):
		res.Error = apiErrorf(CodeModelError, "model endpoint %s: %v", base, me.Err)
		writeJSON(w, http.StatusBadGateway, rolloutFailure{ErrorBody{*res.Error, requestID(ctx)}, ro})
		return
	}
	resp := RolloutResponse{Env: st.id, ExampleID: ex.ID, Rollout: ro}
	if err != nil {
		resp.Error = apiErrorf(CodeScoreFailed, "episode: %v", err)
	}
	var sc env.Score
	if qerr := s.adm.run(ctx, st.lane, func() { sc, aerr = s.safeScore(ctx, st, ex, ro, req.Rubric) }); qerr != nil {
		_, aerr = contextError(ctx)
	}
	if aerr != nil {
		res.Error = aerr
		if resp.Error == nil {
			resp.Error = aerr
		}
	} else {
		res.Reward, res.Components, res.Parsed, res.Rubric = sc.Total, sc.Components, sc.Parsed, sc.Rubric
		out := res
		resp.Score = &out
	}
	writeJSON(w, http.StatusOK, resp)
}

func openAIClient(baseURL, apiKey string, hc *http.Client) (llm.Client, error) {
	// The caller's request timeout bounds the episode; two retries absorb a
	// restarting inference server without stalling a training step.
	return llm.NewOpenAI(llm.Config{BaseURL: baseURL, APIKey: apiKey, HTTPClient: hc, MaxRetries: 2, MaxInFlight: 8})
}

// allowList is the set of model endpoints rollouts may reach. The server
// must not become an open proxy into the network it runs in, so the check is
// made twice: on the URL, and again in the dialer on the address actually
// dialled (redirects are refused and proxies ignored).
type allowList struct {
	loopbackOnly bool
	exact        map[string]bool // "host:port"
	anyPort      map[string]bool // "host"
}

func parseAllowList(entries []string) (*allowList, error) {
	a := &allowList{exact: map[string]bool{}, anyPort: map[string]bool{}}
	for _, e := range entries {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if strings.Contains(e, "/") {
			return nil, fmt.Errorf("--rollout-allow entry %q: give host:port or host, not a URL", e)
		}
		if h, p, err := net.SplitHostPort(e); err == nil {
			if h == "" || p == "" {
				return nil, fmt.Errorf("--rollout-allow entry %q: host and port must both be set", e)
			}
			a.exact[net.JoinHostPort(h, p)] = true
			continue
		}
		a.anyPort[strings.Trim(e, "[]")] = true
	}
	a.loopbackOnly = len(a.exact) == 0 && len(a.anyPort) == 0
	return a, nil
}

func (a *allowList) allowedHostPort(host, port string) bool {
	host = strings.ToLower(host)
	if a.loopbackOnly {
		if host == "localhost" {
			return true
		}
		ip := net.ParseIP(host)
		return ip != nil && ip.IsLoopback()
	}
	return a.anyPort[host] || a.exact[net.JoinHostPort(host, port)]
}

// checkURL validates a rollout base_url and returns it normalised.
func (a *allowList) checkURL(raw string) (string, *APIError) {
	if raw == "" {
		return "", apiErrorf(CodeBadRequest, `field "base_url" missing: give the trainer's OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1`)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", apiErrorf(CodeBadRequest, `field "base_url" must be an http(s) URL, got %q`, clip.Bytes(raw, 100, clip.Ellipsis))
	}
	if u.User != nil {
		return "", apiErrorf(CodeBadRequest, `field "base_url" must not carry credentials; use api_key_env`)
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if !a.allowedHostPort(u.Hostname(), port) {
		what := "loopback addresses only (start the server with --rollout-allow host:port)"
		if !a.loopbackOnly {
			what = "the --rollout-allow list"
		}
		return "", apiErrorf(CodeForbiddenTarget, "base_url host %s is not allowed: rollouts may reach %s", net.JoinHostPort(u.Hostname(), port), what)
	}
	u.RawQuery, u.Fragment = "", ""
	return u.String(), nil
}

func (a *allowList) httpClient() *http.Client {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			if !a.allowedHostPort(host, port) {
				return nil, fmt.Errorf("dial %s: not on the rollout allow-list", addr)
			}
			if a.loopbackOnly {
				// "localhost" must really be loopback: resolve and dial the
				// address checked, so DNS cannot point it elsewhere.
				ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
				if err != nil {
					return nil, err
				}
				for _, ip := range ips {
					if ip.IP.IsLoopback() {
						return dialer.DialContext(ctx, network, net.JoinHostPort(ip.IP.String(), port))
					}
				}
				return nil, fmt.Errorf("dial %s: resolves to no loopback address", addr)
			}
			return dialer.DialContext(ctx, network, addr)
		},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          256,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 5 * time.Minute,
	}
	return &http.Client{
		Transport: tr,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return errors.New("redirects are not followed for rollouts")
		},
	}
}
