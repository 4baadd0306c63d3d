package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/ingest"
	"github.com/svbench/svbench/report"
)

// trainerRun is a trainer's rollouts re-scored by svbench.
type trainerRun struct {
	Report *report.Report
	Meta   *artifact.Metadata
	Rows   []artifact.Result
	Lines  []int
}

// loadTrainerRun re-scores a trainer's results (a directory holding
// results.jsonl and, optionally, run_manifest.json, or the file itself) and
// builds its report. envName may be empty when the manifest or the rows
// name the environment.
func loadTrainerRun(ctx context.Context, input, envName, rubric string, opts report.Options) (*trainerRun, error) {
	path := artifact.ResultsPath(input)
	dir := filepath.Dir(path)
	man, err := ingest.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if envName == "" && man != nil {
		envName = man.EnvironmentID
	}
	if envName == "" {
		envName = envFromRows(path)
	}
	if envName == "" {
		return nil, usagef("%s: no --env given and neither %s nor the rows name the environment; pass --env", path, ingest.ManifestFile)
	}
	e, err := newEnv(envName, nil, nil)
	if err != nil {
		return nil, err
	}
	info := e.Info()
	if rubric == "" {
		rubric = "reference"
	}
	if !contains(info.Rubrics, rubric) {
		return nil, usagef("--rubric %q: environment %s has rubrics %v", rubric, info.ID, info.Rubrics)
	}
	rows, lines, err := ingest.LoadRun(ctx, path, e, rubric)
	if err != nil {
		return nil, err
	}
	meta := &artifact.Metadata{Environment: info.ID, Rubric: rubric, Status: artifact.StatusCompleted, Source: "trainer:unknown", Dataset: path}
	if man != nil {
		meta = ingest.ManifestMetadata(man, info.ID, rubric)
	}
	if meta.RunID == "" && len(rows) > 0 && rows[0].Trainer != nil {
		meta.RunID = rows[0].Trainer.RunID
	}
	if meta.Model == "" {
		meta.Model = "unknown"
	}
	meta.EnvVersion = orDefault(meta.EnvVersion, info.Version)
	meta.SolvedWhen = info.SolvedWhen
	meta.RubricInfo = env.RubricInfoOf(e, rubric)
	meta.Completed = len(rows)
	rep, err := report.Build(info.ID, rows, meta, opts)
	if rep != nil {
		rep.Summary["trainer_agreement"] = agreement(rows)
		rep.Markdown += trainerSection(rows)
		if lab := labelCounts(rows); len(lab) > 0 {
			rep.Summary["predicted_labels"] = lab
		}
		if serr := addTraining(rep, dir); serr != nil {
			return nil, serr
		}
	}
	if err != nil {
		return &trainerRun{Report: rep, Meta: meta, Rows: rows, Lines: lines}, err
	}
	return &trainerRun{Report: rep, Meta: meta, Rows: rows, Lines: lines}, nil
}

// envFromRows reads env_name ("intertwine/sv-env-network-logs") from the
// first row that has one.
func envFromRows(path string) string {
	name := ""
	_ = eachTrainerRow(path, func(r *ingest.Row) bool {
		if r.Trainer.EnvName != "" {
			name = r.Trainer.EnvName
			if i := strings.LastIndex(name, "/"); i >= 0 {
				name = name[i+1:]
			}
			return false
		}
		return true
	})
	if _, err := env.Default.Resolve(name); err != nil {
		return ""
	}
	return name
}

// agreementSummary says how well svbench reproduced the trainer's rewards.
type agreementSummary struct {
	Rows         int     `json:"rows"`
	WithRecorded int     `json:"with_recorded_reward"`
	Reproduced   int     `json:"reproduced"`
	Differing    int     `json:"differing"`
	Unverifiable int     `json:"unverifiable"`
	Unparseable  int     `json:"score_errors"`
	MaxAbsDelta  float64 `json:"max_abs_delta"`
	// RecordedMean and RescoredMean are over rows that have both.
	RecordedMean float64 `json:"recorded_mean_reward"`
	RescoredMean float64 `json:"rescored_mean_reward"`
	Tolerance    float64 `json:"tolerance"`
}

func agreement(rows []artifact.Result) agreementSummary {
	s := agreementSummary{Rows: len(rows), Tolerance: ingest.RewardTolerance}
	var rec, res float64
	for i := range rows {
		r := &rows[i]
		switch {
		case r.Unverifiable != "":
			s.Unverifiable++
		case r.ScoreError != "":
			s.Unparseable++
		}
		if r.Trainer != nil && r.Trainer.Reward != nil {
			s.WithRecorded++
		}
		a := ingest.Compare(r)
		if a == nil {
			continue
		}
		rec += a.Recorded
		res += a.Rescored
		if a.Reproduce {
			s.Reproduced++
		} else {
			s.Differing++
		}
		s.MaxAbsDelta = math.Max(s.MaxAbsDelta, math.Abs(a.Delta))
	}
	if n := s.Reproduced + s.Differing; n > 0 {
		s.RecordedMean, s.RescoredMean = rec/float64(n), res/float64(n)
	}
	return s
}

func (s agreementSummary) String() string {
	return fmt.Sprintf("%d/%d rows reproduce the recorded reward (max |Δ| %.3g); %d differ, %d cannot be re-verified here, %d failed to score",
		s.Reproduced, s.Reproduced+s.Differing, s.MaxAbsDelta, s.Differing, s.Unverifiable, s.Unparseable)
}

// eachTrainerRow decodes rows until fn returns false; undecodable rows are
// skipped (LoadRun reports them).
func eachTrainerRow(path string, fn func(*ingest.Row) bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	errStop := errors.New("stop")
	err = artifact.EachRow(f, path, artifact.ReadOptions{MaxRowBytes: dataset.MaxLine, TooLarge: func(int, int64) {}, BadRow: func(int, error) error { return nil }},
		ingest.Decode, func(_ int, r *ingest.Row) error {
			if !fn(r) {
				return errStop
			}
			return nil
		})
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// addTraining adds the trainer's own step metrics (metrics_raw.json beside
// the rows) to the report: curves, and summary.json "training".
func addTraining(rep *report.Report, dir string) error {
	sm, err := ingest.ReadStepMetrics(dir)
	if err != nil || sm == nil {
		return err
	}
	sum, charts, md, ok := report.Training(sm)
	if !ok {
		return nil
	}
	rep.Summary["training"] = sum
	rep.Charts = append(rep.Charts, charts...)
	rep.Markdown += md
	v := fmt.Sprintf("step %d %.4f → step %d %.4f (best %.4f at step %d)", sum.First.Step, sum.First.Reward, sum.Last.Step, sum.Last.Reward, sum.Best.Reward, sum.Best.Step)
	rep.Headline = append(rep.Headline, report.Stat{Name: "training reward", Value: v})
	if e := sum.Eval; e != nil {
		rep.Headline = append(rep.Headline, report.Stat{Name: "trainer eval", Value: fmt.Sprintf("%.4f → %.4f (Δ %+.4f)", e.Before, e.After, e.Delta)})
	}
	return nil
}

// labelCounts counts the parsed labels of rows that have one (classification
// environments), "" as "(none)".
func labelCounts(rows []artifact.Result) map[string]int {
	out := map[string]int{}
	for i := range rows {
		l, ok := rows[i].Parsed["predicted_label"].(string)
		if !ok {
			continue
		}
		if l == "" {
			l = "(none)"
		}
		out[l]++
	}
	return out
}

// trainerSection says what re-scoring a trainer's rows did: the text
// rebuilt, components kept, the executable re-score beside the recorded
// reward, and the answers' label distribution.
func trainerSection(rows []artifact.Result) string {
	var rebuilt, kept, execN int
	var execSum, recSum float64
	firstRebuilt, firstKept := "", ""
	for i := range rows {
		tr := rows[i].Trainer
		if tr == nil {
			continue
		}
		if tr.Rebuilt != "" {
			rebuilt++
			firstRebuilt = cmpOr(firstRebuilt, tr.Rebuilt)
		}
		if tr.Kept != "" {
			kept++
			firstKept = cmpOr(firstKept, tr.Kept)
		}
		if tr.Executable != nil && tr.Reward != nil {
			execN++
			execSum += *tr.Executable
			recSum += *tr.Reward
		}
	}
	var b strings.Builder
	b.WriteString("\n## Trainer rows\n\n")
	fmt.Fprintf(&b, "- %s\n", agreement(rows))
	if rebuilt > 0 {
		fmt.Fprintf(&b, "- %d row(s) re-scored on the text the environment saw, rebuilt from the export (e.g. %s).\n", rebuilt, report.EscapeCell(firstRebuilt))
	}
	if kept > 0 {
		fmt.Fprintf(&b, "- %d row(s) keep a recorded component: %s.\n", kept, report.EscapeCell(firstKept))
	}
	if execN > 0 {
		fmt.Fprintf(&b, "- mean recorded reward %.4f; mean executable re-score %.4f (n=%d).\n", recSum/float64(execN), execSum/float64(execN), execN)
	}
	if lab := labelCounts(rows); len(lab) > 0 {
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(lab)) {
			parts = append(parts, fmt.Sprintf("%s %d", k, lab[k]))
		}
		fmt.Fprintf(&b, "- answers' labels: %s.\n", strings.Join(parts, ", "))
	}
	return b.String()
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
