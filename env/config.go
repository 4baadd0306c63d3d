package env

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// An environment's configuration is one struct it declares with its
// defaults filled in (Spec.Config). Each exported field tagged `param` is a
// parameter:
//
//	type Config struct {
//		ToolBudget int    `param:"tool_budget" min:"0" max:"64" doc:"tool calls per episode"`
//		Sandbox    string `param:"sandbox" enum:"auto,bwrap" doc:"isolation mechanism"`
//		judgeutil.Settings // embedded structs contribute their fields
//	}
//
// Field types: int and float64 (bounded by min and max, both required), bool,
// and string (an enum when the tag lists its values). The registry decodes
// every source of parameters (flags, -a, eval-set files, serve --param,
// sessions, a resumed run's metadata) into a copy of the defaults once,
// validates it once (ranges, enums, then the struct's own Validate method
// for rules across fields) and hands the result to the constructor in
// Options.Config. Nothing else parses a parameter.

// RewardSourced is a configuration that says where its reward comes from
// ("executable", "llm_judge", "hybrid"). judgeutil.Settings, which every
// environment offering the judge embeds, implements it, so generic code
// (the manifest, the leaderboard) reads a run's reward source from its
// decoded configuration rather than by a parameter's name.
type RewardSourced interface{ SourceOfReward() string }

// Validator is implemented by a configuration with rules across fields
// (a setting that applies only in one mode). Validate runs after every
// field has been decoded and range-checked.
type Validator interface {
	Validate() error
}

// configField is one parameter of a configuration struct.
type configField struct {
	spec  ParamSpec
	index []int
	kind  reflect.Kind
}

// configFields lists a configuration type's parameters in declaration
// order. A malformed declaration is a programming error and panics at
// start-up (Register calls it).
func configFields(t reflect.Type) []configField {
	if t.Kind() != reflect.Struct {
		panic(fmt.Sprintf("env: configuration %s is not a struct", t))
	}
	var out []configField
	for i := range t.NumField() {
		f := t.Field(i)
		name, tagged := f.Tag.Lookup("param")
		if !tagged {
			if f.Anonymous && f.Type.Kind() == reflect.Struct {
				for _, sub := range configFields(f.Type) {
					sub.index = append([]int{i}, sub.index...)
					out = append(out, sub)
				}
			}
			continue
		}
		if !f.IsExported() || name == "" {
			panic(fmt.Sprintf("env: configuration %s field %s: a param needs an exported field and a name", t, f.Name))
		}
		p := ParamSpec{Name: name, Doc: f.Tag.Get("doc")}
		bound := func(tag string) float64 {
			v, err := strconv.ParseFloat(f.Tag.Get(tag), 64)
			if err != nil {
				panic(fmt.Sprintf("env: configuration %s field %s: a number needs tags min and max", t, f.Name))
			}
			return v
		}
		switch f.Type.Kind() {
		case reflect.Int:
			p.Kind, p.Min, p.Max = ParamInt, bound("min"), bound("max")
		case reflect.Float64:
			p.Kind, p.Min, p.Max = ParamNumber, bound("min"), bound("max")
		case reflect.Bool:
			p.Kind, p.Values = ParamBool, []string{"true", "false"}
		case reflect.String:
			p.Kind = ParamString
			if e := f.Tag.Get("enum"); e != "" {
				p.Kind, p.Values = ParamEnum, strings.Split(e, ",")
			}
		default:
			panic(fmt.Sprintf("env: configuration %s field %s: type %s is not a parameter type (int, float64, bool, string)", t, f.Name, f.Type))
		}
		if p.Doc == "" {
			panic(fmt.Sprintf("env: configuration %s parameter %s: tag doc is required (it is the --help text)", t, name))
		}
		if slices.ContainsFunc(out, func(c configField) bool { return c.spec.Name == name }) {
			panic(fmt.Sprintf("env: configuration %s declares parameter %s twice", t, name))
		}
		out = append(out, configField{spec: p, index: []int{i}, kind: f.Type.Kind()})
	}
	return out
}

// declaredParams is the parameter list of a configuration value, defaults
// taken from it; a default outside its own range panics (a declaration
// the registry would refuse as input is a bug).
func declaredParams(defaults any) []ParamSpec {
	v := reflect.ValueOf(defaults)
	fields := configFields(v.Type())
	out := make([]ParamSpec, len(fields))
	for i, f := range fields {
		f.spec.Default = valueText(formatField(v.FieldByIndex(f.index)))
		if err := f.spec.Check(f.spec.Default); err != nil {
			panic(fmt.Sprintf("env: configuration %s: default refused: %v", v.Type(), err))
		}
		out[i] = f.spec
	}
	return out
}

// decodeConfig returns a copy of defaults with params applied, checked
// field by field and then by the struct's Validate. envID names the
// environment in refusals, which wrap ErrBadParam.
func decodeConfig(envID string, defaults any, params map[string]string) (any, error) {
	t := reflect.TypeOf(defaults)
	fields := configFields(t)
	specs := make([]ParamSpec, len(fields))
	for i, f := range fields {
		specs[i] = f.spec
	}
	if err := CheckParams(envID, specs, params); err != nil {
		return nil, err
	}
	out := reflect.New(t).Elem()
	out.Set(reflect.ValueOf(defaults))
	for _, f := range fields {
		raw, ok := params[f.spec.Name]
		if !ok {
			continue
		}
		dst := out.FieldByIndex(f.index)
		s := strings.TrimSpace(raw)
		switch f.kind {
		case reflect.Int:
			n, _ := strconv.Atoi(s) // CheckParams parsed it
			dst.SetInt(int64(n))
		case reflect.Float64:
			x, _ := strconv.ParseFloat(s, 64)
			dst.SetFloat(x)
		case reflect.Bool:
			dst.SetBool(s == "true")
		default:
			dst.SetString(raw)
		}
	}
	cfg := out.Interface()
	if v, ok := cfg.(Validator); ok {
		if err := v.Validate(); err != nil {
			return nil, fmt.Errorf("%w: environment %s: %w", ErrBadParam, envID, err)
		}
	}
	return cfg, nil
}

// encodeConfig is every parameter of a configuration value in its
// canonical text: the resolved configuration a run records.
func encodeConfig(cfg any) ConfigValues {
	v := reflect.ValueOf(cfg)
	out := ConfigValues{}
	for _, f := range configFields(v.Type()) {
		out[f.spec.Name] = formatField(v.FieldByIndex(f.index))
	}
	return out
}

// formatField is a configuration field's value as JSON of its kind (the
// kinds decodeConfig accepts: int, float64, bool, string).
func formatField(v reflect.Value) json.RawMessage {
	var b []byte
	switch v.Kind() {
	case reflect.Int:
		b = strconv.AppendInt(nil, v.Int(), 10)
	case reflect.Float64:
		if f := v.Float(); math.IsInf(f, 0) || math.IsNaN(f) {
			b, _ = json.Marshal(strconv.FormatFloat(f, 'g', -1, 64)) // not a JSON number
		} else {
			b = strconv.AppendFloat(nil, f, 'g', -1, 64)
		}
	case reflect.Bool:
		b = strconv.AppendBool(nil, v.Bool())
	default:
		b, _ = json.Marshal(v.String())
	}
	return b
}

// ConfigOf returns the configuration the registry decoded for opts, or,
// for a constructor called directly (tests, one environment building
// another), decodes opts.Params against defaults with the registry's own
// decoder. envID names the environment in refusals.
func ConfigOf[C any](envID string, opts Options, defaults C) (C, error) {
	if opts.Config != nil {
		c, ok := opts.Config.(C)
		if !ok {
			var zero C
			return zero, fmt.Errorf("environment %s: configuration is %T, want %T", envID, opts.Config, zero)
		}
		return c, nil
	}
	v, err := decodeConfig(envID, defaults, opts.Params)
	if err != nil {
		var zero C
		return zero, err
	}
	return v.(C), nil
}

// Configured is a parameter set the registry has decoded for one
// environment.
type Configured struct {
	// ID is the environment's canonical id.
	ID string
	// Config is the decoded configuration (a value of the environment's
	// configuration type), what its constructor receives.
	Config any
	// Given are the parameters as the user set them.
	Given map[string]string
	// Values is every parameter in force, defaults included, each a JSON
	// value of its own type: what a run records (artifact.Metadata.Config).
	Values ConfigValues
	// Resolved is Values as canonical text (Values.Text): what compare,
	// the leaderboard and resume match on.
	Resolved map[string]string
}

// ConfigValues is a configuration as JSON values of their own types, as a
// run records it: a number is a number ("tool_budget": 6), a switch a
// boolean. Runs recorded before held every value as a string; Text reads
// both the same.
type ConfigValues map[string]json.RawMessage

// Text is each value as a parameter's canonical text, what --param takes
// and what runs are matched on: strings unquoted, numbers and booleans as
// written (a float in Go's shortest form, as the registry formats one).
func (c ConfigValues) Text() map[string]string {
	if c == nil {
		return nil
	}
	out := make(map[string]string, len(c))
	for k, raw := range c {
		out[k] = valueText(raw)
	}
	return out
}

// ChangedText is the names, sorted, whose text differs between two
// configurations as text (Resolved, artifact.Metadata.Conditions); a name
// one of them lacks reads as "".
func ChangedText(a, b map[string]string) []string {
	var out []string
	for k := range a {
		if a[k] != b[k] {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok && b[k] != "" {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// ShowText is a configuration value as a message shows it: "(unset)"
// for a value that is not there.
func ShowText(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

func valueText(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	var s string
	if len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil {
		return s
	}
	if bytes.ContainsAny(raw, ".eE") {
		if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
	}
	return string(raw)
}

// Configure resolves an environment name and decodes params for it:
// unknown parameters, values out of range and contradictory settings are
// refused (wrapping ErrBadParam) before anything is built.
func (r *Registry) Configure(name string, params map[string]string) (Configured, error) {
	id, err := r.Resolve(name)
	if err != nil {
		return Configured{}, err
	}
	r.mu.RLock()
	s := r.specs[id]
	r.mu.RUnlock()
	c := Configured{ID: id, Given: maps.Clone(params), Values: ConfigValues{}, Resolved: map[string]string{}}
	if s.Config == nil {
		if err := CheckParams(id, nil, params); err != nil {
			return Configured{}, err
		}
		return c, nil
	}
	if c.Config, err = decodeConfig(id, s.Config, params); err != nil {
		return Configured{}, err
	}
	c.Values = encodeConfig(c.Config)
	c.Resolved = c.Values.Text()
	return c, nil
}

// Resolved is the configuration in force for params (defaults included),
// for reading runs recorded before metadata carried it; nil when the
// environment is unknown here or refuses params.
func (r *Registry) Resolved(name string, params map[string]string) map[string]string {
	c, err := r.Configure(name, params)
	if err != nil {
		return nil
	}
	return c.Resolved
}

// ParamHelp is every registered environment's parameters as `--help` text:
// the name, what values it takes, its default and its doc, derived from
// the configuration structs so it never disagrees with what is accepted.
func (r *Registry) ParamHelp() string {
	type entry struct {
		name   string
		params []ParamSpec
	}
	var entries []entry
	for _, id := range r.IDs() {
		params, _ := r.Params(id)
		if len(params) == 0 {
			continue
		}
		name := id
		for _, a := range r.Aliases(id) {
			if len(a) <= 3 {
				name = a + " (" + id + ")"
				break
			}
		}
		entries = append(entries, entry{name, params})
	}
	// In the order people number them (e1 … e6), not by canonical id.
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	var b strings.Builder
	for _, e := range entries {
		fmt.Fprintf(&b, "\n  %s\n", e.name)
		for _, p := range e.params {
			fmt.Fprintf(&b, "    %s %s, default %s: %s\n", p.Name, p.Accepts(), cmpOr(p.Default, `""`), p.Doc)
		}
	}
	return b.String()
}

// Accepts says what values a parameter takes ("an integer in [0, 64]",
// "one of auto, bwrap").
func (p ParamSpec) Accepts() string {
	switch p.Kind {
	case ParamInt:
		return fmt.Sprintf("integer in [%g, %g]", p.Min, p.Max)
	case ParamNumber:
		return fmt.Sprintf("number in [%g, %g]", p.Min, p.Max)
	case ParamEnum, ParamBool:
		return strings.Join(p.Values, "|")
	}
	return "text"
}

func cmpOr(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
