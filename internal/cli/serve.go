package cli

import (
	"fmt"
	"log/slog"
	"maps"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/env"
	_ "github.com/svbench/svbench/internal/envs" // registers every environment
	"github.com/svbench/svbench/server"
)

func newServeCmd() *cobra.Command {
	var (
		addr, tokenEnv, defaultEnv, maxBody, maxCompletion, maxSessionBytes, logFormat, logLevel, split string
		envs, datasets, allow, keyEnvs, params, envWorkers                                              []string
		flagParams                                                                                      envParamFlags
		maxBatch, workers, maxRollouts, maxSessions                                                     int
		timeout, rolloutTimeout, drainTimeout, headerTimeout, sessionIdle, sessionTTL                   time.Duration
	)
	var openEnvDefaultEnv string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve environments, prompts, rewards and rollouts over HTTP to RL trainers",
		Long: `Serve every registered environment (or --envs) over HTTP, to RL trainers.

Trainers are served the train split unless a request names another (--split sets
the default): every environment ships train, dev and test splits, test being the
evaluation set svbench eval scores. All splits are loaded, so a trainer can score
its policy on test rows by id; handing test rows out is logged as a warning.

` + serveRouteHelp() + `
The protocol is documented in server/README.md. The server stops on SIGTERM or
Ctrl-C after draining in-flight requests.`,
		Example: `  svbench serve --addr 127.0.0.1:8080
  SVBENCH_TOKEN=... svbench serve --addr 0.0.0.0:8080 --token-env SVBENCH_TOKEN --envs e1,e2
  svbench serve --dataset e1=data/e1-train.jsonl --rollout-allow vllm.internal:8000`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			cfg := server.Config{
				Registry: env.Default, Envs: serveSplitList(envs), DefaultEnv: defaultEnv, OpenEnvDefaultEnv: openEnvDefaultEnv,
				MaxBatch: maxBatch, Workers: workers, MaxRollouts: maxRollouts,
				MaxSessions: maxSessions, SessionIdle: sessionIdle, SessionTTL: sessionTTL,
				Timeout: timeout, RolloutTimeout: rolloutTimeout, DrainTimeout: drainTimeout, ReadHeaderTimeout: headerTimeout,
				RolloutAllow: serveSplitList(allow), RolloutKeyEnvs: serveSplitList(keyEnvs), Split: split,
			}
			if err := env.CheckSplit(split); err != nil {
				return usageError(err)
			}
			var err error
			if cfg.MaxBody, err = serveParseSize("--max-body", maxBody); err != nil {
				return err
			}
			if cfg.MaxSessionBytes, err = serveParseSize("--max-session-bytes", maxSessionBytes); err != nil {
				return err
			}
			mc, err := serveParseSize("--max-completion", maxCompletion)
			if err != nil {
				return err
			}
			cfg.MaxCompletionBytes = int(mc)
			for name, v := range map[string]int{"--max-batch": maxBatch, "--workers": workers, "--max-rollouts": maxRollouts, "--max-sessions": maxSessions} {
				if v < 0 {
					return usagef("%s must not be negative", name)
				}
			}
			if err := checkConcurrency("--workers", workers); err != nil {
				return err
			}
			for name, v := range map[string]time.Duration{"--timeout": timeout, "--rollout-timeout": rolloutTimeout, "--drain-timeout": drainTimeout, "--read-header-timeout": headerTimeout, "--session-idle": sessionIdle, "--session-ttl": sessionTTL} {
				if v <= 0 {
					return usagef("%s must be positive, got %s", name, v)
				}
			}
			if len(datasets) > 0 {
				cfg.Datasets = map[string]string{}
				for _, d := range datasets {
					k, v, ok := strings.Cut(d, "=")
					if !ok || k == "" || v == "" {
						return usagef("--dataset %q: want env=path, e.g. e1=data/e1.jsonl", d)
					}
					cfg.Datasets[k] = v
				}
			}
			if len(envWorkers) > 0 {
				cfg.EnvWorkers = map[string]int{}
				for _, ew := range envWorkers {
					k, v, ok := strings.Cut(ew, "=")
					n, err := strconv.Atoi(v)
					if !ok || k == "" || err != nil || n < 1 || n > maxConcurrency {
						return usagef("--env-workers %q: want env=N with 1 ≤ N ≤ %d, e.g. e3=2", ew, maxConcurrency)
					}
					cfg.EnvWorkers[k] = n
				}
			}
			if cfg.EnvOptions.Params, cfg.EnvParams, err = serveParams(params); err != nil {
				return err
			}
			if cfg.EnvParams, err = servedParamFlags(&flagParams, envs, cfg.EnvOptions.Params, cfg.EnvParams); err != nil {
				return err
			}
			if tokenEnv != "" {
				cfg.Token = os.Getenv(tokenEnv)
				if cfg.Token == "" {
					return usagef("--token-env %s: the variable is empty or unset", tokenEnv)
				}
			}
			for _, k := range cfg.RolloutKeyEnvs {
				if k == tokenEnv {
					return usagef("--rollout-key-env must not include the server's own token variable %s", k)
				}
			}
			logger, err := serveLogger(cmd, logFormat, logLevel)
			if err != nil {
				return err
			}
			cfg.Logger = logger
			if host, _, err := net.SplitHostPort(addr); err == nil && cfg.Token == "" {
				if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
					logger.Warn("serving beyond loopback without a token: anyone who can reach " + addr + " can use this server; set --token-env")
				}
			}
			srv, err := server.New(cfg)
			if err != nil {
				return usageError(err)
			}
			return srv.ListenAndServe(cmd.Context(), addr)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&addr, "addr", "127.0.0.1:8080", "listen address host:port")
	fs.StringVar(&tokenEnv, "token-env", "", "environment variable holding the bearer token clients must send (no token: no auth)")
	fs.StringSliceVar(&envs, "envs", nil, "environments to serve, comma-separated (default: all), e.g. e1,e2")
	fs.StringArrayVar(&datasets, "dataset", nil, "serve another dataset file for an environment: env=path (repeatable)")
	fs.StringVar(&split, "split", env.SplitTrain, "split handed out when a request names none: train, dev or test (the evaluation set)")
	fs.StringVar(&defaultEnv, "default-env", "", "environment a bare /get_reward label refers to (default: the only served one)")
	fs.StringVar(&openEnvDefaultEnv, "openenv-default-env", "", "environment an OpenEnv reset without \"env\" opens (default: --default-env, else the first served; none: reset must name one)")
	fs.StringVar(&maxBody, "max-body", "8MiB", "largest request body (B, KiB, MiB, GiB, KB, MB, GB)")
	fs.StringVar(&maxCompletion, "max-completion", "1MiB", "largest completion text per item")
	fs.IntVar(&maxBatch, "max-batch", server.DefaultMaxBatch, "most items per /v1/score or /get_reward request")
	fs.DurationVar(&timeout, "timeout", server.DefaultTimeout, "per-request time limit (scoring, listing)")
	fs.DurationVar(&rolloutTimeout, "rollout-timeout", server.DefaultRolloutTimeout, "per-request time limit for /v1/rollout")
	fs.DurationVar(&drainTimeout, "drain-timeout", server.DefaultDrainTimeout, "how long shutdown waits for in-flight requests")
	fs.DurationVar(&headerTimeout, "read-header-timeout", server.DefaultReadHeaderTimeout, "time a client has to send its request headers")
	fs.IntVar(&workers, "workers", 0, "concurrent scoring workers across all requests (default: GOMAXPROCS)")
	fs.StringArrayVar(&envWorkers, "env-workers", nil, "most items of one environment scored at once: env=N (repeatable; default: its cost class's share of --workers)")
	fs.IntVar(&maxRollouts, "max-rollouts", server.DefaultMaxRollouts, "concurrent /v1/rollout episodes; more get 429")
	fs.IntVar(&maxSessions, "max-sessions", server.DefaultMaxSessions, "open /v1/sessions at once; more get 429")
	fs.StringVar(&maxSessionBytes, "max-session-bytes", "1GiB", "what open sessions may hold together (inline examples, transcripts); more get 429")
	fs.DurationVar(&sessionIdle, "session-idle", server.DefaultSessionIdle, "close a session after this long without a request")
	fs.DurationVar(&sessionTTL, "session-ttl", server.DefaultSessionTTL, "close a session at this age whatever happens")
	fs.StringSliceVar(&allow, "rollout-allow", nil, "model endpoints /v1/rollout may reach, host:port or host (default: loopback only)")
	fs.StringSliceVar(&keyEnvs, "rollout-key-env", nil, "environment variables a rollout request may name as api_key_env")
	fs.StringArrayVar(&params, "param", nil, "environment parameter: env:key=value for one environment (e.g. e3:test_timeout=60), key=value for every served one (repeatable)")
	flagParams.register(fs, false)
	fs.StringVar(&logFormat, "log-format", "text", "log format: text or json")
	fs.StringVar(&logLevel, "log-level", "info", "log level: debug, info, warn, error")
	return cmd
}

// serveParams splits --param values into those for every served
// environment (key=value) and those for one (env:key=value). Each
// environment refuses parameters it does not declare, so a setting only E3
// knows must name E3 when other environments are served too.
func serveParams(kvs []string) (all map[string]string, own map[string]map[string]string, err error) {
	var shared []string
	for _, kv := range kvs {
		k, v, _ := strings.Cut(kv, "=")
		name, key, scoped := strings.Cut(k, ":")
		if !scoped {
			shared = append(shared, kv)
			continue
		}
		if name == "" || key == "" || !strings.Contains(kv, "=") {
			return nil, nil, usagef("--param %q: want env:key=value (e.g. e3:test_timeout=60) or key=value", kv)
		}
		if own == nil {
			own = map[string]map[string]string{}
		}
		if own[name] == nil {
			own[name] = map[string]string{}
		}
		own[name][key] = v
	}
	all, err = parseParams(shared)
	return all, own, err
}

// servedParamFlags applies environment flags (--policy-pack) to the
// environments being served (all when envs is empty), keyed by canonical
// id as the server merges them.
func servedParamFlags(p *envParamFlags, envs []string, shared map[string]string, own map[string]map[string]string) (map[string]map[string]string, error) {
	ids := env.Default.IDs()
	if names := serveSplitList(envs); len(names) > 0 {
		ids = nil
		for _, n := range names {
			id, err := env.Default.Resolve(n)
			if err != nil {
				return nil, usageError(err)
			}
			ids = append(ids, id)
		}
	}
	byID := map[string]map[string]string{}
	for name, kv := range own {
		id, err := env.Default.Resolve(name)
		if err != nil {
			return nil, usagef("--param %s:…: %v", name, err)
		}
		if byID[id] == nil {
			byID[id] = map[string]string{}
		}
		maps.Copy(byID[id], kv)
	}
	return p.applyServed(ids, shared, byID)
}

func serveSplitList(xs []string) []string {
	var out []string
	for _, x := range xs {
		for _, p := range strings.Split(x, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	return out
}

func serveLogger(cmd *cobra.Command, format, level string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, usagef("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch format {
	case "text":
		return slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(cmd.ErrOrStderr(), opts)), nil
	}
	return nil, usagef("--log-format %q: want text or json", format)
}

// serveParseSize reads "8MiB", "512KB", "1048576".
func serveParseSize(flag, s string) (int64, error) {
	t := strings.TrimSpace(s)
	units := []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}}
	mult := int64(1)
	for _, u := range units {
		if strings.HasSuffix(strings.ToLower(t), strings.ToLower(u.suffix)) {
			t, mult = strings.TrimSpace(t[:len(t)-len(u.suffix)]), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > (1<<40)/mult {
		return 0, usagef("%s %q: want a positive size such as 8MiB, 512KB or 1048576", flag, s)
	}
	return n * mult, nil
}

// serveRouteHelp lists the server's routes by protocol, from the table the
// server routes by (server.Routes), so help cannot miss one.
func serveRouteHelp() string {
	var b strings.Builder
	last := ""
	for _, r := range server.Routes() {
		if r.Protocol != last {
			fmt.Fprintf(&b, "%s:\n", r.Protocol)
			last = r.Protocol
		}
		note := r.Doc
		if r.Public {
			note += " (no token)"
		}
		fmt.Fprintf(&b, "  %-10s %-34s %s\n", strings.Join(r.Methods, "|"), r.Path, note)
	}
	return b.String()
}
