package netlogs

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/svbench/svbench/dataset/integrity"
	"github.com/svbench/svbench/env"
)

// Out-of-sample shortcut audit (issues #33, #41). integrity.FindShortcuts,
// which `svbench data validate` runs, fits its rules on the set it scores,
// so on 150 rows a table can memorise its way under a bound it would break
// on fresh data, and a tell the generator plants in every row it writes (a
// field recorded only for one class) never shows as an error there. Here
// the learners a policy could build without reading the whole record —
// lookup tables over at most three fields and shallow trees — are fitted on
// the train split the server hands trainers, each cell answering what
// earns the most there (an abstention only where the rows it abstains on
// were ambiguous), chosen on dev as a policy would choose its model, and
// scored on rows they never saw (the evaluation set), with the default
// rubric, against the features baseline.

// ShortcutRow is one record's fields (RecordFields), whether its gold
// label is Malicious and whether the row is one its record does not decide
// (Ambiguous: what an abstention earns there differs).
type ShortcutRow struct {
	Fields    map[string]string
	Malicious bool
	Ambiguous bool
}

// Shortcut is a learner fitted on labelled records that answers from a
// few of a record's fields.
type Shortcut struct {
	// Name says what it is: "lookup interval_cv+history", "tree depth 3".
	Name string
	// Fields are the fields it reads.
	Fields []string
	// Lookup is true for a lookup table, false for a tree.
	Lookup bool
	decide func(map[string]string) (string, float64)
}

// Decide answers a record's fields: a label and its confidence.
func (s Shortcut) Decide(fields map[string]string) (string, float64) { return s.decide(fields) }

// Policy answers from the last user message's record.
func (s Shortcut) Policy() env.Policy { return answerFunc(s.decide) }

// ShortcutRows turns a dataset's examples into audit rows; examples
// whose question is not a record are left out.
func (e *Environment) ShortcutRows(ds *env.Dataset) []ShortcutRow {
	rows := make([]ShortcutRow, 0, len(ds.Examples))
	for _, ex := range ds.Examples {
		f := e.Fields(ex)
		p, err := env.PayloadOf[payload](e, ex)
		if f == nil || err != nil {
			continue
		}
		rows = append(rows, ShortcutRow{Fields: f, Malicious: p.answer == LabelMalicious, Ambiguous: Ambiguous(ex)})
	}
	return rows
}

// MaxShortcutFields is the most fields a lookup shortcut reads.
const MaxShortcutFields = 3

// shortcutTreeDepth is the deepest tree fitted; minShortcutLeaf the
// fewest training rows a tree leaf keeps, so leaves are estimates, not
// single memorised rows.
const (
	shortcutTreeDepth = 3
	minShortcutLeaf   = 10
)

// FitShortcuts fits every lookup table over one to MaxShortcutFields
// fields and a tree of each depth up to shortcutTreeDepth on train.
// Numbers are binned into train's quartiles and missing values stay a
// value of their own (integrity.Binner), so a field recorded for one
// class only is a shortcut here.
func FitShortcuts(train []ShortcutRow) []Shortcut {
	if len(train) == 0 {
		return nil
	}
	labelled := make([]integrity.FieldRow, len(train))
	fieldSet := map[string]bool{}
	for i, r := range train {
		labelled[i] = integrity.FieldRow{Fields: r.Fields, Label: labelName(r.Malicious)}
		for f := range r.Fields {
			fieldSet[f] = true
		}
	}
	fields := slices.Sorted(maps.Keys(fieldSet))
	s := integrity.FindShortcuts(labelled)
	if s == nil {
		return nil
	}
	binned := make([]map[string]string, len(train))
	for i, r := range train {
		binned[i] = binRow(s.Binner, fields, r.Fields)
	}
	prior := cellDecision(count(train, isMalicious), count(train, isAmbiguous), len(train))
	var out []Shortcut
	var combos func(start int, picked []string)
	combos = func(start int, picked []string) {
		if len(picked) > 0 {
			out = append(out, fitLookup(s.Binner, train, binned, slices.Clone(picked), prior))
		}
		if len(picked) == MaxShortcutFields {
			return
		}
		for i := start; i < len(fields); i++ {
			combos(i+1, append(picked, fields[i]))
		}
	}
	combos(0, nil)
	for depth := 1; depth <= shortcutTreeDepth; depth++ {
		out = append(out, fitTree(s.Binner, fields, train, binned, depth))
	}
	return out
}

func labelName(malicious bool) string {
	if malicious {
		return LabelMalicious
	}
	return LabelBenign
}

func isMalicious(r ShortcutRow) bool { return r.Malicious }
func isAmbiguous(r ShortcutRow) bool { return r.Ambiguous }

func count(rows []ShortcutRow, pred func(ShortcutRow) bool) int {
	n := 0
	for _, r := range rows {
		if pred(r) {
			n++
		}
	}
	return n
}

func binRow(b integrity.Binner, fields []string, raw map[string]string) map[string]string {
	m := make(map[string]string, len(fields))
	for _, f := range fields {
		m[f] = b.Bin(f, raw[f])
	}
	return m
}

type decision struct {
	label string
	conf  float64
}

func fitLookup(b integrity.Binner, train []ShortcutRow, binned []map[string]string, fields []string, prior decision) Shortcut {
	type tally struct{ mal, amb, n int }
	cells := map[string]*tally{}
	for i, r := range train {
		k := integrity.CellKey(binned[i], fields)
		c := cells[k]
		if c == nil {
			c = &tally{}
			cells[k] = c
		}
		c.n++
		c.mal += int(b2f(r.Malicious))
		c.amb += int(b2f(r.Ambiguous))
	}
	table := make(map[string]decision, len(cells))
	for k, c := range cells {
		table[k] = cellDecision(c.mal, c.amb, c.n)
	}
	return Shortcut{
		Name:   "lookup " + strings.Join(fields, "+"),
		Fields: fields,
		Lookup: true,
		decide: func(raw map[string]string) (string, float64) {
			a, ok := table[integrity.CellKey(binRow(b, fields, raw), fields)]
			if !ok {
				a = prior
			}
			return a.label, a.conf
		},
	}
}

// node is a tree node: a leaf answers; an inner node sends rows whose
// field has the value to yes, the rest to no.
type node struct {
	field, value string
	yes, no      *node
	leaf         decision
}

func fitTree(b integrity.Binner, fields []string, train []ShortcutRow, binned []map[string]string, depth int) Shortcut {
	idx := make([]int, len(train))
	for i := range idx {
		idx[i] = i
	}
	used := map[string]bool{}
	root := growTree(fields, train, binned, idx, depth, used)
	return Shortcut{
		Name:   fmt.Sprintf("tree depth %d", depth),
		Fields: slices.Sorted(maps.Keys(used)),
		decide: func(raw map[string]string) (string, float64) {
			n := root
			for n.yes != nil {
				if b.Bin(n.field, raw[n.field]) == n.value {
					n = n.yes
				} else {
					n = n.no
				}
			}
			return n.leaf.label, n.leaf.conf
		},
	}
}

// growTree splits greedily on the (field, value) test that most lowers
// the Gini impurity, CART-style.
func growTree(fields []string, train []ShortcutRow, binned []map[string]string, idx []int, depth int, used map[string]bool) *node {
	mal, amb := 0, 0
	for _, i := range idx {
		mal += int(b2f(train[i].Malicious))
		amb += int(b2f(train[i].Ambiguous))
	}
	leaf := &node{leaf: cellDecision(mal, amb, len(idx))}
	if depth == 0 || mal == 0 || mal == len(idx) || len(idx) < 2*minShortcutLeaf {
		return leaf
	}
	gini := func(m, n int) float64 {
		if n == 0 {
			return 0
		}
		p := float64(m) / float64(n)
		return float64(n) * 2 * p * (1 - p)
	}
	best, bestF, bestV := gini(mal, len(idx))-1e-9, "", ""
	for _, f := range fields {
		type cnt struct{ mal, n int }
		byValue := map[string]*cnt{}
		for _, i := range idx {
			v := binned[i][f]
			c := byValue[v]
			if c == nil {
				c = &cnt{}
				byValue[v] = c
			}
			c.n++
			if train[i].Malicious {
				c.mal++
			}
		}
		for _, v := range slices.Sorted(maps.Keys(byValue)) {
			c := byValue[v]
			if c.n < minShortcutLeaf || len(idx)-c.n < minShortcutLeaf {
				continue
			}
			if g := gini(c.mal, c.n) + gini(mal-c.mal, len(idx)-c.n); g < best {
				best, bestF, bestV = g, f, v
			}
		}
	}
	if bestF == "" {
		return leaf
	}
	var yes, no []int
	for _, i := range idx {
		if binned[i][bestF] == bestV {
			yes = append(yes, i)
		} else {
			no = append(no, i)
		}
	}
	used[bestF] = true
	return &node{field: bestF, value: bestV,
		yes: growTree(fields, train, binned, yes, depth-1, used),
		no:  growTree(fields, train, binned, no, depth-1, used)}
}

// cellDecision is the answer with the highest expected default-rubric
// reward for a cell where mal of n training rows were malicious and amb
// were ambiguous: the strongest use a lookup can make of what it learnt,
// as a policy trained on the rewards would (an abstention pays only on
// ambiguous rows). The estimates are smoothed (add one to each side) so a
// cell of three rows does not claim certainty.
func cellDecision(mal, amb, n int) decision {
	p := (float64(mal) + 1) / (float64(n) + 2)
	q := (float64(amb) + 1) / (float64(n) + 2)
	cands := []decision{
		{LabelMalicious, round2(p)},
		{LabelBenign, round2(1 - p)},
		{LabelAbstain, 0},
	}
	best, bestR := cands[0], -1e9
	for _, a := range cands {
		r := 0.0
		for _, amb := range []bool{true, false} {
			w := q
			if !amb {
				w = 1 - q
			}
			r += w * (p*answerReward(a, true, amb) + (1-p)*answerReward(a, false, amb))
		}
		if r > bestR {
			best, bestR = a, r
		}
	}
	return best
}

var rewardCache sync.Map // answerKey → float64

type answerKey struct {
	a                    decision
	malicious, ambiguous bool
}

// answerReward is the default rubric's total for an answer (as its JSON
// text) against a gold label, on an ambiguous row or a decided one.
func answerReward(a decision, malicious, ambiguous bool) float64 {
	k := answerKey{a, malicious, ambiguous}
	if r, ok := rewardCache.Load(k); ok {
		return r.(float64)
	}
	ex := env.Example{}
	if ambiguous {
		ex = ambiguousRow
	}
	s, _ := scoreParsed(ex, Parse(answerJSON(a.label, a.conf, "fitted shortcut")), labelName(malicious), RubricDefault)
	rewardCache.Store(k, s.Total)
	return s.Total
}

// ShortcutReward is a shortcut's mean default-rubric reward over rows.
func ShortcutReward(s Shortcut, rows []ShortcutRow) float64 {
	if len(rows) == 0 {
		return 0
	}
	sum := 0.0
	for _, r := range rows {
		l, c := s.decide(r.Fields)
		sum += answerReward(decision{l, c}, r.Malicious, r.Ambiguous)
	}
	return sum / float64(len(rows))
}

// ScoredShortcut is a shortcut with its mean reward on some rows.
type ScoredShortcut struct {
	Shortcut
	Reward float64
}

// RankShortcuts scores every shortcut on rows, best first.
func RankShortcuts(ss []Shortcut, rows []ShortcutRow) []ScoredShortcut {
	out := make([]ScoredShortcut, len(ss))
	for i, s := range ss {
		out[i] = ScoredShortcut{s, ShortcutReward(s, rows)}
	}
	slices.SortStableFunc(out, func(a, b ScoredShortcut) int {
		return cmp.Or(cmp.Compare(b.Reward, a.Reward), cmp.Compare(len(a.Fields), len(b.Fields)), strings.Compare(a.Name, b.Name))
	})
	return out
}

// PresenceRows keeps only whether each field was recorded: the view in
// which a generator that records a field for one class more than the
// other (issue #33's interval_cv) shows.
func PresenceRows(rows []ShortcutRow) []ShortcutRow {
	out := make([]ShortcutRow, len(rows))
	for i, r := range rows {
		out[i] = ShortcutRow{Fields: presenceFields(r.Fields), Malicious: r.Malicious, Ambiguous: r.Ambiguous}
	}
	return out
}

func presenceFields(fields map[string]string) map[string]string {
	f := make(map[string]string, len(fields))
	for k, v := range fields {
		f[k] = "recorded"
		if v == "" || v == "-" {
			f[k] = "-"
		}
	}
	return f
}

// BestLookups picks from shortcuts ranked best first (on dev) the first
// lookup over each number of fields: index k holds the best k-field lookup
// (index 0 is unused; a missing k is the zero value).
func BestLookups(ranked []ScoredShortcut) [MaxShortcutFields + 1]ScoredShortcut {
	var best [MaxShortcutFields + 1]ScoredShortcut
	for _, s := range ranked {
		if k := len(s.Fields); s.Lookup && k <= MaxShortcutFields && best[k].Name == "" {
			best[k] = s
		}
	}
	return best
}

// fittedShortcuts are the learners fitted on the train split and ranked
// on dev, for values and for presence alone: what a policy trained on
// E1's own data, choosing its model on held-out data as it should, would
// arrive at. Fitting takes seconds, so it is done once per process.
var fittedShortcuts = sync.OnceValues(func() (fitted, error) {
	e := New()
	ctx := context.Background()
	train, err := e.LoadSplit(ctx, env.SplitTrain)
	if err != nil {
		return fitted{}, err
	}
	dev, err := e.LoadSplit(ctx, env.SplitDev)
	if err != nil {
		return fitted{}, err
	}
	tr, dv := e.ShortcutRows(train), e.ShortcutRows(dev)
	return fitted{
		values:   RankShortcuts(FitShortcuts(tr), dv),
		presence: RankShortcuts(FitShortcuts(PresenceRows(tr)), PresenceRows(dv)),
	}, nil
})

// fitted holds the shortcuts over field values and over field presence,
// each ranked best first on dev.
type fitted struct{ values, presence []ScoredShortcut }
