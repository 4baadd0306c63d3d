package artifact

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/svbench/svbench/env"

	"github.com/svbench/svbench/base/atomicfile"
)

// Artifact file names inside a run directory.
const (
	ResultsFile  = "results.jsonl"
	MetadataFile = "metadata.json"
	SummaryFile  = "summary.json"
	ReportFile   = "report.md"
)

// ResultsPath accepts a run directory or a results file and returns the file.
func ResultsPath(p string) string {
	if st, err := os.Stat(p); err == nil && st.IsDir() {
		return filepath.Join(p, ResultsFile)
	}
	return p
}

// EachResult streams the rows of a results file under EachRow's policy
// (a torn last line is dropped, a complete one kept; a malformed line
// anywhere else is an error naming the line).
func EachResult(path string, fn func(r *Result) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open results: %w", err)
	}
	defer f.Close()
	return EachRow(f, path, ReadOptions{}, DecodeResult, func(_ int, r Result) error { return fn(&r) })
}

// ReadResults loads every row (reports need them all; runs are at most a
// few hundred thousand rows).
func ReadResults(path string) ([]Result, error) {
	rows, _, err := LoadResults(path)
	return rows, err
}

// ReadMetadata loads metadata.json from a run directory.
func ReadMetadata(dir string) (*Metadata, error) {
	b, err := os.ReadFile(filepath.Join(dir, MetadataFile))
	if err != nil {
		return nil, fmt.Errorf("read metadata: %w", err)
	}
	return DecodeMetadata(b, filepath.Join(dir, MetadataFile))
}

// DecodeMetadata decodes a metadata.json read by other means (the
// dashboard reads through its root), name naming it in errors.
func DecodeMetadata(b []byte, name string) (*Metadata, error) {
	var m Metadata
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	migrateMetadata(&m)
	return &m, nil
}

// migrateMetadata brings metadata an older svbench wrote to today's shape,
// so a resumed or compared old run means what it meant.
func migrateMetadata(m *Metadata) {
	// E2's extra Rego directories were a launch setting of their own; they
	// are the policy_dirs parameter now (the OS path-list separator joins
	// them), which also makes them part of the run's condition.
	if len(m.Launch.PolicyDirs) > 0 {
		if _, ok := m.Params["policy_dirs"]; !ok {
			if m.Params == nil {
				m.Params = map[string]string{}
			}
			m.Params["policy_dirs"] = strings.Join(m.Launch.PolicyDirs, string(os.PathListSeparator))
		}
		m.Launch.PolicyDirs = nil
	}
}

// Conditions are the environment parameters in force for the run, what
// resume, compare, the leaderboard and the manifest match on: the resolved
// configuration the run recorded, or, for a run recorded before metadata
// carried one, its given parameters resolved against this build's
// defaults (the given ones alone when the environment is not registered
// here or refuses them). A parameter set to its default and one left
// unset are the same condition.
func (m *Metadata) Conditions() map[string]string {
	if m.Config != nil {
		return m.Config.Text()
	}
	if r := env.Default.Resolved(m.Environment, m.Params); r != nil {
		return r
	}
	return m.Params
}

// RewardSource is where the run's reward came from: its configuration
// decoded into the environment's own says (env.RewardSourced), and an
// environment without a judge is "executable". Only for an environment
// this build cannot configure is the recorded value read by its name.
func (m *Metadata) RewardSource() string {
	cond := m.Conditions()
	if c, err := env.Default.Configure(m.Environment, cond); err == nil {
		if rs, ok := c.Config.(env.RewardSourced); ok {
			return rs.SourceOfReward()
		}
		return "executable"
	}
	return cmp.Or(cond["reward_source"], "executable")
}

// EpisodeLimits are the turn limit and tool budget the run's episodes were
// held to, nil where the run does not say. A run records them as numbers
// (Metadata.Limits); for one recorded before, they are read the only way
// it kept them: --max-turns from its launch, else its max_turns and
// tool_budget parameters (the environment's own defaults were not
// recorded, so an environment without such a parameter leaves them nil:
// unknown, which compare and the leaderboard do not hold against a run).
func (m *Metadata) EpisodeLimits() (maxTurns, toolBudget *int) {
	if m.Limits != nil {
		return new(m.Limits.MaxTurns), new(m.Limits.ToolBudget)
	}
	cond := m.Conditions()
	number := func(k string) *int {
		if n, err := strconv.Atoi(cond[k]); err == nil {
			return &n
		}
		return nil
	}
	maxTurns = number("max_turns")
	if m.Launch.MaxTurns > 0 {
		maxTurns = new(m.Launch.MaxTurns)
	}
	return maxTurns, number("tool_budget")
}

// ChangedParams are the conditions that differ from this build's defaults
// for the environment: what a scoreboard or leaderboard row names as its
// condition. A parameter given at its default is not a change.
func (m *Metadata) ChangedParams() map[string]string {
	cond := m.Conditions()
	defaults := env.Default.Resolved(m.Environment, nil)
	out := map[string]string{}
	for k, v := range cond {
		if d, ok := defaults[k]; !ok || d != v {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// WriteJSONAtomic writes v as indented JSON via a temp file and rename, so a
// reader never sees half a file and a crash never leaves one.
func WriteJSONAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", filepath.Base(path), err)
	}
	return WriteFileAtomic(path, append(b, '\n'))
}

// WriteFileAtomic writes data so a reader never sees half a file and a
// crash never leaves one; a rewritten file keeps its mode.
func WriteFileAtomic(path string, data []byte) error {
	return atomicfile.WriteBytes(path, data)
}
