package cli

import (
	"maps"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/svbench/svbench/env"
)

// envParamFlags offers every registered environment's parameter
// shorthands (env.ParamFlag: E2's --policy-pack, E5's --target-model) on a
// command that builds environments, and applies the ones given to the
// environment being built. The CLI knows none of them by name.
type envParamFlags struct {
	declared []env.DeclaredFlag
	values   map[string]*[]string
}

// register adds the flags to fs; withRoles false leaves out flags naming
// a model to play a role, for commands that build no such models (serve).
func (p *envParamFlags) register(fs *pflag.FlagSet, withRoles bool) {
	p.values = map[string]*[]string{}
	for _, d := range env.Default.ParamFlags() {
		if d.Role != "" && !withRoles {
			continue
		}
		p.declared = append(p.declared, d)
		v := new([]string)
		fs.Var(&paramFlagValue{values: v, flag: d.ParamFlag}, d.Name, d.Usage)
		p.values[d.Name] = v
	}
}

// given lists the flags set on the command line with their values; an
// empty value counts as not given (a config file's unset field).
func (p *envParamFlags) given() map[string][]string {
	out := map[string][]string{}
	for _, d := range p.declared {
		var vals []string
		for _, v := range *p.values[d.Name] {
			if v != "" {
				vals = append(vals, v)
			}
		}
		if len(vals) > 0 {
			out[d.Name] = vals
		}
	}
	return out
}

// apply sets the given flags' parameters in params for environment
// envName. A flag of another environment is an error naming those whose
// flag it is.
func (p *envParamFlags) apply(envName string, params map[string]string) (map[string]string, error) {
	given := p.given()
	if len(given) == 0 {
		return params, nil
	}
	id, err := env.Default.Resolve(envName)
	if err != nil {
		return nil, usageError(err)
	}
	for _, d := range p.declared {
		vals, ok := given[d.Name]
		if !ok {
			continue
		}
		if !slices.Contains(d.Envs, id) {
			return nil, usagef("--%s is a flag of %s, not of %s", d.Name, strings.Join(d.Envs, ", "), id)
		}
		if params, err = env.ApplyParamFlag(d.ParamFlag, vals, params); err != nil {
			return nil, usageError(err)
		}
	}
	return params, nil
}

// applyServed is apply for a server: each given flag sets its parameter
// for every served environment declaring it (envs and perEnv's keys are
// canonical ids), and is an error when none of them does. A parameter set
// for every environment (shared) that contradicts the flag is refused.
func (p *envParamFlags) applyServed(envs []string, shared map[string]string, perEnv map[string]map[string]string) (map[string]map[string]string, error) {
	given := p.given()
	for _, d := range p.declared {
		vals, ok := given[d.Name]
		if !ok {
			continue
		}
		applied := false
		for _, id := range envs {
			if !slices.Contains(d.Envs, id) {
				continue
			}
			merged := maps.Clone(shared)
			if merged == nil {
				merged = map[string]string{}
			}
			maps.Copy(merged, perEnv[id])
			params, err := env.ApplyParamFlag(d.ParamFlag, vals, merged)
			if err != nil {
				return nil, usageError(err)
			}
			if perEnv == nil {
				perEnv = map[string]map[string]string{}
			}
			perEnv[id] = params
			applied = true
		}
		if !applied {
			return nil, usagef("--%s is a flag of %s, and none of them is served", d.Name, strings.Join(d.Envs, ", "))
		}
	}
	return perEnv, nil
}

// paramFlagValue collects a ParamFlag's values; its type names what the
// flag takes in --help ("path", "model").
type paramFlagValue struct {
	values *[]string
	flag   env.ParamFlag
}

func (v *paramFlagValue) Set(s string) error {
	*v.values = append(*v.values, s)
	return nil
}

func (v *paramFlagValue) String() string { return strings.Join(*v.values, ",") }

func (v *paramFlagValue) Type() string {
	switch {
	case v.flag.Role != "":
		return "model"
	case v.flag.Path && v.flag.Repeatable:
		return "dir"
	case v.flag.Path:
		return "path"
	}
	return "string"
}
