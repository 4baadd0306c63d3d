package report

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/svbench/svbench/env"
)

// ModelTable is one row per model and one column per environment (per
// environment and condition when an environment has runs under several):
// each cell is the environment's headline metric — the scoreboard's main
// metric, the first key metric of its report — with its 95% interval, and
// each column names the reward range its rubric declares. The scoreboard,
// the leaderboard and the dashboard all show it, built here.
type ModelTable struct {
	Columns []ModelTableColumn `json:"columns"`
	Rows    []ModelTableRow    `json:"rows"`
}

// ModelTableColumn is one environment (and condition) of the table.
type ModelTableColumn struct {
	Env string `json:"env"`
	// Condition is set when the environment has runs under more than one
	// condition (rubric, parameters, source) and so more than one column.
	Condition string `json:"condition,omitempty"`
	// Metric is the headline metric; several when the column's runs
	// disagree (each cell names its own then).
	Metric         string `json:"metric"`
	HigherIsBetter bool   `json:"higher_is_better"`
	// Rubric is the declared rubric (metadata.json's rubric_info) of the
	// column's runs; RewardMin and RewardMax its total's range. Nil when
	// no run recorded one (a run from before rubric_info) or the runs'
	// declarations differ (RangeNote says which).
	Rubric    string   `json:"rubric,omitempty"`
	RewardMin *float64 `json:"reward_min,omitempty"`
	RewardMax *float64 `json:"reward_max,omitempty"`
	RangeNote string   `json:"range_note,omitempty"`
}

// ModelTableRow is one model's cells, aligned with Columns; nil where the
// model has no run in that column.
type ModelTableRow struct {
	Model string            `json:"model"`
	Cells []*ModelTableCell `json:"cells"`
}

// ModelTableCell is one model's headline metric in one column.
type ModelTableCell struct {
	Metric string `json:"metric"`
	// Value is nil when the run cannot define the metric (shown n/a).
	Value *float64        `json:"value,omitempty"`
	CI    *[2]float64     `json:"ci,omitempty"`
	N     int             `json:"n"`
	RunID string          `json:"run_id,omitempty"`
	Dir   string          `json:"dir,omitempty"`
	Grade string          `json:"grade,omitempty"`
	Info  *env.RubricInfo `json:"-"`
}

// ModelTableEntry is one run as the table reads it: a scoreboard row or
// a leaderboard entry.
type ModelTableEntry struct {
	Env, Model, Condition string
	// Metric is the headline metric (Name, HigherIsBetter); Value and CI
	// its value, Undefined when the run cannot define it.
	Metric    KeyMetric
	Value     float64
	CI        *[2]float64
	Undefined bool
	N         int
	RunID     string
	Dir       string
	// Grade is the leaderboard's evidence grade ("" on the scoreboard).
	Grade string
	// Rubric is the run's declared rubric (metadata.json), nil if none.
	Rubric *env.RubricInfo
}

// EntryFromScoreRow is a scoreboard row's headline metric as a table entry.
func EntryFromScoreRow(r ScoreRow) ModelTableEntry {
	e := ModelTableEntry{Env: r.Env, Model: r.Model, Condition: r.Condition(), N: r.N, RunID: r.RunID, Dir: r.Dir, Rubric: r.RubricInfo}
	if len(r.Order) > 0 {
		e.Metric = KeyMetric{Name: r.Order[0].Name, HigherIsBetter: r.Order[0].HigherIsBetter}
	}
	e.Metric.Name = cmp.Or(e.Metric.Name, r.MainMetric)
	v, ok := r.Metrics[e.Metric.Name]
	e.Value, e.Undefined = v, !ok || slices.Contains(r.Undefined, e.Metric.Name)
	if ci, ok := r.CI[e.Metric.Name]; ok {
		e.CI = &ci
	}
	return e
}

// BuildModelTable builds the table from runs. When a model has several
// runs in one column, the one with the most rows stands for it (then the
// first given). Columns are ordered by environment, then condition; rows
// by model.
func BuildModelTable(entries []ModelTableEntry) *ModelTable {
	type colKey struct{ env, cond string }
	conds := map[string][]string{}
	for _, e := range entries {
		if e.Metric.Name == "" {
			continue
		}
		if !slices.Contains(conds[e.Env], e.Condition) {
			conds[e.Env] = append(conds[e.Env], e.Condition)
		}
	}
	var keys []colKey
	for envID, cs := range conds {
		for _, c := range cs {
			keys = append(keys, colKey{envID, c})
		}
	}
	slices.SortFunc(keys, func(a, b colKey) int { return cmp.Or(cmp.Compare(a.env, b.env), cmp.Compare(a.cond, b.cond)) })
	col := map[colKey]int{}
	t := &ModelTable{}
	for i, k := range keys {
		col[k] = i
		c := ModelTableColumn{Env: k.env}
		if len(conds[k.env]) > 1 {
			c.Condition = k.cond
		}
		t.Columns = append(t.Columns, c)
	}
	var models []string
	cells := map[string][]*ModelTableCell{}
	for _, e := range entries {
		if e.Metric.Name == "" {
			continue
		}
		i := col[colKey{e.Env, e.Condition}]
		if cells[e.Model] == nil {
			models = append(models, e.Model)
			cells[e.Model] = make([]*ModelTableCell, len(keys))
		}
		if old := cells[e.Model][i]; old != nil && old.N >= e.N {
			continue
		}
		cell := &ModelTableCell{Metric: e.Metric.Name, N: e.N, RunID: e.RunID, Dir: e.Dir, Grade: e.Grade, Info: e.Rubric}
		if !e.Undefined {
			v := e.Value
			cell.Value = &v
			if e.CI != nil {
				ci := *e.CI
				cell.CI = &ci
			}
		}
		cells[e.Model][i] = cell
		c := &t.Columns[i]
		if c.Metric == "" {
			c.Metric, c.HigherIsBetter = e.Metric.Name, e.Metric.HigherIsBetter
		}
	}
	slices.Sort(models)
	for _, m := range models {
		t.Rows = append(t.Rows, ModelTableRow{Model: m, Cells: cells[m]})
	}
	for i := range t.Columns {
		t.Columns[i].describe(t.Rows, i)
	}
	return t
}

// describe settles a column's metric name and declared range from the
// cells that stand in it.
func (c *ModelTableColumn) describe(rows []ModelTableRow, i int) {
	var metrics []string
	var info *env.RubricInfo
	missing, differ := 0, false
	for _, r := range rows {
		cell := r.Cells[i]
		if cell == nil {
			continue
		}
		if !slices.Contains(metrics, cell.Metric) {
			metrics = append(metrics, cell.Metric)
		}
		switch {
		case cell.Info == nil:
			missing++
		case info == nil:
			info = cell.Info
		case info.TotalMin != cell.Info.TotalMin || info.TotalMax != cell.Info.TotalMax || info.Name != cell.Info.Name:
			differ = true
		}
	}
	slices.Sort(metrics)
	c.Metric = strings.Join(metrics, " / ")
	switch {
	case differ:
		c.RangeNote = "the runs declare different rubrics"
	case info != nil:
		lo, hi := info.TotalMin, info.TotalMax
		c.Rubric, c.RewardMin, c.RewardMax = info.Name, &lo, &hi
		if missing > 0 {
			c.RangeNote = fmt.Sprintf("%d run(s) recorded no rubric", missing)
		}
	default:
		c.RangeNote = "not recorded (runs from before metadata.json's rubric_info)"
	}
}

// Title is a column's heading: the environment, its condition when the
// environment has several, the metric (↓ when lower is better) and the
// declared reward range.
func (c ModelTableColumn) Title() string {
	s := c.Env
	if c.Condition != "" {
		s += " · " + c.Condition
	}
	s += ": " + c.Metric
	if !c.HigherIsBetter {
		s += " ↓"
	}
	return s + " (" + c.RangeText() + ")"
}

// RangeText is the column's declared reward range, "reward ∈ [lo, hi]",
// or why there is none.
func (c ModelTableColumn) RangeText() string {
	if c.RewardMin == nil || c.RewardMax == nil {
		if c.RangeNote != "" {
			return "reward range: " + c.RangeNote
		}
		return "reward range not recorded"
	}
	s := fmt.Sprintf("reward ∈ [%s, %s]", Short(*c.RewardMin), Short(*c.RewardMax))
	if c.RangeNote != "" {
		s += "; " + c.RangeNote
	}
	return s
}

// Text is a cell as the tables print it: value [lo, hi], "n/a" for a
// metric the run cannot define, the leaderboard's grade after it, and
// "—" for no run.
func (c *ModelTableCell) Text() string {
	if c == nil {
		return "—"
	}
	s := "n/a"
	if c.Value != nil {
		s = F(*c.Value)
		if c.CI != nil {
			s += fmt.Sprintf(" [%s, %s]", F(c.CI[0]), F(c.CI[1]))
		}
	}
	if c.Grade != "" {
		s += " (" + c.Grade + ")"
	}
	return s
}

// Short formats a declared bound: at most 4 decimals, no trailing zeros.
func Short(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return strconv.FormatFloat(math.Round(x*1e4)/1e4+0, 'f', -1, 64)
}

// Markdown renders the table under a heading, with a note saying what the
// cells and headers hold; "" when there is nothing to show.
func (t *ModelTable) Markdown(heading string) string {
	if t == nil || len(t.Rows) == 0 {
		return ""
	}
	header := []string{"model"}
	for _, c := range t.Columns {
		header = append(header, c.Title())
	}
	var rows [][]string
	for _, r := range t.Rows {
		cells := []string{r.Model}
		for _, c := range r.Cells {
			cells = append(cells, c.Text())
		}
		rows = append(rows, cells)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n%s\n", heading, Table(header, rows))
	b.WriteString("Each cell is the environment's headline metric (its main metric, the first of its report's key metrics) with its 95% interval; — marks no run of the model there, n/a a metric the run cannot define. Each header gives the reward range the rubric declares (Σ weight × each component's declared range; `/v1/environments` lists the components): the reward's scale differs between environments, so compare models within a column, not across columns.\n")
	return b.String()
}
