package runner

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
)

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
	if want := resolvedConfig(cfg, info.ID).Text(); want != nil {
		have := meta.Conditions()
		for _, k := range env.ChangedText(have, want) {
			diffs = append(diffs, fmt.Sprintf("parameter %s %s ≠ %s", k, env.ShowText(have[k]), env.ShowText(want[k])))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("cannot resume %s: %s (pass the same --env, --model, --dataset and --rubric as the original run)", meta.RunID, strings.Join(diffs, "; "))
	}
	return nil
}
