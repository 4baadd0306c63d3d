package env

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
)

// ErrBadParam wraps every refusal of a parameter name or value, so callers
// can tell a user's mistake from a failing environment.
var ErrBadParam = errors.New("bad environment parameter")

// ParamKind is the type of an environment parameter's value.
type ParamKind string

// Parameter kinds.
const (
	ParamInt    ParamKind = "int"
	ParamNumber ParamKind = "number"
	ParamBool   ParamKind = "bool"
	ParamEnum   ParamKind = "enum"
	ParamString ParamKind = "string"
)

// ParamSpec describes one environment parameter, so a misspelt name or an
// out-of-range value is refused before a run spends anything. The
// registry derives it from the environment's configuration struct
// (config.go); it is what --help, `svbench envs` and /v1/environments show.
type ParamSpec struct {
	Name    string    `json:"name"`
	Kind    ParamKind `json:"kind"`
	Default string    `json:"default"`
	Doc     string    `json:"doc"`
	// Min and Max bound ParamInt and ParamNumber values (inclusive).
	Min float64 `json:"min,omitempty"`
	Max float64 `json:"max,omitempty"`
	// Values lists the accepted ParamEnum (and ParamBool) values.
	Values []string `json:"values,omitempty"`
}

// Check validates one value.
func (p ParamSpec) Check(v string) error {
	switch p.Kind {
	case ParamInt:
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || float64(n) < p.Min || float64(n) > p.Max {
			return fmt.Errorf("%w: param %s=%q: want an integer in [%g, %g] (%s)", ErrBadParam, p.Name, v, p.Min, p.Max, p.Doc)
		}
	case ParamNumber:
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(x) || x < p.Min || x > p.Max {
			return fmt.Errorf("%w: param %s=%q: want a number in [%g, %g] (%s)", ErrBadParam, p.Name, v, p.Min, p.Max, p.Doc)
		}
	case ParamBool:
		if s := strings.TrimSpace(v); s != "true" && s != "false" {
			return fmt.Errorf("%w: param %s=%q: want true or false (%s)", ErrBadParam, p.Name, v, p.Doc)
		}
	case ParamEnum:
		if !slices.Contains(p.Values, v) {
			msg := fmt.Sprintf("param %s=%q: want one of %s", p.Name, v, strings.Join(p.Values, ", "))
			if s := closest(v, p.Values); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return fmt.Errorf("%w: %s", ErrBadParam, msg)
		}
	}
	return nil
}

// CheckParams refuses unknown parameters (suggesting the closest known
// name) and invalid values. env names the environment in messages.
func CheckParams(env string, specs []ParamSpec, params map[string]string) error {
	names := make([]string, 0, len(specs))
	for _, s := range specs {
		names = append(names, s.Name)
	}
	for _, k := range slices.Sorted(maps.Keys(params)) {
		i := slices.IndexFunc(specs, func(s ParamSpec) bool { return s.Name == k })
		if i < 0 {
			msg := fmt.Sprintf("environment %s has no parameter %q", env, k)
			if s := closest(k, names); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			if len(names) == 0 {
				msg += "; it takes no parameters"
			} else {
				msg += "; its parameters: " + strings.Join(names, ", ")
			}
			return fmt.Errorf("%w: %s", ErrBadParam, msg)
		}
		if err := specs[i].Check(params[k]); err != nil {
			return err
		}
	}
	return nil
}

// Suggest returns the candidate closest to s by edit distance, or "" when
// none is close enough to be a likely typo.
func Suggest(s string, candidates []string) string { return closest(s, candidates) }

func closest(s string, candidates []string) string {
	best, bestD := "", 1<<30
	for _, c := range candidates {
		if d := editDistance(strings.ToLower(s), strings.ToLower(c)); d < bestD {
			best, bestD = c, d
		}
	}
	if bestD <= max(2, len(s)/3) {
		return best
	}
	return ""
}

// editDistance is the Levenshtein distance over bytes (names are ASCII).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
