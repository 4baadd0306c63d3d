package env

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Options configure an environment instance. Zero values mean defaults.
type Options struct {
	// Params carries environment-specific settings (tool budget, max turns,
	// reward source, …) as the user gave them, in text; the registry
	// decodes them into Config. Constructors read Config, never Params.
	Params map[string]string
	// Config is the environment's decoded configuration, a value of the
	// type of its Spec.Config (set by Registry.New; env.ConfigOf decodes
	// Params itself for a constructor called directly).
	Config any
	// Models are the served models an environment talks to, by role:
	// ModelJudge grades (a yes/no verdict for llm_judge and hybrid reward
	// sources, a safety judgement of a whole conversation for the red-team
	// environments), ModelTarget and ModelAttacker play the other parties
	// of multi-party environments. A missing role means the environment's
	// built-in stand-in, or no judge.
	Models map[string]Model
}

// Spec is how an environment joins the registry: everything the rest of
// svbench needs to know about an environment besides what its instances
// implement. It is declared once, in the environment package's init:
//
//	func init() {
//		env.Register(env.Spec{ID: ID, Aliases: []string{"e1"}, New: New, Config: DefaultConfig(),
//			Breakdown: []string{"scenario"}})
//	}
//
// or, by an environment with a report of its own, inside the one
// report.Register call that joins the two (report.Spec: its builder,
// key-metrics version and condition labels):
//
//	func init() {
//		report.Register(report.Spec{Env: env.Spec{ID: ID, New: New}, Build: BuildReport})
//	}
//
// Optional capabilities are interfaces an instance implements:
// PolicyProvider (built-in baselines), Prober (exploit strategies),
// FieldExtractor (label-shortcut checks) and DemoConditioner. Dataset
// pipelines (import, build, generate) and other tools are data on the Spec
// (Data, Commands), so the CLI lists them without building an instance. An environment with no
// report builder of its own gets report.Generic.
type Spec struct {
	ID string
	// Aliases are the other accepted names ("e1"); the only declaration of
	// them: Info, reports and the CLI all read them from the registry
	// (Registry.Aliases). The reference's "sv-env-" prefix, any case and
	// "_" for "-" are accepted without aliases of their own.
	Aliases []string
	New     func(Options) (Environment, error)
	// Config is the environment's configuration struct with its defaults
	// (config.go): its tagged fields are every parameter New accepts. The
	// registry refuses others (with a suggestion) and invalid values
	// before New runs, and passes the decoded struct in Options.Config.
	// nil: the environment takes no parameters.
	Config any
	// Breakdown names Example.Meta fields worth breaking results down by
	// ("scenario", "cwe"); the generic report adds a table for each, and
	// compare keeps them from the dataset's rows.
	Breakdown []string
	// Data returns the environment's dataset pipelines (import, build,
	// generate), fresh on every call so that each command tree binds its
	// own flags; nil when it ships none.
	Data func() []DataCommand
	// Commands returns the environment's other tools (`svbench <group>
	// <name>`, E5's red-team tournament), fresh on every call as Data;
	// nil when it ships none.
	Commands func() []Command
	// NearLeakLimit is the share of held-out rows `svbench data validate`
	// lets look like another split's rows once numbers, case and spacing
	// are ignored (0: the default 0.10; 1: never fail on it, for prompts
	// that are mostly numbers).
	NearLeakLimit float64
	// Flags are command-line shorthands for parameters (ParamFlag).
	Flags []ParamFlag
}

// Registry maps ids and aliases to environment constructors.
type Registry struct {
	mu     sync.RWMutex
	specs  map[string]Spec
	names  map[string]string
	params map[string][]ParamSpec
}

// NewRegistry returns an empty registry (tests build their own).
func NewRegistry() *Registry {
	return &Registry{specs: map[string]Spec{}, names: map[string]string{}, params: map[string][]ParamSpec{}}
}

// Default is the process-wide registry environments add themselves to from
// init, as database/sql drivers do: one blank import enables an environment.
var Default = NewRegistry()

// Register adds an environment to the Default registry.
func Register(s Spec) { Default.Register(s) }

// Register adds an environment; a duplicate id or alias is a programming
// error and panics at start-up.
func (r *Registry) Register(s Spec) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if s.ID == "" || s.New == nil {
		panic("env: Register needs an ID and a constructor")
	}
	for _, n := range append([]string{s.ID}, s.Aliases...) {
		k := normalise(n)
		if prev, ok := r.names[k]; ok {
			panic(fmt.Sprintf("env: name %q of %s already used by %s", n, s.ID, prev))
		}
		r.names[k] = s.ID
	}
	var params []ParamSpec
	if s.Config != nil {
		params = declaredParams(s.Config)
	}
	if err := r.checkFlags(s, params); err != nil {
		panic(fmt.Sprintf("env: %s: %v", s.ID, err))
	}
	r.specs[s.ID] = s
	r.params[s.ID] = params
}

// Resolve maps any accepted form of a name (`e1`, `network-logs`,
// `sv-env-network-logs`, any case) to the canonical id.
func (r *Registry) Resolve(name string) (string, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if id, ok := r.names[normalise(name)]; ok {
		return id, nil
	}
	known := make([]string, 0, len(r.specs))
	var names []string
	for _, id := range r.idsLocked() {
		entry := id
		for _, a := range r.specs[id].Aliases {
			if len(a) <= 3 { // the short ids people type: e1 … e6
				entry = a + " " + id
				break
			}
		}
		known = append(known, entry)
		names = append(names, id)
		names = append(names, r.specs[id].Aliases...)
	}
	msg := fmt.Sprintf("unknown environment %q", name)
	if s := closest(name, names); s != "" && len(name) > 3 {
		msg += fmt.Sprintf(" (did you mean %q?)", s)
	}
	slices.Sort(known)
	return "", fmt.Errorf("%s; known: %s", msg, strings.Join(known, ", "))
}

// New builds the named environment from opts.Params, decoded by
// Configure.
func (r *Registry) New(name string, opts Options) (Environment, error) {
	c, err := r.Configure(name, opts.Params)
	if err != nil {
		return nil, err
	}
	return r.Build(c, opts)
}

// Build builds an environment from a configuration Configure decoded
// (opts.Params and opts.Config are taken from it), so a caller that
// records the resolved configuration decodes only once.
func (r *Registry) Build(c Configured, opts Options) (Environment, error) {
	r.mu.RLock()
	s, ok := r.specs[c.ID]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown environment %q", c.ID)
	}
	opts.Params, opts.Config = c.Given, c.Config
	e, err := s.New(opts)
	if err != nil {
		return nil, fmt.Errorf("environment %s: %w", c.ID, err)
	}
	return e, nil
}

// Params returns the parameters the named environment declares.
func (r *Registry) Params(name string) ([]ParamSpec, error) {
	id, err := r.Resolve(name)
	if err != nil {
		return nil, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return slices.Clone(r.params[id]), nil
}

// Lookup returns the registration of the named environment.
func (r *Registry) Lookup(name string) (Spec, error) {
	id, err := r.Resolve(name)
	if err != nil {
		return Spec{}, err
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.specs[id], nil
}

// Aliases returns the aliases the environment registered (nil for an
// unknown id), for its Info.
func (r *Registry) Aliases(id string) []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	s, ok := r.specs[id]
	if !ok {
		return nil
	}
	return append([]string(nil), s.Aliases...)
}

// IDs lists canonical ids, sorted.
func (r *Registry) IDs() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.idsLocked()
}

func (r *Registry) idsLocked() []string {
	return slices.Sorted(maps.Keys(r.specs))
}

func normalise(name string) string {
	n := strings.ToLower(strings.TrimSpace(name))
	n = strings.TrimPrefix(n, "sv-env-")
	return strings.ReplaceAll(n, "_", "-")
}
