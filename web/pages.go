package web

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"maps"
	"math"
	"net/http"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/svbench/svbench/analysis/compare"
	"github.com/svbench/svbench/analysis/leaderboard"
	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/base/clip"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/ingest"
	"github.com/svbench/svbench/llm/usage"
	"github.com/svbench/svbench/report"
)

// Display bounds: model output is hostile and may be huge.
const (
	shownAtOnce = 4 << 10 // shown at once
	shownInFull = 1 << 20 // behind "show all"; the rest only in results.jsonl
	pageSize    = 50
)

func (s *Server) parseTemplates() error {
	funcs := template.FuncMap{
		"clip":    newClipped,
		"preview": func(s string) string { return previewText(s, 240) },
		"f4":      func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) },
		"pct":     func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) },
		"date":    func(t time.Time) string { return fmtTime(t) },
		"json":    prettyJSON,
		"cost":    usage.FormatCost,
		"runcost": report.CostText,
		"add":     func(a, b int) int { return a + b },
		"runLink": func(id string) string { return "/run?id=" + urlq(id) },
		"join":    strings.Join,
		"deref":   func(p *float64) float64 { return *p },
		"optf4":   optF4,
		"ci":      ciText,
		"ptrOK":   func(p *float64) bool { return p != nil },
		"truth":   func(p *bool) bool { return p != nil && *p },
	}
	s.pages = map[string]*template.Template{}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return err
	}
	for _, n := range names {
		base := strings.TrimSuffix(filepath.Base(n), ".html")
		if base == "base" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(templateFS, "templates/base.html", n)
		if err != nil {
			return fmt.Errorf("web template %s: %w", n, err)
		}
		s.pages[base] = t
	}
	return nil
}

// render writes a page into a buffer first, so a template error becomes a
// clean 500 and never half a page.
func (s *Server) render(w http.ResponseWriter, page string, title string, data any) {
	var b bytes.Buffer
	err := s.pages[page].ExecuteTemplate(&b, "base", map[string]any{"Title": title, "Page": page, "D": data})
	if err != nil {
		s.opts.Log.Error("render", "page", page, "err", err)
		http.Error(w, "internal error rendering "+page, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

func (s *Server) fail(w http.ResponseWriter, code int, msg string) {
	w.WriteHeader(code)
	s.render(w, "error", "error", map[string]any{"Code": code, "Message": msg})
}

// Clipped is a long text split for display.
type Clipped struct {
	Short     string
	Full      string
	Truncated bool // Short is not all of it
	Cut       bool // even Full is not all of it
	Size      int
}

// newClipped is s as a page shows it: a short part at once, more on demand.
func newClipped(s string) Clipped {
	c := Clipped{Short: s, Full: s, Size: len(s)}
	if len(s) > shownAtOnce {
		c.Short, c.Truncated = clip.Prefix(s, shownAtOnce), true
	}
	if len(s) > shownInFull {
		c.Full, c.Cut = clip.Prefix(s, shownInFull), true
	}
	return c
}

func previewText(s string, n int) string {
	return clip.Bytes(strings.Join(strings.Fields(s), " "), n, clip.Ellipsis)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// prettyJSON shows a value for reading: strings as themselves, anything
// else as indented JSON. HTML is not escaped here: html/template escapes
// the result once, and \u003c would hide what the model wrote.
func prettyJSON(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func optF4(p *float64) string {
	if p == nil {
		return "—"
	}
	return strconv.FormatFloat(*p, 'f', 4, 64)
}

// ---- runs table --------------------------------------------------------

// RunRow is one run in the runs table.
type RunRow struct {
	ID        string
	Meta      *artifact.Metadata
	Rows      int
	Cost      string
	Started   time.Time
	Env       string
	Model     string
	Dataset   string
	Rubric    string
	Status    string
	AvgReward float64
	// NoRows marks a run with no scored row (Metadata.NoRows): hidden from
	// the run list and compare's picker unless ?all=1 or its status is
	// asked for.
	NoRows bool
	dir    runRef
}

// listRuns walks the root through files: a symlinked directory is not
// entered and a metadata.json that leaves the root is skipped with the
// reason.
func (s *Server) listRuns() ([]RunRow, []string) {
	var out []RunRow
	var skipped []string
	fs.WalkDir(s.files.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			skipped = append(skipped, err.Error())
			return nil
		}
		if d.IsDir() || d.Name() != artifact.MetadataFile {
			return nil
		}
		rel := path.Dir(p)
		if rel == "." {
			return nil
		}
		run := runRef{dir: filepath.Join(s.realRoot, filepath.FromSlash(rel)), rel: filepath.FromSlash(rel)}
		m, err := s.readMetadata(run)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", rel, err))
			return nil
		}
		row := RunRow{ID: rel, Meta: m, Rows: m.Completed + m.Errors, Started: m.Started,
			Env: m.Environment, Model: m.Model, Dataset: m.Dataset, Rubric: m.Rubric, Status: m.Status, AvgReward: m.AvgReward}
		row.Cost = report.CostText(m.Cost) // unknown is not 0 USD
		row.NoRows = m.NoRows()
		if m.Status == artifact.StatusRunning {
			if rows, err := s.index(run).update(); err == nil {
				row.Rows = len(rows)
			}
		}
		row.dir = run
		out = append(out, row)
		return nil
	})
	slices.SortStableFunc(out, func(a, b RunRow) int { return b.Started.Compare(a.Started) })
	return out, skipped
}

type runFilter struct {
	Env, Model, Dataset, Rubric, Status, From, To string
}

func filterOf(r *http.Request) runFilter {
	q := r.URL.Query()
	return runFilter{Env: q.Get("env"), Model: q.Get("model"), Dataset: q.Get("dataset"), Rubric: q.Get("rubric"), Status: q.Get("status"), From: q.Get("from"), To: q.Get("to")}
}

func (f runFilter) keep(r RunRow) bool {
	day := ""
	if !r.Started.IsZero() {
		day = r.Started.UTC().Format("2006-01-02")
	}
	return (f.Env == "" || r.Env == f.Env) && (f.Model == "" || r.Model == f.Model) &&
		(f.Dataset == "" || r.Dataset == f.Dataset) && (f.Rubric == "" || r.Rubric == f.Rubric) &&
		(f.Status == "" || r.Status == f.Status) && (f.From == "" || day >= f.From) && (f.To == "" || (day != "" && day <= f.To))
}

func distinct(rows []RunRow, get func(RunRow) string) []string {
	var out []string
	for _, r := range rows {
		if v := get(r); v != "" && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out
}

func (s *Server) handleRuns(w http.ResponseWriter, r *http.Request) {
	all, skipped := s.listRuns()
	f := filterOf(r)
	var shown []RunRow
	showAll := r.URL.Query().Get("all") != "" || f.Status != ""
	for _, row := range all {
		if f.keep(row) && (showAll || !row.NoRows) {
			shown = append(shown, row)
		}
	}
	s.render(w, "runs", "runs", map[string]any{
		"Root": s.root, "Runs": shown, "Total": len(all), "Filter": f, "Skipped": skipped, "ShowAll": showAll,
		"Envs": distinct(all, func(r RunRow) string { return r.Env }), "Models": distinct(all, func(r RunRow) string { return r.Model }),
		"Datasets": distinct(all, func(r RunRow) string { return r.Dataset }), "Rubrics": distinct(all, func(r RunRow) string { return r.Rubric }),
		"Statuses": distinct(all, func(r RunRow) string { return r.Status }),
	})
}

// apiRun is what the live-update script polls.
type apiRun struct {
	ID        string  `json:"id"`
	Status    string  `json:"status"`
	Rows      int     `json:"rows"`
	Completed int     `json:"completed"`
	Errors    int     `json:"errors"`
	AvgReward float64 `json:"avg_reward"`
}

func (s *Server) handleAPIRuns(w http.ResponseWriter, r *http.Request) {
	all, _ := s.listRuns()
	out := make([]apiRun, 0, len(all))
	for _, row := range all {
		out = append(out, apiRun{ID: row.ID, Status: row.Status, Rows: row.Rows, Completed: row.Meta.Completed, Errors: row.Meta.Errors, AvgReward: row.AvgReward})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	json.NewEncoder(w).Encode(out)
}

// ---- run page ----------------------------------------------------------

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

// Filters for the transcript list.
var transcriptFilters = []struct{ Key, Label string }{
	{"all", "all"}, {"wrong", "wrong (not solved)"}, {"solved", "solved"}, {"errors", "errors"}, {"disagree", "reward sources disagree"},
}

// Sort orders for the transcript list.
var transcriptSorts = []struct{ Key, Label string }{
	{"file", "file order"}, {"reward-asc", "lowest reward"}, {"reward-desc", "highest reward"},
}

func keepRow(filter string, ri rowInfo) bool {
	switch filter {
	case "wrong":
		return ri.flags&flagUnsolved != 0 && ri.flags&(flagError|flagScoreErr) == 0
	case "solved":
		return ri.flags&flagSolved != 0
	case "errors":
		return ri.flags&(flagError|flagScoreErr|flagUnreadable|flagTooLarge) != 0
	case "disagree":
		return ri.flags&flagDisagree != 0
	}
	return true
}

// TranscriptItem is one line of the transcript list.
type TranscriptItem struct {
	Row       int
	Index     int
	Rollout   int
	ExampleID string
	Reward    float64
	Solved    *bool
	Error     string
	Preview   string
	// TooLarge is the size of a row not read for its size; 0 otherwise.
	TooLarge int64
}

func (s *Server) handleTranscripts(w http.ResponseWriter, r *http.Request) {
	id, dir, _, ok := s.runFromQuery(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	filter, order := q.Get("filter"), q.Get("sort")
	if !slices.ContainsFunc(transcriptFilters, func(f struct{ Key, Label string }) bool { return f.Key == filter }) {
		filter = "all"
	}
	if !slices.ContainsFunc(transcriptSorts, func(f struct{ Key, Label string }) bool { return f.Key == order }) {
		order = "file"
	}
	page, _ := strconv.Atoi(q.Get("page"))
	page = max(page, 0)
	ix := s.index(dir)
	rows, err := ix.update()
	if err != nil {
		s.fail(w, http.StatusNotFound, fmt.Sprintf("run %s: %v", id, err))
		return
	}
	sel := ix.selection(filter, order, rows, func() []int32 {
		var sel []int32
		for i, ri := range rows {
			if keepRow(filter, ri) {
				sel = append(sel, int32(i))
			}
		}
		switch order {
		case "reward-asc", "reward-desc":
			sign := 1.0
			if order == "reward-desc" {
				sign = -1
			}
			slices.SortStableFunc(sel, func(a, b int32) int {
				// Unscored rows last in both orders.
				ua, ub := rows[a].flags&unscored != 0, rows[b].flags&unscored != 0
				if ua != ub {
					if ua {
						return 1
					}
					return -1
				}
				return cmp.Compare(sign*rows[a].reward, sign*rows[b].reward)
			})
		}
		return sel
	})
	pages := max((len(sel)+pageSize-1)/pageSize, 1)
	page = min(page, pages-1)
	lo, hi := page*pageSize, min((page+1)*pageSize, len(sel))
	var items []TranscriptItem
	for _, pos := range sel[lo:hi] {
		ri := rows[pos]
		it := TranscriptItem{Row: int(pos), Index: int(ri.index), Rollout: int(ri.rollout), Reward: ri.reward}
		res, err := ix.readRow(ri)
		var big *tooLargeRow
		switch {
		case errors.As(err, &big):
			it.Error, it.TooLarge = err.Error(), big.size
		case err != nil:
			it.Error = err.Error()
		default:
			it.ExampleID, it.Solved, it.Preview = res.ExampleID, res.Solved, previewText(res.FinalText, 240)
			it.Error = previewText(strings.TrimPrefix(res.Error+"; "+res.ScoreError, "; "), 200)
			it.Error = strings.TrimSuffix(it.Error, "; ")
		}
		items = append(items, it)
	}
	s.render(w, "transcripts", "transcripts "+id, map[string]any{
		"ID": id, "Items": items, "Filter": filter, "Sort": order, "Filters": transcriptFilters, "Sorts": transcriptSorts,
		"Page": page, "Pages": pages, "Matched": len(sel), "Total": len(rows),
		"Prev": page - 1, "Next": page + 1, "HasPrev": page > 0, "HasNext": page+1 < pages,
	})
}

// ---- one rollout -------------------------------------------------------

// ComponentView is one reward component with its weight.
type ComponentView struct {
	Name   string
	Value  float64
	Weight *float64
}

func (s *Server) handleRollout(w http.ResponseWriter, r *http.Request) {
	id, dir, meta, ok := s.runFromQuery(w, r)
	if !ok {
		return
	}
	ix := s.index(dir)
	rows, err := ix.update()
	if err != nil {
		s.fail(w, http.StatusNotFound, err.Error())
		return
	}
	row, err := strconv.Atoi(r.URL.Query().Get("row"))
	if err != nil || row < 0 || row >= len(rows) {
		s.fail(w, http.StatusNotFound, fmt.Sprintf("run %s has rows 0 to %d; ?row=%q is not one of them", id, len(rows)-1, r.URL.Query().Get("row")))
		return
	}
	res, err := ix.readRow(rows[row])
	var big *tooLargeRow
	if errors.As(err, &big) {
		s.fail(w, http.StatusUnprocessableEntity, fmt.Sprintf("rollout %d of %s: %v; the dashboard reads rows up to %d bytes (the row is at byte %d of results.jsonl)", row, id, err, s.opts.MaxRowBytes, rows[row].off))
		return
	}
	if err != nil {
		s.fail(w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	var comps []ComponentView
	for _, k := range slices.Sorted(maps.Keys(res.Components)) {
		c := ComponentView{Name: k, Value: res.Components[k]}
		if wt, ok := res.Weights[k]; ok {
			c.Weight = &wt
		}
		comps = append(comps, c)
	}
	parsedKeys := slices.Sorted(maps.Keys(res.Parsed))
	var answer any
	if len(res.Answer) > 0 {
		json.Unmarshal(res.Answer, &answer)
	}
	msgs := messageViews(res.Completion, res.ToolCalls)
	s.render(w, "rollout", fmt.Sprintf("rollout %d of %s", row, id), map[string]any{
		"ID": id, "Row": row, "R": res, "Meta": meta, "Components": comps, "ParsedKeys": parsedKeys,
		"Answer": answer, "Prev": row - 1, "Next": row + 1, "HasPrev": row > 0, "HasNext": row+1 < len(rows),
		"Messages": msgs, "Prompt": messageViews(res.Prompt, nil), "OtherCalls": unmatchedRecords(msgs, res.ToolCalls),
	})
}

// MessageView is a chat message with its tool calls' arguments made
// readable.
type MessageView struct {
	env.Message
	Calls []CallView
}

// CallView is one tool call, with what running it recorded (Run) when
// the row has its record.
type CallView struct {
	ID, Name string
	Args     Clipped
	Run      *env.ToolCallRecord
}

// messageViews lays the conversation out as it happened: each assistant
// turn's reasoning, then its text, then its tool calls each with its run
// (duration, findings, error from the row's tool-call records, matched by
// turn and order), then the tool results that follow.
func messageViews(msgs []env.Message, records []env.ToolCallRecord) []MessageView {
	byTurn := map[int][]int{} // indices into records
	for i, r := range records {
		byTurn[r.Turn] = append(byTurn[r.Turn], i)
	}
	out := make([]MessageView, 0, len(msgs))
	turn := 0
	for _, m := range msgs {
		v := MessageView{Message: m}
		if m.Role == env.RoleAssistant {
			turn++
		}
		recs := byTurn[turn]
		for i, c := range m.ToolCalls {
			args := c.Arguments
			var js any
			if json.Unmarshal([]byte(args), &js) == nil {
				args = prettyJSON(js)
			}
			cv := CallView{ID: c.ID, Name: c.Name, Args: newClipped(args)}
			if i < len(recs) && records[recs[i]].Name == c.Name {
				cv.Run = &records[recs[i]]
			}
			v.Calls = append(v.Calls, cv)
		}
		out = append(out, v)
	}
	return out
}

// unmatchedRecords are the tool-call records no message shows (rows whose
// completion was not kept): listed apart so none is lost.
func unmatchedRecords(views []MessageView, records []env.ToolCallRecord) []env.ToolCallRecord {
	seen := map[*env.ToolCallRecord]bool{}
	for _, v := range views {
		for _, c := range v.Calls {
			if c.Run != nil {
				seen[c.Run] = true
			}
		}
	}
	var out []env.ToolCallRecord
	for i := range records {
		if !seen[&records[i]] {
			out = append(out, records[i])
		}
	}
	return out
}

// ---- compare -----------------------------------------------------------

// CompareView is one candidate against the baseline.
type CompareView struct {
	ID  string
	C   *compare.Comparison
	Err string
}

func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request) {
	ids := r.URL.Query()["id"]
	all, _ := s.listRuns()
	if len(ids) < 2 {
		if r.URL.Query().Get("all") == "" {
			all = slices.DeleteFunc(all, func(row RunRow) bool { return row.NoRows })
		}
		s.render(w, "compare", "compare", map[string]any{"Runs": all, "Pick": true, "IDs": ids})
		return
	}
	if len(ids) > 8 {
		s.fail(w, http.StatusBadRequest, "compare at most 8 runs at once")
		return
	}
	dirs := make([]string, len(ids))
	for i, id := range ids {
		d, err := s.runDir(id)
		if err != nil {
			s.fail(w, http.StatusNotFound, fmt.Sprintf("run %q: %v", id, err))
			return
		}
		if err := s.comparable(d); err != nil {
			s.fail(w, http.StatusUnprocessableEntity, fmt.Sprintf("run %q: %v", id, err))
			return
		}
		dirs[i] = d.dir
	}
	base, err := compare.Load(dirs[0])
	if err != nil {
		s.fail(w, http.StatusUnprocessableEntity, fmt.Sprintf("baseline %s: %v", ids[0], err))
		return
	}
	// The options of `svbench compare` with its default flags: the same
	// resamples and seed, and the same refusals (a budget mismatch, rows
	// without a partner) unless asked, as --allow-mismatch and
	// --allow-unpaired ask.
	opts := compare.Options{AllowUnpaired: r.URL.Query().Get("allow_unpaired") != "", AllowMismatch: r.URL.Query().Get("allow_mismatch") != ""}
	var views []CompareView
	for i := 1; i < len(ids); i++ {
		v := CompareView{ID: ids[i]}
		cand, err := compare.Load(dirs[i])
		if err == nil {
			v.C, err = compare.Runs(base, cand, opts)
		}
		if err != nil {
			v.Err = err.Error()
		}
		views = append(views, v)
	}
	s.render(w, "compare", "compare", map[string]any{"Runs": all, "Base": ids[0], "Views": views, "IDs": ids, "Opts": opts, "MinSliceN": compare.MinSliceN})
}

// comparable checks a run before compare.Load reads it by path and whole:
// its files stay under the root and no row is over the dashboard's bound.
func (s *Server) comparable(run runRef) error {
	if err := s.filesInRoot(run); err != nil {
		return err
	}
	rows, err := s.index(run).update()
	if err != nil {
		return err
	}
	for i, ri := range rows {
		if ri.flags&flagTooLarge != 0 {
			return fmt.Errorf("row %d: %w, over the %d the dashboard reads; compare it with `svbench compare`", i, &tooLargeRow{size: ri.n}, s.opts.MaxRowBytes)
		}
	}
	return nil
}

// ---- leaderboard -------------------------------------------------------

// handleLeaderboard ranks the runs listRuns found, each checked as
// filesInRoot does: the leaderboard reads them by path.
func (s *Server) handleLeaderboard(w http.ResponseWriter, r *http.Request) {
	runs, skipped := s.listRuns()
	var sources []string
	for _, run := range runs {
		if err := s.filesInRoot(run.dir); err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", run.ID, err))
			continue
		}
		sources = append(sources, run.dir.dir)
	}
	lb, err := leaderboard.Build(sources, leaderboard.Options{})
	if err != nil {
		s.fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	links := map[string]string{}
	for _, e := range lb.Entries {
		if rel, err := filepath.Rel(s.realRoot, e.Dir); err == nil && !strings.HasPrefix(rel, "..") {
			links[e.Dir] = filepath.ToSlash(rel)
		}
	}
	lb.Skipped = append(skipped, lb.Skipped...)
	s.render(w, "leaderboard", "leaderboard", map[string]any{"LB": lb, "Links": links})
}

func urlq(s string) string { return template.URLQueryEscaper(s) }

// ciText is an entry's interval for metric name, "—" when it has none: a
// missing map entry reads as [0, 0], which is an interval the run never
// had (the leaderboard's markdown uses the same rule).
func ciText(ci map[string][2]float64, name string) string {
	v, ok := ci[name]
	if !ok || v == [2]float64{} {
		return "\u2014"
	}
	return "[" + strconv.FormatFloat(v[0], 'f', 4, 64) + ", " + strconv.FormatFloat(v[1], 'f', 4, 64) + "]"
}
