package cli

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"github.com/svbench/svbench/artifact"
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
// name the environment; rubric "" takes the one the rows record.
func loadTrainerRun(ctx context.Context, input, envName, rubric string, opts report.Options) (*trainerRun, error) {
	return loadTrainerRunWith(ctx, input, envName, ingest.Options{Rubric: rubric}, opts)
}

// loadTrainerRunWith is loadTrainerRun with every ingest option: the
// dataset and id column a TRL table is joined by.
func loadTrainerRunWith(ctx context.Context, input, envName string, in ingest.Options, opts report.Options) (*trainerRun, error) {
	path := ingest.ResultsPath(input)
	dir := filepath.Dir(path)
	man, err := ingest.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	var vf *ingest.VFEvalMetadata
	if man == nil {
		if vf, err = ingest.ReadVFEvalMetadata(dir); err != nil {
			return nil, err
		}
	}
	if envName == "" && man != nil {
		envName = man.EnvironmentID
	}
	if envName == "" && vf != nil {
		if _, rerr := env.Default.Resolve(vf.EnvID); rerr == nil {
			envName = vf.EnvID
		}
	}
	if envName == "" {
		envName = envFromRows(ctx, path)
	}
	if envName == "" {
		return nil, usagef("%s: no --env given and neither %s nor the rows name the environment; pass --env", path, ingest.ManifestFile)
	}
	e, err := newEnv(envName, nil, nil)
	if err != nil {
		return nil, err
	}
	info := e.Info()
	if in.Rubric != "" && !contains(info.Rubrics, in.Rubric) {
		return nil, usagef("--rubric %q: environment %s has rubrics %v", in.Rubric, info.ID, info.Rubrics)
	}
	run, err := ingest.Load(ctx, path, e, in)
	var missing *ingest.MissingIDError
	if errors.As(err, &missing) {
		return nil, usagef("%v", err)
	}
	if err != nil {
		return nil, err
	}
	rows, lines, rubric := run.Rows, run.Lines, run.Rubric
	meta := &artifact.Metadata{Environment: info.ID, Rubric: rubric, Status: artifact.StatusCompleted, Source: "trainer:" + orDefault(run.Format, "unknown"), Dataset: path}
	switch {
	case man != nil:
		meta = ingest.ManifestMetadata(man, info.ID, rubric)
	case vf != nil:
		meta = vf.Metadata(info.ID, rubric)
		meta.Dataset = path
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
		rep.Summary["trainer_input"] = trainerInput{Format: run.Format, Rubric: rubric, RubricFrom: run.RubricFrom,
			Joined: run.Joined - run.JoinedByPrompt, JoinedByPrompt: run.JoinedByPrompt, JoinedFrom: run.JoinedFrom, DerivedReward: run.Derived, VFEval: vf}
		rep.Markdown += trainerSection(rows) + inputSection(run)
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

// trainerInput is summary.json's "trainer_input": what was read and how it
// was re-scored.
type trainerInput struct {
	Format         string                 `json:"format,omitempty"`
	Rubric         string                 `json:"rubric"`
	RubricFrom     string                 `json:"rubric_from"`
	Joined         int                    `json:"joined_by_example_id,omitempty"`
	JoinedByPrompt int                    `json:"joined_by_prompt,omitempty"`
	JoinedFrom     string                 `json:"joined_to,omitempty"`
	DerivedReward  int                    `json:"recorded_reward_from_components,omitempty"`
	VFEval         *ingest.VFEvalMetadata `json:"vf_eval,omitempty"`
}

// inputSection says which rubric re-scored the rows and why, and what was
// joined or derived rather than read.
func inputSection(run *ingest.Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "- format %s; re-scored with rubric %s (%s).\n", orDefault(run.Format, "unknown"), run.Rubric, report.EscapeCell(run.RubricFrom))
	if n := run.Joined - run.JoinedByPrompt; n > 0 {
		fmt.Fprintf(&b, "- %d row(s) joined to %s by example id.\n", n, report.EscapeCell(run.JoinedFrom))
	}
	if run.JoinedByPrompt > 0 {
		fmt.Fprintf(&b, "- %d row(s) named no example and were joined to %s by their prompt (last user message).\n", run.JoinedByPrompt, report.EscapeCell(run.JoinedFrom))
	}
	if run.Derived > 0 {
		fmt.Fprintf(&b, "- %d row(s) logged no total reward: their recorded reward is their recorded components weighted by rubric %s.\n", run.Derived, run.Rubric)
	}
	return b.String()
}

// envFromRows reads the environment the rows name (env_name
// "intertwine/sv-env-network-logs", the Python client's column names).
func envFromRows(ctx context.Context, path string) string {
	name := ingest.EnvName(ctx, path)
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
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
