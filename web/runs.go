package web

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/report"
)

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
