package cli

import (
	"encoding/json"
	"maps"
	"slices"

	"github.com/spf13/pflag"

	"github.com/svbench/svbench/env"
)

// paramFlags are --param key=value and -a/--env-args, declared and read the
// same way by every command that builds an environment, so a parameter that
// works for `eval` works for `score` with the same refusal messages.
// Validation against the environment's declared parameters is the
// registry's (Registry.Configure), reached through newEnvOpts.
type paramFlags struct {
	kvs     []string
	envArgs string
	// resumed are the parameters of the run being resumed, which replace
	// the flags (resume refuses flags that differ from them).
	resumed map[string]string
}

func (p *paramFlags) register(fs *pflag.FlagSet) {
	fs.StringArrayVar(&p.kvs, "param", nil, "environment parameter key=value (repeatable), e.g. tool_budget=4")
	fs.StringVarP(&p.envArgs, "env-args", "a", "", `environment parameters as a JSON object (vf-eval's -a), e.g. '{"tool_budget": 0}'`)
}

// changed reports whether either flag was given on the command line.
func (p *paramFlags) changed(fs *pflag.FlagSet) bool {
	return fs.Changed("param") || fs.Changed("env-args")
}

// parse merges the flags into one map, nil when none is given; -a's values
// win over --param's for the same key.
func (p *paramFlags) parse() (map[string]string, error) {
	if p.resumed != nil {
		return maps.Clone(p.resumed), nil
	}
	kvs := p.kvs
	if p.envArgs != "" {
		more, err := envArgsParams(p.envArgs)
		if err != nil {
			return nil, err
		}
		kvs = append(append([]string(nil), kvs...), more...)
	}
	return parseParams(kvs)
}

// parseParams reads repeated --param key=value flags.
func parseParams(kvs []string) (map[string]string, error) {
	p, err := env.ParseParams(kvs)
	if err != nil {
		return nil, usageError(err)
	}
	return p, nil
}

// envArgsParams turns vf-eval's -a JSON object into key=value parameters
// (strings as they are, other values as their JSON text).
func envArgsParams(js string) ([]string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(js), &m); err != nil {
		return nil, usagef("-a/--env-args: want a JSON object such as '{\"tool_budget\": 0}': %v", err)
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		v := string(m[k])
		var str string
		if json.Unmarshal(m[k], &str) == nil {
			v = str
		}
		out = append(out, k+"="+v)
	}
	return out, nil
}
