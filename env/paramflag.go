package env

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ParamFlag is a command-line shorthand for one of an environment's
// parameters (`--policy-pack DIR` for `--param mode=policy --param
// policy_packs=/abs/DIR`). Commands that build environments (eval, serve)
// offer every registered environment's flags and apply one only to an
// environment that declares it, so the CLI needs no code for any of them.
type ParamFlag struct {
	// Name is the flag without dashes ("policy-pack").
	Name string
	// Param is the parameter the flag sets; the environment must declare it.
	Param string
	Usage string
	// Path marks a flag naming a file or directory: it is made absolute,
	// so a resumed run finds it from any directory.
	Path bool
	// Repeatable paths are joined with the OS path-list separator (the
	// parameter is a list, as PATH is).
	Repeatable bool
	// Role marks a flag naming a model that plays this role (ModelTarget,
	// ModelAttacker) in the environment's episodes: builtin:<policy>, an
	// endpoints alias or a served model; the command builds it into
	// Options.Models.
	Role string
	// Implies are further parameters the flag sets (policy-pack selects
	// mode=policy); a --param contradicting one is refused.
	Implies map[string]string
}

// ApplyParamFlag sets the flag's parameter (and those it implies) in
// params from the values given on the command line. A parameter already set
// to something else (by --param, or by the run being resumed) is an error
// naming both, never silently overwritten.
func ApplyParamFlag(f ParamFlag, values []string, params map[string]string) (map[string]string, error) {
	if len(values) == 0 {
		return params, nil
	}
	if !f.Repeatable && len(values) > 1 {
		return nil, fmt.Errorf("%w: --%s given %d times; it takes one value", ErrBadParam, f.Name, len(values))
	}
	value := values[0]
	if f.Path {
		abs := make([]string, 0, len(values))
		for _, v := range values {
			if strings.TrimSpace(v) == "" {
				return nil, fmt.Errorf("%w: --%s: empty path", ErrBadParam, f.Name)
			}
			a, err := filepath.Abs(v)
			if err != nil {
				return nil, fmt.Errorf("--%s %s: %w", f.Name, v, err)
			}
			abs = append(abs, a)
		}
		value = strings.Join(abs, string(os.PathListSeparator))
	}
	out := maps.Clone(params)
	if out == nil {
		out = map[string]string{}
	}
	set := map[string]string{f.Param: value}
	maps.Copy(set, f.Implies)
	for _, k := range slices.Sorted(maps.Keys(set)) {
		if prev, ok := out[k]; ok && prev != set[k] {
			return nil, fmt.Errorf("%w: --%s sets %s=%s, but %s=%s was given (or is the resumed run's)", ErrBadParam, f.Name, k, set[k], k, prev)
		}
		out[k] = set[k]
	}
	return out, nil
}

// ParamFlags lists every registered environment's flags once by name, with
// the ids of the environments declaring each. Two environments may share a
// flag only with the same meaning (parameter, kind and role); Register
// refuses anything else.
func (r *Registry) ParamFlags() []DeclaredFlag {
	r.mu.RLock()
	defer r.mu.RUnlock()
	byName := map[string]*DeclaredFlag{}
	for _, id := range r.idsLocked() {
		for _, f := range r.specs[id].Flags {
			d := byName[f.Name]
			if d == nil {
				d = &DeclaredFlag{ParamFlag: f}
				byName[f.Name] = d
			}
			d.Envs = append(d.Envs, id)
		}
	}
	out := make([]DeclaredFlag, 0, len(byName))
	for _, n := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, *byName[n])
	}
	return out
}

// DeclaredFlag is a ParamFlag with the environments declaring it.
type DeclaredFlag struct {
	ParamFlag
	Envs []string
}

// checkFlags refuses a spec whose flags name undeclared parameters, or
// clash with another environment's flag of the same name.
func (r *Registry) checkFlags(s Spec, params []ParamSpec) error {
	for _, f := range s.Flags {
		if f.Name == "" || strings.HasPrefix(f.Name, "-") {
			return fmt.Errorf("flag %q: want a name without dashes", f.Name)
		}
		if !slices.ContainsFunc(params, func(p ParamSpec) bool { return p.Name == f.Param }) {
			return fmt.Errorf("flag --%s sets parameter %q, which %s does not declare", f.Name, f.Param, s.ID)
		}
		for _, other := range r.specs {
			for _, g := range other.Flags {
				if g.Name == f.Name && (g.Param != f.Param || g.Path != f.Path || g.Repeatable != f.Repeatable || g.Role != f.Role || !maps.Equal(g.Implies, f.Implies)) {
					return fmt.Errorf("flag --%s means parameter %s here and %s in %s", f.Name, f.Param, g.Param, other.ID)
				}
			}
		}
	}
	return nil
}
