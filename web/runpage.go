package web

import (
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/ingest"
	"github.com/svbench/svbench/report"
)

// runReport is a run's report as the dashboard shows it, rebuilt when the
// results file changes.
type runReport struct {
	size    int64
	mod     time.Time
	rep     *report.Report
	err     error
	charts  []report.Chart // report charts, then histograms
	summary map[string]json.RawMessage
	stale   bool // summary.json older than results.jsonl
	// outdated: summary.json's key metrics are of an older svbench that
	// named or defined them differently (report.SummaryCurrent); they are
	// dropped and the computed ones shown, without intervals.
	outdated bool
	// tooLarge lists the rows left out of the charts for their size.
	tooLarge []tooLargeLine
}

// tooLargeLine is a results row too large to read.
type tooLargeLine struct {
	Line int
	Size int64
}

func (s *Server) report(run runRef, meta *artifact.Metadata) *runReport {
	name := run.file(artifact.ResultsFile)
	f, err := s.openRegular(name)
	if err != nil {
		return &runReport{err: err}
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return &runReport{err: err}
	}
	s.reports.mu.Lock()
	defer s.reports.mu.Unlock()
	if s.reports.m == nil {
		s.reports.m = map[string]*runReport{}
	}
	if rr := s.reports.m[run.rel]; rr != nil && rr.size == st.Size() && rr.mod.Equal(st.ModTime()) {
		return rr
	}
	rr := &runReport{size: st.Size(), mod: st.ModTime()}
	rows, _, err := report.DecodeResults(f, filepath.ToSlash(name), report.LoadOptions{
		MaxRowBytes: s.opts.MaxRowBytes,
		TooLarge:    func(line int, size int64) { rr.tooLarge = append(rr.tooLarge, tooLargeLine{line, size}) },
	})
	if err != nil {
		rr.err = err
		return rr
	}
	envID := ""
	if meta != nil {
		envID = meta.Environment
	}
	// Charts only: intervals come from summary.json, written by the report
	// with the run's bootstrap settings.
	rr.rep, rr.err = report.Build(envID, rows, meta, report.Options{BootstrapReps: -1})
	if rr.rep != nil {
		rr.charts = append(rr.charts, rr.rep.Charts...)
	}
	rr.charts = append(rr.charts, histograms(rows, meta)...)
	// A trainer's run: its own per-step metrics, when exported beside the rows.
	if b, err := s.readFile(run.file(ingest.StepMetricsFile)); err == nil {
		if sm, err := ingest.ParseStepMetrics(b); err == nil {
			if _, charts, _, ok := report.Training(sm); ok {
				rr.charts = append(rr.charts, charts...)
			}
		}
	}
	if b, err := s.readFile(run.file(artifact.SummaryFile)); err == nil {
		if json.Unmarshal(b, &rr.summary) == nil {
			if sst, err := s.files.Stat(run.file(artifact.SummaryFile)); err == nil && sst.ModTime().Before(st.ModTime()) {
				rr.stale = true
			}
			if _, ok := rr.summary["key_metrics"]; ok && !report.SummaryCurrent(envID, rr.summary) {
				rr.outdated = true
				delete(rr.summary, "key_metrics")
			}
		}
	}
	s.reports.m[run.rel] = rr
	return rr
}

// histograms draws the reward and every reward component over the scored
// rows, with report's bar chart.
func histograms(rows []artifact.Result, meta *artifact.Metadata) []report.Chart {
	series := map[string][]float64{}
	for i := range rows {
		r := &rows[i]
		if r.Error != "" && !r.FailedButScored() || r.ScoreError != "" || r.Unverifiable != "" {
			continue
		}
		series["reward"] = append(series["reward"], r.Reward)
		for k, v := range r.Components {
			series[k] = append(series[k], v)
		}
	}
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range series {
			if k != "reward" && !yield(k) {
				return
			}
		}
	})
	if _, ok := series["reward"]; ok {
		names = append([]string{"reward"}, names...)
	}
	var out []report.Chart
	sub := "dashboard"
	if meta != nil {
		sub = meta.Model + " · " + meta.Environment
	}
	for _, name := range names {
		labels, counts := bins(series[name], 10)
		vals := make([]float64, len(counts))
		for i, c := range counts {
			vals[i] = float64(c)
		}
		svg := report.BarChart("Distribution of "+name, "rollouts", labels, vals, nil, false)
		out = append(out, report.Chart{Name: "hist-" + name, Title: "Histogram: " + name, SVG: report.WithSubtitle(svg, fmt.Sprintf("%s · %d scored rollouts", sub, len(series[name])))})
	}
	return out
}

// bins splits xs into at most n equal-width bins over their range; a
// component taking few distinct values (0/1) gets one bin per value.
func bins(xs []float64, n int) ([]string, []int) {
	distinctVals := map[float64]int{}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		if len(distinctVals) <= n {
			distinctVals[x]++
		}
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	if len(distinctVals) <= n {
		keys := slices.Sorted(func(yield func(float64) bool) {
			for k := range distinctVals {
				if !yield(k) {
					return
				}
			}
		})
		var labels []string
		var counts []int
		for _, k := range keys {
			labels = append(labels, strconv.FormatFloat(k, 'g', 4, 64))
			counts = append(counts, distinctVals[k])
		}
		return labels, counts
	}
	counts := make([]int, n)
	width := (hi - lo) / float64(n)
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		i := int((x - lo) / width)
		counts[min(max(i, 0), n-1)]++
	}
	labels := make([]string, n)
	for i := range labels {
		labels[i] = fmt.Sprintf("%.3g – %.3g", lo+float64(i)*width, lo+float64(i+1)*width)
	}
	return labels, counts
}

// keyMetric is a headline metric from summary.json.
type keyMetric struct {
	Name      string   `json:"name"`
	Value     float64  `json:"value"`
	Higher    bool     `json:"higher_is_better"`
	Undefined bool     `json:"undefined"`
	Lo        *float64 `json:"ci_lo"`
	Hi        *float64 `json:"ci_hi"`
}

func (s *Server) runFromQuery(w http.ResponseWriter, r *http.Request) (string, runRef, *artifact.Metadata, bool) {
	id := r.URL.Query().Get("id")
	run, err := s.runDir(id)
	if err != nil {
		s.fail(w, http.StatusNotFound, fmt.Sprintf("run %q: %v", id, err))
		return "", runRef{}, nil, false
	}
	meta, _ := s.readMetadata(run)
	return id, run, meta, true
}

func (s *Server) handleRun(w http.ResponseWriter, r *http.Request) {
	id, dir, meta, ok := s.runFromQuery(w, r)
	if !ok {
		return
	}
	rr := s.report(dir, meta)
	var keys []keyMetric
	if raw, ok := rr.summary["key_metrics"]; ok {
		json.Unmarshal(raw, &keys)
	} else if rr.rep != nil {
		for _, k := range rr.rep.Key {
			keys = append(keys, keyMetric{Name: k.Name, Value: k.Value, Higher: k.HigherIsBetter, Undefined: k.Undefined})
		}
	}
	var manifest any
	if b, err := s.readFile(dir.file(artifact.ManifestFile)); err == nil {
		json.Unmarshal(b, &manifest)
	}
	var headline []report.Stat
	reportErr := ""
	if rr.rep != nil {
		headline = rr.rep.Headline
	}
	// Rows are counted in results.jsonl, as the report below counts them:
	// metadata.json is only a checkpoint while a run is going.
	nRows := 0
	if meta != nil {
		nRows = meta.Completed + meta.Errors
	}
	if rows, err := s.index(dir).update(); err == nil {
		nRows = len(rows)
	}
	if rr.err != nil {
		reportErr = rr.err.Error()
	}
	s.render(w, "run", "run "+id, map[string]any{
		"ID": id, "Meta": meta, "Rows": nRows, "Keys": keys, "Stale": rr.stale, "Outdated": rr.outdated, "HasSummary": rr.summary != nil,
		"Charts": rr.charts, "Headline": headline, "ReportErr": reportErr, "Manifest": manifest,
		"TooLarge": rr.tooLarge, "MaxRowBytes": s.opts.MaxRowBytes,
	})
}

func (s *Server) handleChart(w http.ResponseWriter, r *http.Request) {
	_, dir, meta, ok := s.runFromQuery(w, r)
	if !ok {
		return
	}
	name := r.URL.Query().Get("name")
	for _, c := range s.report(dir, meta).charts {
		if c.Name == name {
			h := w.Header()
			h.Set("Content-Type", "image/svg+xml")
			// The chart's own presentation attributes only; nothing runs.
			h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; sandbox")
			w.Write(c.SVG)
			return
		}
	}
	http.NotFound(w, r)
}

// ---- transcripts -------------------------------------------------------
