package integrity

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Label shortcuts: when a row's prompt is a structured record (E1's flows),
// a generator artefact can make one field, or a pair, predict the gold label
// by itself (every inbound flow malicious, say). A model then learns the
// artefact instead of the task. FindShortcuts looks for the best such
// rules.

// FieldRow is one row's record fields and its gold label.
type FieldRow struct {
	Fields map[string]string
	Label  string
}

// Rule is a lookup rule over one or two fields: every combination of the
// fields' (binned) values predicts the majority label among the rows that
// share it.
type Rule struct {
	Fields []string `json:"fields"`
	// Accuracy is leave-one-out: each row is predicted from the other
	// rows with the same values (the overall majority when it has none),
	// so a field with a value per row does not look predictive.
	Accuracy float64 `json:"accuracy"`
	// InSample is the accuracy of the table fitted on all rows.
	InSample float64 `json:"in_sample"`
	// Cells is the number of distinct value combinations.
	Cells int `json:"cells"`
	// Strongest is the largest pure-ish cell, e.g.
	// "direction=inbound → Malicious (36 of 36 rows)".
	Strongest string `json:"strongest,omitempty"`
	// Table maps a cell key (values joined by "|") to its majority label,
	// over the binned values; Bins says how numeric fields were binned.
	Table map[string]string `json:"-"`
}

// Shortcuts is what FindShortcuts reports.
type Shortcuts struct {
	Rows int `json:"rows"`
	// Majority is the accuracy of always answering the most common label.
	Majority float64 `json:"majority"`
	// Best1 and Best2 are the most accurate one- and two-field rules;
	// Top1 and Top2 list the best few of each.
	Best1 Rule   `json:"best_one_field"`
	Best2 Rule   `json:"best_two_field"`
	Top1  []Rule `json:"top_one_field"`
	Top2  []Rule `json:"top_two_field"`
	// Binner maps a field's raw value to the value rules see.
	Binner Binner `json:"-"`
}

// Binner turns raw field values into the coarse values rules are built
// over: numeric fields (every present value a number, more than
// maxCategories distinct) into quartiles, categorical fields with many
// values into their most common ones plus "other". A missing value ("" or
// "-") stays its own value: a sensor gap that only one class has is a
// shortcut too.
type Binner struct {
	cuts map[string][]float64       // numeric: quartile boundaries
	keep map[string]map[string]bool // categorical: kept values
}

const (
	maxCategories = 8
	missingValue  = "-"
)

func newBinner(rows []FieldRow, fields []string) Binner {
	b := Binner{cuts: map[string][]float64{}, keep: map[string]map[string]bool{}}
	for _, f := range fields {
		counts := map[string]int{}
		var nums []float64
		numeric := true
		for _, r := range rows {
			v := r.Fields[f]
			if v == "" || v == missingValue {
				continue
			}
			counts[v]++
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				nums = append(nums, x)
			} else {
				numeric = false
			}
		}
		if numeric && len(counts) > maxCategories {
			slices.Sort(nums)
			var cuts []float64
			for _, q := range []float64{.25, .5, .75} {
				c := nums[min(len(nums)-1, int(q*float64(len(nums))))]
				if len(cuts) == 0 || c > cuts[len(cuts)-1] {
					cuts = append(cuts, c)
				}
			}
			b.cuts[f] = cuts
			continue
		}
		type kv struct {
			v string
			n int
		}
		var all []kv
		for v, n := range counts {
			all = append(all, kv{v, n})
		}
		slices.SortFunc(all, func(a, b kv) int { return cmp.Or(b.n-a.n, strings.Compare(a.v, b.v)) })
		keep := map[string]bool{}
		for i, x := range all {
			if i < maxCategories {
				keep[x.v] = true
			}
		}
		b.keep[f] = keep
	}
	return b
}

// Bin is the value a rule over field f sees for raw value v.
func (b Binner) Bin(f, v string) string {
	if v == "" || v == missingValue {
		return missingValue
	}
	if cuts, ok := b.cuts[f]; ok {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return "other"
		}
		i := sort.SearchFloat64s(cuts, x) // first cut ≥ x
		switch {
		case i == 0:
			return "≤" + strconv.FormatFloat(cuts[0], 'g', 4, 64)
		case i == len(cuts):
			return ">" + strconv.FormatFloat(cuts[len(cuts)-1], 'g', 4, 64)
		}
		return "(" + strconv.FormatFloat(cuts[i-1], 'g', 4, 64) + "," + strconv.FormatFloat(cuts[i], 'g', 4, 64) + "]"
	}
	if b.keep[f][v] {
		return v
	}
	return "other"
}

// minShortcutRows is the smallest set worth looking at.
const minShortcutRows = 20

// FindShortcuts finds the best one- and two-field rules over rows. It
// returns nil when there are too few rows or no fields.
func FindShortcuts(rows []FieldRow) *Shortcuts {
	if len(rows) < minShortcutRows {
		return nil
	}
	fieldSet := map[string]bool{}
	labels := map[string]int{}
	for _, r := range rows {
		for f := range r.Fields {
			fieldSet[f] = true
		}
		labels[r.Label]++
	}
	if len(fieldSet) == 0 {
		return nil
	}
	fields := slices.Sorted(maps.Keys(fieldSet))
	majority, majN := "", -1
	for _, l := range slices.Sorted(maps.Keys(labels)) {
		if labels[l] > majN {
			majority, majN = l, labels[l]
		}
	}
	b := newBinner(rows, fields)
	binned := make([]map[string]string, len(rows))
	for i, r := range rows {
		m := make(map[string]string, len(fields))
		for _, f := range fields {
			m[f] = b.Bin(f, r.Fields[f])
		}
		binned[i] = m
	}
	s := &Shortcuts{Rows: len(rows), Majority: float64(majN) / float64(len(rows)), Binner: b}
	var ones, twos []Rule
	for i, f := range fields {
		ones = append(ones, fitRule(rows, binned, []string{f}, majority))
		for _, g := range fields[i+1:] {
			twos = append(twos, fitRule(rows, binned, []string{f, g}, majority))
		}
	}
	better := func(a, b Rule) int {
		return cmp.Or(cmp.Compare(b.Accuracy, a.Accuracy), cmp.Compare(b.InSample, a.InSample), slices.Compare(a.Fields, b.Fields))
	}
	slices.SortFunc(ones, better)
	slices.SortFunc(twos, better)
	s.Best1, s.Top1 = ones[0], ones[:min(3, len(ones))]
	if len(twos) > 0 {
		s.Best2, s.Top2 = twos[0], twos[:min(3, len(twos))]
	} else {
		s.Best2 = s.Best1
	}
	return s
}

// CellKey is the key of a row's cell in a rule over fields.
func CellKey(binned map[string]string, fields []string) string {
	parts := make([]string, len(fields))
	for i, f := range fields {
		parts[i] = binned[f]
	}
	return strings.Join(parts, "|")
}

func fitRule(rows []FieldRow, binned []map[string]string, fields []string, majority string) Rule {
	cells := map[string]map[string]int{}
	keys := make([]string, len(rows))
	for i, r := range rows {
		k := CellKey(binned[i], fields)
		keys[i] = k
		if cells[k] == nil {
			cells[k] = map[string]int{}
		}
		cells[k][r.Label]++
	}
	best := func(c map[string]int, skip string) string {
		lab, n := majority, 0
		for _, l := range slices.Sorted(maps.Keys(c)) {
			m := c[l]
			if l == skip {
				m--
			}
			if m > n || m == n && m > 0 && l == majority {
				lab, n = l, m
			}
		}
		return lab
	}
	rule := Rule{Fields: fields, Cells: len(cells), Table: map[string]string{}}
	for k, c := range cells {
		rule.Table[k] = best(c, "")
	}
	loo, in := 0, 0
	for i, r := range rows {
		if rule.Table[keys[i]] == r.Label {
			in++
		}
		if best(cells[keys[i]], r.Label) == r.Label {
			loo++
		}
	}
	rule.Accuracy = float64(loo) / float64(len(rows))
	rule.InSample = float64(in) / float64(len(rows))
	// The strongest cell: most rows, then purest, among cells at least 90% pure.
	bestN, bestK, bestLab := 0, "", ""
	for _, k := range slices.Sorted(maps.Keys(cells)) {
		c := cells[k]
		tot := 0
		for _, n := range c {
			tot += n
		}
		lab := rule.Table[k]
		if c[lab]*10 >= tot*9 && c[lab] > bestN {
			bestN, bestK, bestLab = c[lab], k, lab
		}
	}
	if bestN > 0 {
		tot := 0
		for _, n := range cells[bestK] {
			tot += n
		}
		vals := strings.Split(bestK, "|")
		parts := make([]string, len(fields))
		for i, f := range fields {
			parts[i] = f + "=" + vals[i]
		}
		rule.Strongest = fmt.Sprintf("%s → %s (%d of %d rows)", strings.Join(parts, " & "), AbbrevLabel(bestLab), bestN, tot)
	}
	return rule
}

// shortcutWarnGain is how far above the majority baseline a rule's
// leave-one-out accuracy must be for validate to warn.
const shortcutWarnGain = 0.25

func (s *Shortcuts) findings(file string) []Finding {
	if s == nil {
		return nil
	}
	var out []Finding
	for _, r := range []Rule{s.Best1, s.Best2} {
		if r.Accuracy-s.Majority < shortcutWarnGain {
			continue
		}
		msg := fmt.Sprintf("%s alone predicts the label for %.1f%% of %d rows (leave-one-out; majority answer %.1f%%)",
			strings.Join(r.Fields, " + "), 100*r.Accuracy, s.Rows, 100*s.Majority)
		if r.Strongest != "" {
			msg += "; e.g. " + r.Strongest
		}
		out = append(out, Finding{Kind: "label-shortcut", File: file, Msg: msg})
		if len(r.Fields) == 1 && s.Best2.Accuracy <= r.Accuracy {
			break
		}
	}
	return out
}
