// Package server is svbench's HTTP environment and reward service for RL
// trainers: it lists environments, hands out prompts, scores completions in
// batches (svbench's own API and OpenRLHF's remote reward protocol) and runs
// whole tool-using episodes against a trainer's inference endpoint. Scoring
// goes through the same env.Environment code as `svbench eval`, so a reward
// means the same thing in training and in evaluation. See README.md for the
// wire protocol.
package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
)

// Defaults for zero Config fields.
const (
	DefaultMaxBody            = 8 << 20
	DefaultMaxBatch           = 1024
	DefaultMaxCompletionBytes = 1 << 20
	DefaultMaxMessages        = 256
	DefaultTimeout            = 30 * time.Second
	DefaultRolloutTimeout     = 10 * time.Minute
	DefaultReadHeaderTimeout  = 5 * time.Second
	DefaultDrainTimeout       = 30 * time.Second
	DefaultMaxRollouts        = 64
	DefaultMaxExamples        = 1000
)

// ModelClientFunc builds the client a rollout talks to. The server supplies
// an HTTP client whose dialer only reaches allow-listed addresses; an
// implementation must send every request through it.
type ModelClientFunc func(baseURL, apiKey string, hc *http.Client) (llm.Client, error)

// Config configures a Server. Zero values take the defaults above.
type Config struct {
	// Registry supplies the environments; nil means env.Default.
	Registry *env.Registry
	// Envs restricts the served environments (any accepted name form);
	// empty serves every registered one.
	Envs []string
	// Datasets maps an environment name to a JSONL file served instead of
	// its embedded mini set.
	Datasets map[string]string
	// EnvOptions is passed to every environment constructor.
	EnvOptions env.Options
	// EnvParams holds parameters for one environment only (keyed by any
	// name form), added to EnvOptions.Params for its constructor: every
	// constructor refuses parameters it does not declare, so an E3-only
	// setting in EnvOptions would stop every other environment from
	// starting.
	EnvParams map[string]map[string]string
	// Split is the split examples and OpenEnv resets hand out when a
	// request names none: train by default, so trainers are never served
	// the evaluation set by accident. Every split the environment ships
	// is loaded either way, so test rows can still be scored by id.
	Split string
	// DefaultEnv is the environment a bare /get_reward label refers to;
	// empty means the only served environment, if there is exactly one.
	DefaultEnv string
	// OpenEnvDefaultEnv is the environment an OpenEnv reset without "env"
	// opens (OpenEnv's clients send only seed and episode_id): empty means
	// DefaultEnv, else the first served environment; "none" makes such a
	// reset an error.
	OpenEnvDefaultEnv string

	// Token, when set, must arrive as "Authorization: Bearer <token>" on
	// every endpoint except /healthz and /readyz.
	Token string

	MaxBody            int64
	MaxBatch           int
	MaxCompletionBytes int
	MaxMessages        int
	MaxExamples        int
	Timeout            time.Duration
	RolloutTimeout     time.Duration
	ReadHeaderTimeout  time.Duration
	DrainTimeout       time.Duration
	// Workers bounds concurrent scoring across all requests; 0 = GOMAXPROCS.
	// Environments share them fairly (see admission): heavy ones
	// (env.CostHeavy) together hold at most three quarters of them when
	// light ones are served too.
	Workers int
	// EnvWorkers caps the workers one environment's items may hold at once
	// (any name form), overriding the share its cost class gives it; at
	// most Workers.
	EnvWorkers map[string]int
	// MaxRollouts bounds concurrent /v1/rollout episodes; more get 429.
	MaxRollouts int
	// MaxSessions bounds open sessions (/v1/sessions); more get 429.
	// SessionIdle closes a session after that long without a request,
	// SessionTTL at that age whatever happens.
	MaxSessions int
	// MaxSessionBytes bounds what live sessions hold together (inline
	// examples and transcripts, estimated); 0 = DefaultMaxSessionBytes.
	MaxSessionBytes int64
	SessionIdle     time.Duration
	SessionTTL      time.Duration

	// RolloutAllow lists the model endpoints /v1/rollout may reach, as
	// "host:port" or "host" (any port). Empty allows loopback only.
	RolloutAllow []string
	// RolloutKeyEnvs lists the environment variables a rollout request may
	// name in api_key_env; any other name is refused so a caller cannot have
	// arbitrary server secrets sent to an endpoint.
	RolloutKeyEnvs []string
	// ModelClient builds rollout model clients; nil uses llm.NewOpenAI.
	ModelClient ModelClientFunc

	Logger *slog.Logger
}

func (c *Config) setDefaults() {
	if c.Registry == nil {
		c.Registry = env.Default
	}
	def := func(p *int, v int) {
		if *p <= 0 {
			*p = v
		}
	}
	defd := func(p *time.Duration, v time.Duration) {
		if *p <= 0 {
			*p = v
		}
	}
	if c.MaxBody <= 0 {
		c.MaxBody = DefaultMaxBody
	}
	def(&c.MaxBatch, DefaultMaxBatch)
	def(&c.MaxCompletionBytes, DefaultMaxCompletionBytes)
	def(&c.MaxMessages, DefaultMaxMessages)
	def(&c.MaxExamples, DefaultMaxExamples)
	if c.Split == "" {
		c.Split = env.SplitTrain
	}
	def(&c.Workers, runtime.GOMAXPROCS(0))
	def(&c.MaxRollouts, DefaultMaxRollouts)
	def(&c.MaxSessions, DefaultMaxSessions)
	defd(&c.SessionIdle, DefaultSessionIdle)
	defd(&c.SessionTTL, DefaultSessionTTL)
	defd(&c.Timeout, DefaultTimeout)
	defd(&c.RolloutTimeout, DefaultRolloutTimeout)
	defd(&c.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	defd(&c.DrainTimeout, DefaultDrainTimeout)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Server serves environments over HTTP. Create it with New.
type Server struct {
	cfg     Config
	log     *slog.Logger
	envs    map[string]*envState
	order   []string
	def     string
	tokenH  [32]byte
	metrics *metrics
	adm     *admission
	rollSem chan struct{}
	// openEnvDef is the environment an OpenEnv reset without "env" opens
	// ("" = none).
	openEnvDef string
	// sessions are the episodes trainers drive turn by turn.
	sessions *sessions
	// produced are the tool outputs NeMo Gym's tool routes handed out.
	produced *producedOutputs
	sockets  atomic.Int64 // OpenEnv WebSockets open
	allow    *allowList
	modelHC  *http.Client
	handler  http.Handler

	loadOnce sync.Once
	loadErr  error
	loadMsg  atomic.Pointer[string] // set when loading failed, for /readyz
	ready    atomic.Bool
}

// New builds a server: it constructs every served environment (a bad name is
// an error here, not at the first request) but loads no dataset yet; Load or
// Serve does that.
func New(cfg Config) (*Server, error) {
	cfg.setDefaults()
	s := &Server{
		cfg:      cfg,
		log:      cfg.Logger,
		envs:     map[string]*envState{},
		metrics:  newMetrics(),
		rollSem:  make(chan struct{}, cfg.MaxRollouts),
		produced: newProducedOutputs(),
		sessions: newSessions(cfg.MaxSessions, cfg.MaxSessionBytes, cfg.SessionIdle, cfg.SessionTTL),
	}
	names := cfg.Envs
	if len(names) == 0 {
		names = cfg.Registry.IDs()
	}
	if len(names) == 0 {
		return nil, errors.New("no environments to serve: the registry is empty")
	}
	envParams := map[string]map[string]string{}
	for name, p := range cfg.EnvParams {
		id, err := cfg.Registry.Resolve(name)
		if err != nil {
			return nil, fmt.Errorf("parameters for %s: %w", name, err)
		}
		if envParams[id] == nil {
			envParams[id] = map[string]string{}
		}
		maps.Copy(envParams[id], p)
	}
	for _, n := range names {
		id, err := cfg.Registry.Resolve(n)
		if err != nil {
			return nil, err
		}
		if _, dup := s.envs[id]; dup {
			continue
		}
		opts := cfg.EnvOptions
		if own := envParams[id]; len(own) > 0 {
			opts.Params = maps.Clone(cfg.EnvOptions.Params)
			if opts.Params == nil {
				opts.Params = map[string]string{}
			}
			maps.Copy(opts.Params, own)
		}
		e, err := cfg.Registry.New(id, opts)
		if err != nil {
			return nil, err
		}
		s.envs[id] = newEnvState(id, e)
		s.order = append(s.order, id)
	}
	for id := range envParams {
		if _, ok := s.envs[id]; !ok {
			return nil, fmt.Errorf("parameters for %s: environment %s is not served (add it to --envs)", id, id)
		}
	}
	for name, path := range cfg.Datasets {
		id, err := cfg.Registry.Resolve(name)
		if err != nil {
			return nil, fmt.Errorf("--dataset %s=%s: %w", name, path, err)
		}
		st, ok := s.envs[id]
		if !ok {
			return nil, fmt.Errorf("--dataset %s=%s: environment %s is not served (add it to --envs)", name, path, id)
		}
		st.datasetPath = path
	}
	switch {
	case cfg.DefaultEnv != "":
		id, err := cfg.Registry.Resolve(cfg.DefaultEnv)
		if err != nil {
			return nil, fmt.Errorf("default environment: %w", err)
		}
		if _, ok := s.envs[id]; !ok {
			return nil, fmt.Errorf("default environment %s is not served", id)
		}
		s.def = id
	case len(s.order) == 1:
		s.def = s.order[0]
	}
	switch d := cfg.OpenEnvDefaultEnv; {
	case d == "none":
		// Every reset names its environment: a mixed pool of trainers
		// should not land on one they did not ask for.
	case d != "":
		id, err := cfg.Registry.Resolve(d)
		if err != nil {
			return nil, fmt.Errorf("OpenEnv default environment: %w", err)
		}
		if _, ok := s.envs[id]; !ok {
			return nil, fmt.Errorf("OpenEnv default environment %s is not served (served: %v)", id, s.order)
		}
		s.openEnvDef = id
	case s.def != "":
		s.openEnvDef = s.def
	case len(s.order) > 0:
		s.openEnvDef = s.order[0]
	}
	limits, err := resolveEnvWorkers(cfg.Registry, s.envs, cfg.EnvWorkers)
	if err != nil {
		return nil, err
	}
	specs := make([]laneSpec, 0, len(s.order))
	for _, id := range s.order {
		specs = append(specs, laneSpec{env: id, cost: env.CostOf(s.envs[id].env), limit: limits[id]})
	}
	s.adm = newAdmission(cfg.Workers, specs)
	for i, id := range s.order {
		s.envs[id].lane = s.adm.lanes[i]
	}
	if cfg.Token != "" {
		s.tokenH = sha256.Sum256([]byte(cfg.Token))
	}
	allow, err := parseAllowList(cfg.RolloutAllow)
	if err != nil {
		return nil, err
	}
	s.allow = allow
	s.modelHC = allow.httpClient()
	s.handler = s.routes()
	return s, nil
}

// Handler returns the server's root handler (for tests and embedding).
func (s *Server) Handler() http.Handler { return s.handler }

// Ready reports whether every dataset has loaded.
func (s *Server) Ready() bool { return s.ready.Load() }

// Load reads every served environment's dataset once, concurrently. Later
// calls return the first call's result.
func (s *Server) Load(ctx context.Context) error {
	s.loadOnce.Do(func() {
		errs := make([]error, len(s.order))
		var wg sync.WaitGroup
		for i, id := range s.order {
			wg.Go(func() {
				start := time.Now()
				if err := s.envs[id].load(ctx, s.cfg.Split); err != nil {
					errs[i] = err
					return
				}
				st := s.envs[id]
				sizes := make([]string, 0, len(st.splits))
				for _, name := range slices.Sorted(maps.Keys(st.splits)) {
					sizes = append(sizes, fmt.Sprintf("%s=%d", name, len(st.splits[name])))
				}
				s.log.Info("dataset loaded", "env", id, "dataset", st.ds.Info.ID, "revision", st.ds.Info.Revision,
					"rows", len(st.ds.Examples), "splits", strings.Join(sizes, " "), "default_split", cmp.Or(st.split, "all"),
					"took", time.Since(start).Round(time.Millisecond))
				switch {
				case st.split == env.SplitTest:
					s.log.Warn("serving the evaluation split by default: a policy trained on it cannot be evaluated on it", "env", id)
				case st.split == "" && slices.Equal(slices.Sorted(maps.Keys(st.splits)), []string{env.SplitTest}):
					s.log.Warn("no "+s.cfg.Split+" split: requests without a split get the evaluation rows (split test); pass --dataset with rows to train on", "env", id)
				case st.split == "":
					s.log.Warn("no "+s.cfg.Split+" split: requests without a split get every row", "env", id, "splits", strings.Join(sizes, " "))
				}
			})
		}
		wg.Wait()
		s.loadErr = errors.Join(errs...)
		if s.loadErr != nil {
			msg := s.loadErr.Error()
			s.loadMsg.Store(&msg)
		} else {
			s.ready.Store(true)
			s.metrics.ready.Store(true)
		}
	})
	return s.loadErr
}

// Serve accepts connections on ln until ctx is cancelled, loading datasets
// in the background (/readyz turns 200 when done). On cancellation it stops
// accepting, lets in-flight requests finish for up to DrainTimeout, then
// cancels what is left and closes. A dataset that fails to load stops the
// server with that error.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	reqCtx, cancelReqs := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelReqs()
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: s.cfg.ReadHeaderTimeout,
		// A body must arrive within the request timeout; rollouts have small
		// bodies, so the score timeout bounds both.
		ReadTimeout:    s.cfg.Timeout + s.cfg.ReadHeaderTimeout,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		BaseContext:    func(net.Listener) context.Context { return reqCtx },
		ErrorLog:       slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- hs.Serve(ln) }()
	loadErr := make(chan error, 1)
	go func() { loadErr <- s.Load(reqCtx) }()
	sessCtx, stopSessions := context.WithCancel(context.WithoutCancel(ctx))
	janitorDone := make(chan struct{})
	go func() { s.sessions.janitor(sessCtx); close(janitorDone) }()
	// After the drain: every session still open releases its episode.
	defer func() { stopSessions(); <-janitorDone }()
	s.log.Info("serving", "addr", ln.Addr().String(), "envs", strings.Join(s.order, ","), "auth", s.cfg.Token != "",
		"workers", s.cfg.Workers, "env_workers", s.adm.describe())

	var first error
	select {
	case <-ctx.Done():
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case err := <-loadErr:
		if err != nil {
			first = fmt.Errorf("load datasets: %w", err)
			break
		}
		select {
		case <-ctx.Done():
		case err := <-serveErr:
			return fmt.Errorf("serve: %w", err)
		}
	}
	s.log.Info("shutting down: draining in-flight requests", "timeout", s.cfg.DrainTimeout)
	drainCtx, cancel := context.WithTimeout(context.Background(), s.cfg.DrainTimeout)
	defer cancel()
	if err := hs.Shutdown(drainCtx); err != nil {
		// Drain time is over: cancel the stragglers so their handlers answer
		// 503 and return, then drop the connections.
		cancelReqs()
		time.Sleep(100 * time.Millisecond)
		_ = hs.Close()
		s.log.Warn("drain timeout: remaining requests cancelled", "err", err)
	}
	<-serveErr
	return first
}

// ListenAndServe listens on addr and calls Serve.
func (s *Server) ListenAndServe(ctx context.Context, addr string) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	return s.Serve(ctx, ln)
}
