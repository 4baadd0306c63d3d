// Package runner evaluates a model on an environment: it schedules
// (example, rollout) jobs over a bounded pool of workers, appends every result
// to results.jsonl as soon as it is scored, keeps metadata.json current, and
// resumes a stopped run without duplicating or dropping a pair.
package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/llm/usage"
)

// Config is one evaluation.
type Config struct {
	// CheckpointEvery is how often metadata.json is refreshed during a run
	// (zero: every 5 s).
	CheckpointEvery time.Duration

	Env     env.Environment
	Dataset Examples
	Client  llm.Client
	// Model is the name the user gave (alias or builtin:<name>);
	// EffectiveModel is what the endpoint is asked for.
	Model          string
	EffectiveModel string
	BaseURL        string
	Sampling       llm.Sampling
	Rubric         string
	MaxTurns       int
	// Params are the environment parameters as given; Resolved is the
	// configuration in force (env.Configured.Values), recorded in
	// metadata.json. A caller that did not decode the parameters itself
	// leaves Resolved nil and the registry resolves Params.
	Params   map[string]string
	Resolved env.ConfigValues

	// N examples (0 = all; more than the dataset is clamped with a warning).
	N           int
	Rollouts    int
	Concurrency int
	Seed        uint64
	Shard       Shard
	// MaxConsecutiveErrors stops the run after that many model-call failures
	// in a row; 0 disables.
	MaxConsecutiveErrors int

	// OutDir is the root for new runs (runs go to OutDir/evals/<env>--<model>/<id>).
	OutDir string
	// ResumeDir continues an existing run instead of starting one.
	ResumeDir string
	// RunID names a new run (default: a timestamp and a random suffix).
	RunID string
	// SystemPrompt, when set, replaces the environment's system message in
	// every prompt (prompt baselines); its origin goes into Launch.
	SystemPrompt string
	// Launch is recorded in metadata for --resume.
	Launch artifact.Launch
	// Usage, when set, has counted every model call the run's clients make
	// (the CLI wraps the policy and judge clients with it); the runner
	// restores it from a resumed run's metadata and writes its split by role
	// and model into metadata.json. Prices, when set, price it.
	Usage  *usage.Recorder
	Prices *usage.Prices

	Progress Progress
	Log      *slog.Logger

	// Written, when set, receives each results row this run writes (its
	// JSON, without the newline) and its ordinal among them, 1 for the
	// first: the line it holds in results.jsonl when the run is not a
	// resume. It is called after the write, outside the run's lock, from
	// the worker that wrote the row, so calls run concurrently and out of
	// order; row is the callee's to keep. The CLI decodes rows for the
	// report here, while the run waits on the model, instead of reading
	// the file back after it.
	Written func(line int, row []byte)
}

// Outcome is what a run produced.
type Outcome struct {
	Dir      string
	Metadata *artifact.Metadata
}

// ErrInterrupted is returned when the context was cancelled; the run is
// resumable.
var ErrInterrupted = errors.New("run interrupted")

// job is one (example, rollout) pair.
type job struct {
	index   int
	rollout int
}

// MaxEpisodes is the most (example, rollout) episodes one run plans. A plan
// is held in memory before the first episode starts, and a run of more
// episodes than this is better split into shards (--shard i/n, joined by
// svbench merge) that run, fail and resume independently.
const MaxEpisodes = 1_000_000

// ErrTooManyEpisodes is wrapped by Episodes' error.
var ErrTooManyEpisodes = errors.New("too many episodes for one run")

// Episodes is examples × rollouts, refused when it is negative or more than
// MaxEpisodes; the product is never computed past that bound, so values
// from a flag or a file (math.MaxInt rollouts) cannot overflow it.
func Episodes(examples, rollouts int) (int, error) {
	if examples < 0 || rollouts < 0 {
		return 0, fmt.Errorf("%d examples × %d rollouts: counts cannot be negative", examples, rollouts)
	}
	if examples > 0 && rollouts > MaxEpisodes/examples {
		return 0, fmt.Errorf("%w: %d examples × %d rollouts per example is more than the %d episodes one run may plan; lower the examples (-n) or rollouts (-r), or split the examples over runs with --shard i/n and join them with svbench merge",
			ErrTooManyEpisodes, examples, rollouts, MaxEpisodes)
	}
	return examples * rollouts, nil
}

// planJobs lists the pairs still to play. It observes ctx, so an
// interrupt while a large plan is built stops the run there.
func planJobs(ctx context.Context, selected []int, rollouts int, done map[artifact.Key]bool) ([]job, error) {
	var jobs []job
	for i, idx := range selected {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("%w while planning: %w", ErrInterrupted, err)
			}
		}
		for r := range rollouts {
			if !done[artifact.Key{Index: idx, Rollout: r}] {
				jobs = append(jobs, job{idx, r})
			}
		}
	}
	return jobs, nil
}

// Run executes (or resumes) an evaluation.
func Run(ctx context.Context, cfg Config) (*Outcome, error) {
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Rollouts <= 0 {
		cfg.Rollouts = 1
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	info := cfg.Env.Info()
	rubric := cfg.Rubric
	if rubric == "" {
		rubric = info.DefaultRubric
	}

	var (
		dir  string
		meta *artifact.Metadata
		err  error
	)
	if cfg.ResumeDir != "" {
		dir = cfg.ResumeDir
		meta, err = artifact.ReadMetadata(dir)
		if err != nil {
			return nil, err
		}
		if err := checkResumable(meta, cfg, info, rubric); err != nil {
			return nil, err
		}
		if meta.RubricInfo == nil {
			meta.RubricInfo = env.RubricInfoOf(cfg.Env, rubric)
		}
		if meta.Config == nil {
			// A run recorded before metadata carried its configuration
			// records the one it resumes under (checked equal above).
			meta.Config = resolvedConfig(cfg, info.ID)
		}
		cfg.N, cfg.Seed, cfg.Rollouts = meta.NumExamples, meta.Seed, meta.Rollouts
		if cfg.Shard, err = ParseShard(meta.Shard); err != nil {
			return nil, err
		}
	}
	// The plan is checked before anything is written: a run that cannot be
	// planned leaves no directory behind to resume.
	selected := selectExamples(cfg.Dataset.Len(), cfg.N, cfg.Seed, cfg.Shard, cfg.Log)
	total, err := Episodes(len(selected), cfg.Rollouts)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w before it started: %w", ErrInterrupted, err)
	}
	if cfg.ResumeDir == "" {
		meta = newMetadata(cfg, info, rubric)
		meta.RubricInfo = env.RubricInfoOf(cfg.Env, rubric)
		if cfg.RunID != "" {
			if err := CheckRunID(cfg.RunID); err != nil {
				return nil, err
			}
			meta.RunID = cfg.RunID
		}
		dir = filepath.Join(cfg.OutDir, "evals", info.ID+"--"+safeName(cfg.Model), meta.RunID)
		if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
			return nil, fmt.Errorf("create run dir: %w", err)
		}
		// Mkdir, not MkdirAll: a run id already used must not mix two runs.
		if err := os.Mkdir(dir, 0o755); err != nil {
			if errors.Is(err, os.ErrExist) {
				return nil, fmt.Errorf("run directory %s already exists: continue it with --resume %s, or pick another --run-id", dir, dir)
			}
			return nil, fmt.Errorf("create run dir: %w", err)
		}
	}

	if cfg.ResumeDir == "" {
		meta.NumExamples = cfg.N
		if cfg.N <= 0 || cfg.N > cfg.Dataset.Len() {
			meta.NumExamples = cfg.Dataset.Len()
		}
	}

	segment := startSegment(meta, cfg)

	journal, err := openUsageJournal(dir, meta, cfg)
	if err != nil {
		return nil, err
	}
	if journal != nil {
		defer func() {
			cfg.Usage.SetJournal(nil)
			journal.Close()
		}()
	}

	agg := newAggregate()
	done, err := compactResults(ctx, filepath.Join(dir, artifact.ResultsFile), agg)
	if err != nil {
		return nil, err
	}
	jobs, err := planJobs(ctx, selected, cfg.Rollouts, done)
	if err != nil {
		return nil, err
	}

	f, err := os.OpenFile(filepath.Join(dir, artifact.ResultsFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open results: %w", err)
	}
	defer f.Close()

	meta.Status = artifact.StatusRunning
	meta.StatusDetail = ""
	meta.Finished = nil
	agg.fill(meta)
	fillUsage(meta, cfg)
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), meta); err != nil {
		return nil, err
	}

	if err := writeManifest(dir, meta, cfg, info); err != nil {
		return nil, err
	}
	r := &run{cfg: cfg, meta: meta, dir: dir, out: f, agg: agg, rubric: rubric, segment: segment}
	status, detail, runErr := r.execute(ctx, jobs, total, total-len(jobs))

	// Environments that build their verifiers lazily know their versions
	// only once an episode has started.
	if v := cfg.Env.Info().Verifiers; len(v) > 0 {
		meta.Verifiers = maps.Clone(v)
	}
	now := time.Now().UTC()
	meta.Finished = &now
	meta.DurationS = r.priorS + now.Sub(r.started).Seconds()
	meta.Status, meta.StatusDetail = status, detail
	agg.fill(meta)
	fillUsage(meta, cfg)
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), meta); err != nil {
		return nil, err
	}
	if err := writeManifest(dir, meta, cfg, info); err != nil {
		return nil, err
	}
	return &Outcome{Dir: dir, Metadata: meta}, runErr
}
