package web

import (
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"

	"github.com/svbench/svbench/analysis/compare"
	"github.com/svbench/svbench/analysis/leaderboard"
)

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
