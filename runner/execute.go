package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/base/clip"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
)

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
	// rowBufs hold rows being encoded: one buffer per worker in flight,
	// so a row and its newline are encoded in place (json.Marshal's exact
	// copy, then the newline appended, copied every row twice).
	rowBufs sync.Pool
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
	buf, _ := r.rowBufs.Get().(*bytes.Buffer)
	if buf == nil {
		buf = new(bytes.Buffer)
	}
	defer func() { buf.Reset(); r.rowBufs.Put(buf) }()
	// Encode writes what json.Marshal writes, and the newline.
	err := json.NewEncoder(buf).Encode(res)
	r.mu.Lock()
	defer r.mu.Unlock()
	if err == nil {
		// One write per row: a killed process loses at most the row being
		// written, and the reader ignores an unterminated tail.
		_, err = r.out.Write(buf.Bytes())
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
	var row []byte
	if r.cfg.Written != nil {
		// Written keeps its row: a copy, without the newline.
		row = bytes.Clone(buf.Bytes()[:buf.Len()-1])
	}
	return line, row
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
