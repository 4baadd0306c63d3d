package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/base/version"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/llm/usage"
)

// UsageJournal is the file, beside results.jsonl, where every model call is
// recorded as it is counted (llm/usage's journal). metadata.json's
// usage_by_model is a checkpoint; after kill -9 the journal still holds
// every call that was paid for, so a resumed run adds up from it.
const UsageJournal = "usage.jsonl"

// openUsageJournal restores the recorder for this session — from the
// journal when the run has one, else from metadata.json (runs older than
// the journal, whose first journal line then carries those counts) — and
// starts journaling into it. nil when the run records no usage.
func openUsageJournal(dir string, meta *artifact.Metadata, cfg Config) (*os.File, error) {
	if cfg.Usage == nil {
		return nil, nil
	}
	path := filepath.Join(dir, UsageJournal)
	var prev []artifact.ModelUsage
	fromJournal := false
	if cfg.ResumeDir != "" {
		prev = meta.UsageByModel
		if f, err := os.Open(path); err == nil {
			counts, err := usage.ReadJournal(f)
			f.Close()
			if err != nil {
				return nil, fmt.Errorf("resume: %s: %w", path, err)
			}
			prev, fromJournal = counts, true
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("resume: %w", err)
		}
	}
	cfg.Usage.Restore(prev)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open usage journal: %w", err)
	}
	// A killed process may have left half a line: cut it, so the next
	// event starts a line of its own (ReadJournal skipped it as the last).
	if err := cutPartialLine(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("usage journal: %w", err)
	}
	cfg.Usage.SetJournal(f)
	if !fromJournal {
		cfg.Usage.WriteBase()
	}
	return f, nil
}

// fillUsage copies the recorder's split and its cost into the metadata.
func fillUsage(meta *artifact.Metadata, cfg Config) {
	if cfg.Usage == nil {
		return
	}
	meta.UsageByModel = cfg.Usage.Snapshot()
	meta.Cost = cfg.Prices.Apply(meta.UsageByModel)
}

// writeManifest keeps run_manifest.json beside the metadata it derives from.
func writeManifest(dir string, meta *artifact.Metadata, cfg Config, info env.Info) error {
	l := env.LimitsOf(info, cfg.MaxTurns)
	return artifact.WriteJSONAtomic(filepath.Join(dir, artifact.ManifestFile), artifact.ManifestFor(meta, l.MaxTurns, l.ToolBudget))
}

// resolvedConfig is the configuration in force for the run; nil when the
// environment is not registered (a library user's own), so metadata
// carries only what was given.
func resolvedConfig(cfg Config, id string) env.ConfigValues {
	if cfg.Resolved != nil {
		return maps.Clone(cfg.Resolved)
	}
	c, err := env.Default.Configure(id, cfg.Params)
	if err != nil {
		return nil
	}
	return c.Values
}

func newMetadata(cfg Config, info env.Info, rubric string) *artifact.Metadata {
	sampling, _ := json.Marshal(cfg.Sampling)
	eff := cfg.EffectiveModel
	if eff == "" {
		eff = cfg.Model
	}
	var sent json.RawMessage
	if _, builtin := cfg.Client.(llm.Builtin); !builtin {
		sent, _ = json.Marshal(cfg.Sampling.Sent(eff))
	}
	return &artifact.Metadata{
		RunID:          NewRunID(time.Now()),
		Environment:    info.ID,
		EnvVersion:     info.Version,
		Rubric:         rubric,
		Model:          cfg.Model,
		EffectiveModel: eff,
		BaseURL:        redactURL(cfg.BaseURL),
		Dataset:        cfg.Dataset.Info().ID,
		DatasetRev:     cfg.Dataset.Info().Revision,
		DatasetRows:    cfg.Dataset.Len(),
		Split:          cfg.Dataset.Info().Split,
		Rollouts:       cfg.Rollouts,
		Seed:           cfg.Seed,
		Shard:          cfg.Shard.String(),
		Sampling:       sampling,
		SamplingSent:   sent,
		Concurrency:    cfg.Concurrency,
		MaxConsecErr:   cfg.MaxConsecutiveErrors,
		Params:         maps.Clone(cfg.Params),
		Config:         resolvedConfig(cfg, info.ID),
		Verifiers:      maps.Clone(info.Verifiers),
		SolvedWhen:     info.SolvedWhen,
		CoreMetrics:    info.CoreMetrics,
		Launch:         cfg.Launch,
		Limits:         new(env.LimitsOf(info, cfg.MaxTurns)),
		GitCommit:      version.GitCommit(),
		SvbenchVersion: version.Version,
		GoVersion:      version.Go(),
		Started:        time.Now().UTC(),
	}
}

// WithSystemPrompt returns the prompt with its system message replaced by
// system (or one prepended when there is none). The input is not modified.
func WithSystemPrompt(prompt []env.Message, system string) []env.Message {
	out := make([]env.Message, 0, len(prompt)+1)
	replaced := false
	for _, m := range prompt {
		if m.Role == env.RoleSystem {
			if replaced {
				continue
			}
			m.Content, replaced = system, true
		}
		out = append(out, m)
	}
	if !replaced {
		out = append([]env.Message{{Role: env.RoleSystem, Content: system}}, out...)
	}
	return out
}

var runIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// CheckRunID accepts ids usable as one directory name on every OS.
func CheckRunID(id string) error {
	if !runIDPattern.MatchString(id) {
		return fmt.Errorf("--run-id %q: use 1–128 letters, digits, '.', '_' or '-', starting with a letter or digit", id)
	}
	return nil
}

// NewRunID is a sortable, collision-resistant run id.
func NewRunID(t time.Time) string {
	return fmt.Sprintf("%s-%04x", t.UTC().Format("20060102T150405Z"), rand.IntN(1<<16))
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// safeName turns a model name into a directory name.
func safeName(s string) string {
	s = strings.ReplaceAll(s, "/", "_")
	s = unsafeChars.ReplaceAllString(s, "-")
	if s == "" {
		return "model"
	}
	return s
}

// redactURL drops user info and query strings, where keys sometimes hide.
func redactURL(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		rest := u[i+3:]
		if at := strings.LastIndex(strings.SplitN(rest, "/", 2)[0], "@"); at >= 0 {
			rest = rest[at+1:]
		}
		u = u[:i+3] + rest
	}
	if q := strings.IndexAny(u, "?#"); q >= 0 {
		u = u[:q]
	}
	return u
}
