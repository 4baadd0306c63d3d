package cli

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/env/judgeutil"
	"github.com/svbench/svbench/llm"
)

// modelFlags are the flags that say which model answers and how.
type modelFlags struct {
	baseURL     string
	apiKeyEnv   string
	endpoints   string
	temperature float64
	topP        float64
	maxTokens   int
	seed        int64
	extra       string
	timeout     time.Duration
	maxRetries  int
	maxInFlight int
	headers     []string
	// wrap, when set, wraps every endpoint client (response cache, usage
	// accounting) with the role it plays.
	wrap func(c llm.Client, baseURL, role string) llm.Client
}

func (f *modelFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	f.registerEndpoint(fs, "", "--concurrency")
	fs.Float64VarP(&f.temperature, "temperature", "T", 0, "sampling temperature (sent only when given; 0 is sent as 0)")
	fs.Float64Var(&f.topP, "top-p", 0, "nucleus sampling top_p (sent only when given)")
	fs.IntVarP(&f.maxTokens, "max-tokens", "t", 0, "completion token limit (max_completion_tokens for reasoning models)")
	fs.Int64Var(&f.seed, "sampling-seed", 0, "seed sent to the endpoint (sent only when given)")
	fs.StringVarP(&f.extra, "sampling-args", "S", "", `extra JSON merged into the request body, e.g. '{"chat_template_kwargs": {"enable_thinking": false}}'`)
}

// registerEndpoint declares the flags that say where a model is served and
// how it is called, once for every command that calls one (eval, rewards
// agree, study); whose names the model in help ("judge's "), inFlight the
// default bound on concurrent requests.
func (f *modelFlags) registerEndpoint(fs *pflag.FlagSet, whose, inFlight string) {
	fs.StringVarP(&f.baseURL, "base-url", "b", "", whose+"OpenAI-compatible base URL (default $OPENAI_BASE_URL, else OpenAI)")
	fs.StringVarP(&f.apiKeyEnv, "api-key-env", "k", "OPENAI_API_KEY", "environment variable holding the "+whose+"API key")
	fs.StringVar(&f.endpoints, "endpoints", "", "YAML/JSON file mapping model aliases to {base_url, api_key_env, model}")
	fs.DurationVar(&f.timeout, "timeout", 120*time.Second, "per-request timeout")
	fs.IntVar(&f.maxRetries, "max-retries", 5, "retries per request on 429, 5xx, timeouts and resets (-1 disables)")
	fs.IntVar(&f.maxInFlight, "max-in-flight", 0, "bound on concurrent requests per endpoint (default: "+inFlight+")")
	fs.StringArrayVar(&f.headers, "header", nil, "extra HTTP header 'Name: value' sent with every request (repeatable; vf-eval's --header)")
}

// headerMap parses --header values.
func (f *modelFlags) headerMap() (map[string]string, error) {
	if len(f.headers) == 0 {
		return nil, nil
	}
	h := map[string]string{}
	for _, kv := range f.headers {
		k, v, ok := strings.Cut(kv, ":")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || strings.ContainsAny(k, " \t\r\n") || strings.ContainsAny(v, "\r\n") {
			return nil, usagef("--header %q: want 'Name: value'", kv)
		}
		h[k] = v
	}
	return h, nil
}

func (f *modelFlags) sampling(cmd *cobra.Command) (llm.Sampling, error) {
	var s llm.Sampling
	fs := cmd.Flags()
	if fs.Changed("temperature") {
		s.Temperature = new(f.temperature)
	}
	if fs.Changed("top-p") {
		s.TopP = new(f.topP)
	}
	if fs.Changed("sampling-seed") {
		s.Seed = new(f.seed)
	}
	s.MaxTokens = f.maxTokens
	if err := checkSampling(s); err != nil {
		return s, err
	}
	if f.extra != "" {
		if err := json.Unmarshal([]byte(f.extra), &s.Extra); err != nil {
			return s, usagef("-S/--sampling-args: not a JSON object: %v", err)
		}
	}
	return s, nil
}

// checkSampling refuses settings no OpenAI-compatible server accepts,
// whether they came from flags or an eval set's entry.
func checkSampling(s llm.Sampling) error {
	if t := s.Temperature; t != nil && (*t < 0 || *t > 2 || math.IsNaN(*t)) {
		return usagef("-T/--temperature %v: OpenAI-compatible servers accept 0 to 2", *t)
	}
	if p := s.TopP; p != nil && (*p <= 0 || *p > 1 || math.IsNaN(*p)) {
		return usagef("--top-p %v: want a value in (0, 1]", *p)
	}
	if s.MaxTokens < 0 {
		return usagef("-t/--max-tokens %d: want a positive limit, or 0 for the server's default", s.MaxTokens)
	}
	return nil
}

// resolvedModel is a ready client plus what metadata should say about it.
type resolvedModel struct {
	Name      string // as the user wrote it
	Effective string // as the endpoint knows it
	BaseURL   string
	Client    llm.Client
	// Warnings are said before the run starts (an unset key variable, a
	// provider prefix removed).
	Warnings []string
}

// resolveModel turns a --model value into a client: builtin:<policy>, an
// alias from the endpoints file, or a model on --base-url.
func (f *modelFlags) resolveModel(name string, e env.Environment, concurrency int) (*resolvedModel, error) {
	if policy, ok := strings.CutPrefix(name, "builtin:"); ok {
		pp, ok := e.(env.PolicyProvider)
		var p env.Policy
		if ok {
			p, ok = pp.Policy(policy)
		}
		if !ok {
			return nil, usagef("environment %s has no built-in policy %q (available: %s)", e.Info().ID, policy, strings.Join(e.Info().Policies, ", "))
		}
		return &resolvedModel{Name: name, Effective: name, Client: llm.Builtin{Policy: p}}, nil
	}
	m, err := f.endpointModel(name, concurrency, firstOr(e.Info().Policies, "heuristic"))
	if err == nil && f.wrap != nil {
		m.Client = f.wrap(m.Client, m.BaseURL, artifact.RolePolicy)
	}
	return m, err
}

// endpointModel builds a client for a model served over the OpenAI API:
// an alias from --endpoints, or a model on --base-url / $OPENAI_BASE_URL.
func (f *modelFlags) endpointModel(name string, concurrency int, builtinHint string) (*resolvedModel, error) {
	baseURL, keyEnv, effective := f.baseURL, f.apiKeyEnv, name
	if baseURL == "" {
		baseURL = os.Getenv("OPENAI_BASE_URL")
	}
	if f.endpoints != "" {
		eps, err := llm.LoadEndpoints(f.endpoints)
		if err != nil {
			return nil, err
		}
		if ep, ok := eps[name]; ok {
			baseURL = ep.BaseURL
			if ep.APIKeyEnv != "" {
				keyEnv = ep.APIKeyEnv
			}
			if ep.Model != "" {
				effective = ep.Model
			}
		}
	}
	key := os.Getenv(keyEnv)
	if key == "" && baseURL == "" {
		return nil, usagef("model %q needs an endpoint: set %s (and OPENAI_BASE_URL for non-OpenAI servers), pass --base-url, or use a built-in policy such as --model builtin:%s", name, keyEnv, builtinHint)
	}
	var warnings []string
	if key == "" && (keyEnv != "OPENAI_API_KEY" || !isLocalURL(baseURL)) {
		warnings = append(warnings, fmt.Sprintf("$%s is not set: requests to %s go without an Authorization header", keyEnv, orOpenAI(baseURL)))
	}
	if stripped, ok := llm.StripProviderPrefix(effective, baseURL); ok {
		warnings = append(warnings, fmt.Sprintf("model %q: %s knows it as %q (Inspect's provider/model form); sending %q", effective, orOpenAI(baseURL), stripped, stripped))
		effective = stripped
	}
	headers, err := f.headerMap()
	if err != nil {
		return nil, err
	}
	if err := checkConcurrency("--max-in-flight", f.maxInFlight); err != nil {
		return nil, err
	}
	inFlight := f.maxInFlight
	if inFlight <= 0 {
		inFlight = max(concurrency, 1)
	}
	c, err := llm.NewOpenAI(llm.Config{BaseURL: baseURL, APIKey: key, Timeout: f.timeout, MaxRetries: f.maxRetries, MaxInFlight: inFlight, Headers: headers})
	if err != nil {
		return nil, err
	}
	return &resolvedModel{Name: name, Effective: effective, BaseURL: orOpenAI(baseURL), Client: c, Warnings: warnings}, nil
}

func orOpenAI(baseURL string) string {
	if baseURL == "" {
		return "https://api.openai.com/v1"
	}
	return baseURL
}

func firstOr(xs []string, d string) string {
	if len(xs) > 0 {
		return xs[0]
	}
	return d
}

// newEnv builds an environment by any accepted name.
func newEnv(name string, params map[string]string, judge env.Model) (env.Environment, error) {
	return newEnvOpts(name, env.Options{Params: params, Models: judgeutil.Models(judge)})
}

func builtinClient(p env.Policy) llm.Client { return llm.Builtin{Policy: p} }
