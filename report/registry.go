package report

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
)

// Builder computes one environment's report from its rows. meta may be nil
// (a bare results file). It must not keep rows.
type Builder func(rows []artifact.Result, meta *artifact.Metadata, opts Options) (*Report, error)

// Spec is an environment that has a report of its own: its registration
// (env.Spec: id, aliases, constructor, configuration, breakdown) and its
// report, joined to svbench by one call in the environment package's init:
//
//	func init() {
//		report.Register(report.Spec{
//			Env:   env.Spec{ID: ID, Aliases: []string{"e1"}, New: New, Config: DefaultConfig()},
//			Build: BuildReport,
//		})
//	}
//
// An environment without a report of its own calls env.Register and gets
// Generic over its Breakdown fields. Names resolve through the env
// registry: any case, surrounding space ignored, "_" read as "-", and the
// reference's "sv-env-" prefix optional.
type Spec struct {
	Env   env.Spec
	Build Builder
	// KeyMetricsVersion is bumped when a key metric changes name or
	// meaning (E1's "accuracy" became accuracy over every row in version
	// 1, issue #44). Build writes it as summary.json's
	// key_metrics_version when it is above 0; a summary.json with a lower
	// one is not trusted (SummaryCurrent): the scoreboard and the
	// dashboard compute the key metrics again instead.
	KeyMetricsVersion int
	// Labels, when set, names what a run's resolved configuration
	// (artifact.Metadata.Conditions) makes its numbers mean, such as E5's
	// "simulated target" (ConditionLabels).
	Labels func(conditions map[string]string) []string
}

// reportSpec is what the report registry keeps of a Spec.
type reportSpec struct {
	build      Builder
	keyVersion int
	labels     func(conditions map[string]string) []string
}

var (
	mu    sync.RWMutex
	specs = map[string]reportSpec{} // canonical id → its report
	names = map[string]string{}     // normalised alias of an id outside the env registry → id
)

// Register adds an environment and its report. A missing id or builder,
// or a name already used, is a programming error and panics at start-up.
func Register(s Spec) {
	if s.Env.ID == "" || s.Build == nil {
		panic(fmt.Sprintf("report: Register(%q) needs Env.ID and Build", s.Env.ID))
	}
	env.Register(s.Env)
	register(s.Env.ID, nil, s)
}

// register adds a report under id. aliases are for ids outside the env
// registry (the package's tests build reports of such ids); a registered
// environment's names are resolved by the env registry.
func register(id string, aliases []string, s Spec) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := specs[id]; dup {
		panic(fmt.Sprintf("report: %s registered twice", id))
	}
	all := append([]string{id}, aliases...)
	for _, n := range all {
		if prev, dup := names[normalise(n)]; dup && prev != id {
			panic(fmt.Sprintf("report: name %q of %s already used by %s", n, id, prev))
		}
	}
	for _, n := range all {
		names[normalise(n)] = id
	}
	specs[id] = reportSpec{build: s.Build, keyVersion: s.KeyMetricsVersion, labels: s.Labels}
}

// KeyMetricsVersionKey is summary.json's field for Spec.KeyMetricsVersion.
const KeyMetricsVersionKey = "key_metrics_version"

// KeyMetricsVersion is the Spec.KeyMetricsVersion of an environment (any
// name Resolve accepts; 0 for one that never changed a key metric).
func KeyMetricsVersion(name string) int {
	id, err := Resolve(name)
	if err != nil {
		return 0
	}
	mu.RLock()
	defer mu.RUnlock()
	return specs[id].keyVersion
}

// SummaryCurrent reports whether a summary.json of environment id (any
// name Resolve accepts; its
// key_metrics_version field, absent meaning 0) carries the key metrics
// this build writes under the same names and meanings.
func SummaryCurrent(id string, summary map[string]json.RawMessage) bool {
	want := KeyMetricsVersion(id)
	if want == 0 {
		return true
	}
	var got int
	if raw, ok := summary[KeyMetricsVersionKey]; ok && json.Unmarshal(raw, &got) != nil {
		return false
	}
	return got >= want
}

// EnvIDs lists the env ids that have a builder, sorted.
func EnvIDs() []string {
	mu.RLock()
	defer mu.RUnlock()
	return slices.Sorted(maps.Keys(specs))
}

// Resolve maps any registered name of an environment (e1, network-logs,
// sv-env-network-logs, any case) to its canonical id.
//
// Every environment in the env registry has a report: its own builder when
// it registered one, Generic otherwise; names resolve through the env
// registry, where aliases are declared once.
func Resolve(name string) (string, error) {
	if id, err := env.Default.Resolve(name); err == nil {
		return id, nil
	}
	mu.RLock()
	id, ok := names[normalise(name)]
	mu.RUnlock()
	if !ok {
		return "", fmt.Errorf("no report for environment %q (known: %s)", name, strings.Join(knownIDs(), ", "))
	}
	return id, nil
}

// knownIDs lists every environment with a report: the registered
// environments and builders registered without one (tests).
func knownIDs() []string {
	ids := append(env.Default.IDs(), EnvIDs()...)
	slices.Sort(ids)
	return slices.Compact(ids)
}

// builderFor returns id's builder: its own, or Generic over the Meta
// fields its registration names for a breakdown.
func builderFor(id string) Builder {
	mu.RLock()
	b := specs[id].build
	mu.RUnlock()
	if b != nil {
		return b
	}
	spec, err := env.Default.Lookup(id)
	if err != nil {
		return Generic(nil)
	}
	return Generic(spec.Breakdown)
}

// normalise is the name folding env.Registry applies, so both registries
// accept the same spellings.
func normalise(name string) string {
	n := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(name)), "sv-env-")
	return strings.ReplaceAll(n, "_", "-")
}
