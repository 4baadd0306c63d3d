package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/svbench/svbench/env"
)

// Researchers arrive with habits from Inspect (`inspect eval`) and
// verifiers (`vf-eval`). Where their flag means what svbench's does it is
// accepted under its own name; where it means something else the error
// says what to type.

// evalFlagAliases are other tools' names for eval's flags.
var evalFlagAliases = map[string]string{
	"limit":                "num-examples", // Inspect
	"epochs":               "rollouts",     // Inspect
	"max-connections":      "concurrency",  // Inspect
	"model-base-url":       "base-url",     // Inspect
	"rollouts-per-example": "rollouts",     // vf-eval
	"max-concurrent":       "concurrency",  // vf-eval
	"api-base-url":         "base-url",     // vf-eval
	"api-key-var":          "api-key-env",  // vf-eval
	"log-dir":              "out",          // Inspect: where runs are written
	"max-samples":          "concurrency",  // Inspect: samples in flight
}

// aliasNormalizer makes pflag parse an alias as the flag it stands for, so
// everything downstream (Changed, --resume's comparison) sees one name.
func aliasNormalizer(aliases map[string]string) func(*pflag.FlagSet, string) pflag.NormalizedName {
	return func(_ *pflag.FlagSet, name string) pflag.NormalizedName {
		if to, ok := aliases[name]; ok {
			return pflag.NormalizedName(to)
		}
		return pflag.NormalizedName(name)
	}
}

// aliasHelp is the paragraph eval's help adds for the aliases.
func aliasHelp(aliases map[string]string) string {
	var b strings.Builder
	b.WriteString("\nFlags under other tools' names (Inspect, vf-eval):\n")
	for _, k := range slices.Sorted(maps.Keys(aliases)) {
		fmt.Fprintf(&b, "  --%-22s = --%s\n", k, aliases[k])
	}
	b.WriteString("  -s/--save-results        accepted; svbench always saves every rollout\n")
	b.WriteString("  -v/--verbose             log requests and retries (debug level)\n")
	b.WriteString("  --header 'Name: value'   extra HTTP header on every request (repeatable)\n")
	b.WriteString("  -M base_url=URL          Inspect's model arg: = -b URL (other model args are the server's settings)\n")
	b.WriteString("  --reasoning-effort E     sent as the request's reasoning_effort (= -S '{\"reasoning_effort\": \"E\"}')\n")
	b.WriteString("  Inspect's -T key=value (task arguments) is --param key=value here; svbench's -T is the temperature.\n")
	return b.String()
}

var (
	unknownFlag    = regexp.MustCompile(`^unknown flag: --([^\s=]+)`)
	temperatureArg = regexp.MustCompile(`invalid argument "([^"]*=[^"]*)" for "-T, --temperature"`)
)

// explainFlagError turns pflag's errors into ones that say what to type.
func explainFlagError(cmd *cobra.Command, err error) error {
	msg := err.Error()
	if m := temperatureArg.FindStringSubmatch(msg); m != nil {
		k, v, _ := strings.Cut(m[1], "=")
		// A sampling setting is not an environment parameter: name the flag
		// that sets it, not --param, which would refuse it.
		if flag, ok := samplingFlags[strings.ReplaceAll(strings.TrimSpace(k), "-", "_")]; ok {
			return fmt.Errorf("-T %s: svbench's -T is the sampling temperature itself; type %s %s", m[1], flag, v)
		}
		return fmt.Errorf("-T %s: svbench's -T is the sampling temperature (a number); Inspect's task arguments are environment parameters here: --param %s", m[1], m[1])
	}
	if m := unknownFlag.FindStringSubmatch(msg); m != nil {
		var names []string
		cmd.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
		if cmd == cmd.Root() || cmd.Name() == "eval" {
			names = append(names, slices.Collect(maps.Keys(evalFlagAliases))...)
		}
		if s := env.Suggest(m[1], names); s != "" {
			return fmt.Errorf("%s (did you mean --%s?); see svbench %s --help", msg, s, cmd.Name())
		}
		return fmt.Errorf("%s; see svbench %s --help", msg, cmd.Name())
	}
	return err
}

// samplingFlags are the flags of the request settings Inspect users may
// write as -T key=value.
var samplingFlags = map[string]string{
	"temperature": "-T", "top_p": "--top-p", "max_tokens": "--max-tokens", "seed": "--sampling-seed",
	"reasoning_effort": "--reasoning-effort",
}

// applyModelHabits turns Inspect's -M base_url=URL and --reasoning-effort
// into the flags they stand for (--base-url, -S), setting those flags so
// everything downstream, --resume's comparison included, sees one name.
func applyModelHabits(cmd *cobra.Command, f *evalFlags) error {
	fs := cmd.Flags()
	for _, kv := range f.modelArgs {
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return usagef("-M %s: want key=value (Inspect's model args), such as -M base_url=http://localhost:8000/v1", kv)
		}
		switch k {
		case "base_url":
			if fs.Changed("base-url") && f.model.baseURL != v {
				return usagef("-M base_url=%s and --base-url %s: pass one", v, f.model.baseURL)
			}
			if err := fs.Set("base-url", v); err != nil {
				return usagef("-M base_url=%s: %v", v, err)
			}
		case "api_key":
			return usagef("-M api_key: svbench never takes a key on the command line (it would reach shell history): export it and name the variable with -k VAR")
		default:
			if flag, ok := samplingFlags[k]; ok {
				return usagef("-M %s: a request setting here: type %s %s", kv, flag, v)
			}
			return usagef("-M %s: Inspect's model args configure the engine Inspect starts; svbench sends requests to a server already running, so give %s when starting the server (vllm serve … --%s), or send it in each request body with -S '{\"%s\": …}'", kv, k, strings.ReplaceAll(k, "_", "-"), k)
		}
	}
	if fs.Changed("reasoning-effort") {
		extra := map[string]any{}
		if f.model.extra != "" {
			if err := json.Unmarshal([]byte(f.model.extra), &extra); err != nil {
				return usagef("-S/--sampling-args: not a JSON object: %v", err)
			}
		}
		if old, ok := extra["reasoning_effort"]; ok && old != f.reasoningEffort {
			return usagef("--reasoning-effort %s and -S reasoning_effort %v: pass one", f.reasoningEffort, old)
		}
		extra["reasoning_effort"] = f.reasoningEffort
		b, err := json.Marshal(extra)
		if err != nil {
			return err
		}
		if err := fs.Set("sampling-args", string(b)); err != nil {
			return usagef("--reasoning-effort: %v", err)
		}
	}
	return nil
}

var unknownCommand = regexp.MustCompile(`^unknown command "([^"]*)" for "([^"]*)"`)

// explainUnknownCommand says what to type for `svbench e1` or a command's
// stray argument; nil when err is not cobra's unknown-command error.
func explainUnknownCommand(err error) error {
	m := unknownCommand.FindStringSubmatch(err.Error())
	if m == nil {
		return nil
	}
	word, where := m[1], m[2]
	if id, rerr := env.Default.Resolve(word); rerr == nil {
		return usagef("%q is an environment (%s), not a command of %s: svbench eval %s -m MODEL", word, id, where, word)
	}
	return usagef("%s; run %q for the list", strings.TrimSuffix(err.Error(), "\nRun 'svbench --help' for usage."), where+" --help")
}

// evalTargets resolves eval's positional environments (`svbench eval e1
// e4 -m …`, Inspect's task-first habit); nil when there are none.
func evalTargets(f *evalFlags, args []string) ([]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	if f.envName != "" {
		return nil, usagef("the environment is given twice (--env %s and %s): pass one", f.envName, strings.Join(args, " "))
	}
	if f.resume != "" {
		return nil, usagef("--resume takes every setting from the run's metadata.json: drop %s", strings.Join(args, " "))
	}
	if f.runID != "" && len(args) > 1 {
		return nil, usagef("--run-id names one run: evaluate one environment at a time with it")
	}
	for _, a := range args {
		if _, err := env.Default.Resolve(a); err != nil {
			return nil, usageError(err)
		}
	}
	return args, nil
}

// isLocalURL reports whether a base URL points at this machine or a private
// network (a vLLM/SGLang/Ollama server: no bill to warn about).
func isLocalURL(u string) bool {
	if u == "" {
		return false // OpenAI's API
	}
	host := u
	if i := strings.Index(host, "://"); i >= 0 {
		host = host[i+3:]
	}
	host, _, _ = strings.Cut(host, "/")
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" || strings.HasSuffix(host, ".local") || strings.HasSuffix(host, ".internal") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast())
}
