// Package runner evaluates a model on an environment: it schedules
// (example, rollout) jobs over a bounded pool of workers, appends every result
// to results.jsonl as soon as it is scored, keeps metadata.json current, and
// resumes a stopped run without duplicating or dropping a pair.
package runner

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/base/clip"
	"github.com/svbench/svbench/base/version"
	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/llm/usage"
)

// Shard selects a deterministic slice of a run: every Count-th selected
// example starting at Index.
type Shard struct {
	Index, Count int
}

// String renders "i/n", or "" for an unsharded run.
func (s Shard) String() string {
	if s.Count <= 1 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// ParseShard reads "i/n".
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	var sh Shard
	if _, err := fmt.Sscanf(s, "%d/%d", &sh.Index, &sh.Count); err != nil || sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
		return Shard{}, fmt.Errorf("--shard %q: want i/n with 0 <= i < n", s)
	}
	return sh, nil
}

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
	// configuration in force (env.Configured.Resolved), recorded in
	// metadata.json. A caller that did not decode the parameters itself
	// leaves Resolved nil and the registry resolves Params.
	Params   map[string]string
	Resolved map[string]string

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

// startSegment records this session of the run and where its model is
// served, and returns its index. A resumed run may be served elsewhere (a
// vLLM server restarted on another port): the endpoint is not part of what
// the numbers mean, so the new one is recorded, becomes the run's current
// endpoint for the next --resume, and earlier segments keep theirs.
func startSegment(meta *artifact.Metadata, cfg Config) int {
	if len(meta.Segments) == 0 && cfg.ResumeDir != "" {
		// A run from before segments: its first session, as recorded.
		meta.Segments = append(meta.Segments, artifact.Segment{Started: meta.Started, BaseURL: meta.BaseURL,
			APIKeyEnv: meta.Launch.APIKeyEnv, EndpointsFile: meta.Launch.EndpointsFile})
	}
	seg := artifact.Segment{Started: time.Now().UTC(), BaseURL: redactURL(cfg.BaseURL),
		APIKeyEnv: cfg.Launch.APIKeyEnv, EndpointsFile: cfg.Launch.EndpointsFile}
	if cfg.ResumeDir != "" {
		meta.BaseURL = seg.BaseURL
		meta.Launch.APIKeyEnv, meta.Launch.EndpointsFile = cfg.Launch.APIKeyEnv, cfg.Launch.EndpointsFile
		meta.Launch.BaseURLFromEnv = cfg.Launch.BaseURLFromEnv
	}
	meta.Segments = append(meta.Segments, seg)
	return len(meta.Segments) - 1
}

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

// cutPartialLine truncates f after its last newline.
func cutPartialLine(f *os.File) error {
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return err
	}
	const chunk = 64 << 10
	buf := make([]byte, chunk)
	end := st.Size()
	for end > 0 {
		off := max(0, end-chunk)
		n, err := f.ReadAt(buf[:end-off], off)
		if err != nil && n < int(end-off) {
			return err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			end = off + int64(i) + 1
			break
		}
		end = off
	}
	if end == st.Size() {
		return nil
	}
	return f.Truncate(end)
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
	turns := cfg.MaxTurns
	if turns <= 0 {
		turns = info.MaxTurns
	}
	return artifact.WriteJSONAtomic(filepath.Join(dir, artifact.ManifestFile), artifact.ManifestFor(meta, turns, info.ToolBudget))
}

type run struct {
	cfg     Config
	meta    *artifact.Metadata
	dir     string
	out     *os.File
	agg     *aggregate
	rubric  string
	segment int // this session's index in meta.Segments
	started time.Time
	// priorS is the duration of earlier segments of a resumed run: every
	// checkpoint writes priorS plus this segment's time, never a sum of
	// checkpoints.
	priorS float64

	mu          sync.Mutex
	consecutive int
	lastErr     string
	// shownUnanswered: the first unanswered row is said in the terminal.
	shownUnanswered bool
	shownErrs       map[string]bool
	writeErr        error
	// written counts the rows this session wrote (Config.Written's line).
	written int
}

// maxShownErrors bounds how many distinct model errors a run prints.
const maxShownErrors = 5

func (r *run) execute(ctx context.Context, jobs []job, total, already int) (status, detail string, err error) {
	r.started = time.Now()
	r.mu.Lock()
	r.priorS = r.meta.DurationS
	r.mu.Unlock()
	runCtx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)

	prog := r.cfg.Progress
	if prog == nil {
		prog = nopProgress{}
	}
	prog.Start(total, already)
	defer prog.Finish()

	queue := make(chan job)
	var wg sync.WaitGroup
	for range min(r.cfg.Concurrency, max(len(jobs), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range queue {
				res, modelFailed := r.one(runCtx, j)
				if runCtx.Err() != nil && res.Error != "" {
					// Cancelled mid-flight: not a result, redone on resume.
					continue
				}
				if line, row := r.record(res, modelFailed, cancel); line > 0 && r.cfg.Written != nil {
					r.cfg.Written(line, row)
				}
				prog.Add(res.Reward, res.Error != "")
			}
		}()
	}

	stopCheckpoints := make(chan struct{})
	var cpWG sync.WaitGroup
	cpWG.Add(1)
	go func() {
		defer cpWG.Done()
		every := r.cfg.CheckpointEvery
		if every <= 0 {
			every = 5 * time.Second
		}
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-stopCheckpoints:
				return
			case <-t.C:
				r.checkpoint()
			}
		}
	}()
feed:
	for _, j := range jobs {
		select {
		case queue <- j:
		case <-runCtx.Done():
			break feed
		}
	}
	close(queue)
	wg.Wait()
	close(stopCheckpoints)
	cpWG.Wait()

	cause := context.Cause(runCtx)
	switch {
	case r.writeErr != nil:
		return artifact.StatusFailed, r.writeErr.Error(), r.writeErr
	case errors.Is(cause, errTooManyErrors):
		d := fmt.Sprintf("stopped after %d consecutive model errors; the last: %s", r.cfg.MaxConsecutiveErrors, clip.Bytes(r.lastErr, 600, clip.Ellipsis))
		return artifact.StatusEarlyStop, d, fmt.Errorf("%s; fix the endpoint and resume with --resume %s (if the server moved, add -b NEW_BASE_URL or --endpoints FILE; the model, sampling and data stay as they were)", d, r.dir)
	case ctx.Err() != nil:
		return artifact.StatusInterrupted, "interrupted", fmt.Errorf("%w; resume with --resume %s", ErrInterrupted, r.dir)
	}
	return artifact.StatusCompleted, "", nil
}

var errTooManyErrors = errors.New("too many consecutive model errors")

// one plays and scores one (example, rollout) pair.
func (r *run) one(ctx context.Context, j job) (artifact.Result, bool) {
	ex, err := r.cfg.Dataset.Example(j.index)
	res := artifact.Result{
		RunID: r.meta.RunID, Index: j.index, ExampleID: ex.ID, Rollout: j.rollout, Model: r.cfg.Model,
		Prompt: ex.Prompt, Answer: ex.Answer, Meta: ex.Meta, Rubric: r.rubric, Time: time.Now().UTC(),
		Segment: r.segment,
	}
	if err != nil {
		res.ScoreError = err.Error()
		return res, false
	}
	if r.cfg.SystemPrompt != "" {
		ex.Prompt = WithSystemPrompt(ex.Prompt, r.cfg.SystemPrompt)
		res.Prompt = ex.Prompt
	}
	// The rollout index reaches the client so a response cache keeps the
	// rollouts of one example apart.
	ctx = llm.WithRollout(ctx, j.rollout)
	ro, err := RunEpisode(ctx, r.cfg.Client, r.cfg.Env, ex, EpisodeConfig{Model: r.cfg.EffectiveModel, Sampling: r.cfg.Sampling, MaxTurns: r.cfg.MaxTurns})
	res.Completion = ro.Completion
	res.FinalText = ro.FinalText()
	res.ToolCalls = ro.ToolCalls
	res.Turns = ro.Turns
	res.StopReason = ro.StopReason
	res.Usage = ro.Usage
	res.LatencyMS = float64(ro.Duration.Microseconds()) / 1000
	var me *ModelError
	if errors.As(err, &me) {
		res.Error = err.Error()
		// The row is scored as its transcript stands, no answer by the
		// environment's rule, so a run that ends with it (an isolated
		// failure, or an early stop) counts it as an attempted row without
		// an answer instead of leaving it out of the metrics. It keeps its
		// error: --resume drops and retries it. A call cancelled with the
		// run is not a result and is not scored.
		if ctx.Err() == nil {
			r.score(ctx, ex, ro, &res)
		}
		redactRow(ctx, r.cfg.Env, ex, ro, &res)
		return res, true
	}
	var ue *UnansweredError
	switch {
	case errors.As(err, &ue):
		res.Unanswered = ue.Err.Error()
	case err != nil:
		// The environment failed (bad fixture, verifier error): the row is
		// kept and scored as far as possible, and the run goes on.
		res.ScoreError = err.Error()
	}
	r.score(ctx, ex, ro, &res)
	redactRow(ctx, r.cfg.Env, ex, ro, &res)
	return res, false
}

// score scores the rollout into res; Solved is set only when scoring
// succeeded, so a row with Solved set has the environment's verdict.
func (r *run) score(ctx context.Context, ex env.Example, ro *env.Rollout, res *artifact.Result) {
	sc, serr := r.cfg.Env.Score(ctx, ex, ro, r.rubric)
	if serr != nil {
		res.ScoreError = strings.TrimPrefix(res.ScoreError+"; "+serr.Error(), "; ")
	}
	res.Reward, res.Components, res.Weights, res.Parsed = sc.Total, sc.Components, sc.Weights, sc.Parsed
	if serr == nil {
		solved := sc.Solved
		res.Solved = &solved
	}
}

// redactRow lets an environment that implements env.Redactor replace text
// that must not reach disk before the row is written; it runs on every
// path, failed model calls included, since a transcript can turn unsafe
// before the call that failed.
func redactRow(ctx context.Context, e env.Environment, ex env.Example, ro *env.Rollout, res *artifact.Result) {
	rd, ok := e.(env.Redactor)
	if !ok || ro == nil {
		return
	}
	if p, c, did := rd.Redact(context.WithoutCancel(ctx), ex, ro); did {
		res.Prompt, res.Completion, res.FinalText = p, c, env.LastAssistantText(c)
	}
}

// record writes res and returns its ordinal among this session's rows and
// its JSON, or 0 when it could not be written.
func (r *run) record(res artifact.Result, modelFailed bool, cancel context.CancelCauseFunc) (int, []byte) {
	b, err := json.Marshal(res)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		// One write per row: a killed process loses at most the row being
		// written, and the reader ignores an unterminated tail.
		_, err = r.out.Write(append(b, '\n'))
	}
	if err != nil && r.writeErr == nil {
		r.writeErr = fmt.Errorf("write results: %w", err)
		cancel(r.writeErr)
		return 0, nil
	}
	if err != nil {
		return 0, nil
	}
	r.written++
	line := r.written
	r.agg.add(&res)
	if res.Unanswered != "" && !r.shownUnanswered {
		r.shownUnanswered = true
		r.cfg.Log.Warn("row unanswered (recorded, scored as no answer; the run goes on)", "example", res.Index, "rollout", res.Rollout, "err", clip.Bytes(res.Unanswered, 600, clip.Ellipsis))
	}
	if modelFailed {
		r.consecutive++
		r.lastErr = res.Error
		// The endpoint's own words belong in the terminal, not only in
		// results.jsonl: each distinct error once, a few at most.
		if r.shownErrs == nil {
			r.shownErrs = map[string]bool{}
		}
		if !r.shownErrs[res.Error] && len(r.shownErrs) < maxShownErrors {
			r.shownErrs[res.Error] = true
			r.cfg.Log.Warn("model call failed", "example", res.Index, "rollout", res.Rollout, "err", clip.Bytes(res.Error, 600, clip.Ellipsis))
		}
		if r.cfg.MaxConsecutiveErrors > 0 && r.consecutive >= r.cfg.MaxConsecutiveErrors {
			cancel(errTooManyErrors)
		}
	} else {
		r.consecutive = 0
	}
	return line, b
}

// checkpoint refreshes metadata.json so a watcher (or a crash) sees progress.
func (r *run) checkpoint() {
	r.mu.Lock()
	r.agg.fill(r.meta)
	fillUsage(r.meta, r.cfg)
	r.meta.DurationS = r.priorS + time.Since(r.started).Seconds()
	cp := *r.meta
	r.mu.Unlock()
	if err := artifact.WriteJSONAtomic(filepath.Join(r.dir, artifact.MetadataFile), &cp); err != nil {
		r.cfg.Log.Warn("metadata checkpoint failed", "err", err)
	}
}

// selectExamples shuffles dataset indices with the seed, keeps the first n
// and then this shard's share of them.
// PlannedExamples is how many examples a run of n examples (0 = all) from
// a dataset of rows plays in shard sh: the length of what selectExamples
// returns, without shuffling.
func PlannedExamples(rows, n int, sh Shard) int {
	if n > 0 && n < rows {
		rows = n
	}
	if sh.Count <= 1 {
		return rows
	}
	if rows <= sh.Index {
		return 0
	}
	return (rows-sh.Index-1)/sh.Count + 1
}

func selectExamples(rows, n int, seed uint64, sh Shard, log *slog.Logger) []int {
	perm := dataset.Permutation(rows, seed)
	if n > rows {
		// One warning, through the run's logger (the CLI's goes to stderr).
		log.Warn(fmt.Sprintf("-n %d is larger than the dataset (%d rows); evaluating all %d", n, rows, rows))
	}
	if n > 0 && n < rows {
		perm = perm[:n]
	}
	if sh.Count <= 1 {
		return perm
	}
	var out []int
	for i, idx := range perm {
		if i%sh.Count == sh.Index {
			out = append(out, idx)
		}
	}
	return out
}

// compactResults rewrites results.jsonl keeping the last successful row of
// each pair (failed rows are retried, a torn last line is dropped), and
// returns the pairs already done.
func compactResults(ctx context.Context, path string, agg *aggregate) (map[artifact.Key]bool, error) {
	done := map[artifact.Key]bool{}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return done, nil
	}
	keep := map[artifact.Key]artifact.Result{}
	var order []artifact.Key
	err := artifact.EachResult(path, func(res *artifact.Result) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%w while reading the finished rows: %w", ErrInterrupted, err)
		}
		if res.Error != "" {
			return nil
		}
		k := res.Key()
		if _, seen := keep[k]; !seen {
			order = append(order, k)
		}
		keep[k] = *res
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("resume: %w", err)
	}
	var sb strings.Builder
	for _, k := range order {
		res := keep[k]
		b, err := json.Marshal(res)
		if err != nil {
			return nil, err
		}
		sb.Write(b)
		sb.WriteByte('\n')
		done[k] = true
		agg.add(&res)
	}
	if err := artifact.WriteFileAtomic(path, []byte(sb.String())); err != nil {
		return nil, fmt.Errorf("resume: rewrite results: %w", err)
	}
	return done, nil
}

func checkResumable(meta *artifact.Metadata, cfg Config, info env.Info, rubric string) error {
	var diffs []string
	if meta.Environment != info.ID {
		diffs = append(diffs, fmt.Sprintf("environment %s ≠ %s", meta.Environment, info.ID))
	}
	if meta.Model != cfg.Model {
		diffs = append(diffs, fmt.Sprintf("model %s ≠ %s", meta.Model, cfg.Model))
	}
	if rev := cfg.Dataset.Info().Revision; meta.DatasetRev != rev {
		diffs = append(diffs, fmt.Sprintf("dataset revision %s ≠ %s", meta.DatasetRev, rev))
	}
	if meta.Rubric != rubric {
		diffs = append(diffs, fmt.Sprintf("rubric %s ≠ %s", meta.Rubric, rubric))
	}
	// The endpoint may move; the model it serves may not (an endpoints
	// file that maps the alias to another model changes the numbers).
	if eff := cmp.Or(cfg.EffectiveModel, cfg.Model); meta.EffectiveModel != "" && eff != meta.EffectiveModel {
		diffs = append(diffs, fmt.Sprintf("served model %s ≠ %s", meta.EffectiveModel, eff))
	}
	if want := resolvedConfig(cfg, info.ID); want != nil {
		have := meta.Conditions()
		for _, k := range slices.Sorted(maps.Keys(unionKeys(have, want))) {
			if have[k] != want[k] {
				diffs = append(diffs, fmt.Sprintf("parameter %s %s ≠ %s", k, orUnset(have[k]), orUnset(want[k])))
			}
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("cannot resume %s: %s (pass the same --env, --model, --dataset and --rubric as the original run)", meta.RunID, strings.Join(diffs, "; "))
	}
	return nil
}

func unionKeys(a, b map[string]string) map[string]bool {
	out := make(map[string]bool, len(a)+len(b))
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func orUnset(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}

// resolvedConfig is the configuration in force for the run; nil when the
// environment is not registered (a library user's own), so metadata
// carries only what was given.
func resolvedConfig(cfg Config, id string) map[string]string {
	if cfg.Resolved != nil {
		return maps.Clone(cfg.Resolved)
	}
	return env.Default.Resolved(id, cfg.Params)
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

// aggregate keeps running totals for metadata without holding rows.
type aggregate struct {
	completed, errors int
	unanswered        int
	// scoredErrors are error rows the runner scored as no answer.
	scoredErrors int
	rewardSum    float64
	compSum      map[string]float64
	compN        map[string]int
	usage        env.Usage
	// perExample[index] = (rollouts, passes) for pass@k.
	perExample map[int]*[2]int
}

func newAggregate() *aggregate {
	return &aggregate{compSum: map[string]float64{}, compN: map[string]int{}, perExample: map[int]*[2]int{}}
}

func (a *aggregate) add(r *artifact.Result) {
	a.usage.Add(r.Usage)
	if r.Error != "" {
		a.errors++
		if !r.FailedButScored() {
			return
		}
		// Scored as no answer: it counts in the averages as the reports
		// count it, and stays an error for --resume to retry.
		a.scoredErrors++
	} else {
		a.completed++
	}
	if r.Unanswered != "" {
		a.unanswered++
	}
	a.rewardSum += r.Reward
	for k, v := range r.Components {
		a.compSum[k] += v
		a.compN[k]++
	}
	pe := a.perExample[r.Index]
	if pe == nil {
		pe = &[2]int{}
		a.perExample[r.Index] = pe
	}
	pe[0]++
	if Passed(r) {
		pe[1]++
	}
}

// Passed decides whether a rollout solved its example, for pass@k, by the
// environment's own verdict (env.Info.SolvedWhen). A row without one (an
// older run, a scoring error) did not pass: guessing from components once
// counted every schema-valid E2 answer as solved.
func Passed(r *artifact.Result) bool {
	return r.Solved != nil && *r.Solved
}

func (a *aggregate) fill(m *artifact.Metadata) {
	m.Completed, m.Errors, m.Usage = a.completed, a.errors, a.usage
	m.Unanswered = a.unanswered
	m.AvgReward = 0
	if n := a.completed + a.scoredErrors; n > 0 {
		m.AvgReward = a.rewardSum / float64(n)
	}
	m.AvgComponents = map[string]float64{}
	for k, s := range a.compSum {
		m.AvgComponents[k] = s / float64(a.compN[k])
	}
	m.PassAtK = nil
	if m.Rollouts > 1 {
		m.PassAtK = passAtK(a.perExample, m.Rollouts)
	}
}

// passAtK uses the unbiased estimator 1 - C(n-c, k)/C(n, k) averaged over
// examples, for k = 1, 2, 4, … up to the rollouts per example.
func passAtK(per map[int]*[2]int, rollouts int) map[string]float64 {
	var ks []int
	for k := 1; k < rollouts; k *= 2 {
		ks = append(ks, k)
	}
	ks = append(ks, rollouts)
	out := map[string]float64{}
	for _, k := range ks {
		sum, n := 0.0, 0
		for _, pe := range per {
			total, pass := pe[0], pe[1]
			if total < k {
				continue
			}
			sum += 1 - comboRatio(total-pass, total, k)
			n++
		}
		if n > 0 {
			out[fmt.Sprintf("pass@%d", k)] = sum / float64(n)
		}
	}
	return out
}

// comboRatio is C(a, k)/C(n, k) computed as a product to stay in range.
func comboRatio(a, n, k int) float64 {
	if a < k {
		return 0
	}
	r := 1.0
	for i := range k {
		r *= float64(a-i) / float64(n-i)
	}
	return r
}
