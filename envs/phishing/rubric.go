package phishing

import (
	"math"
	"strings"
	"unicode/utf8"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/phishing/mail"
)

// Rubric names.
const (
	RubricDefault   = "default"
	RubricReference = "reference"
)

// scored is what the reward functions share: the parsed output, the
// example's payload and the evidence grounding, computed once.
type scored struct {
	out Output
	p   *payload
	g   Grounding
}

func (s scored) correct() float64 {
	if s.out.Label != "" && s.out.Label == s.p.gold {
		return 1
	}
	return 0
}

// referenceRubric reproduces the reference's formulas (weights 1.0 / .2 /
// .2 / .4 / .2) so numbers stay comparable. Its evidence score is the
// documented formula — matching against the row's indicator list — not the
// live behaviour (always 0 because of a reference bug).
var referenceRubric = env.Rubric[scored]{
	Name: RubricReference,
	Rewards: []env.Reward[scored]{
		{Name: "accuracy", Weight: 1.0, Min: 0, Max: 1, Fn: func(_ env.Example, s scored) float64 { return s.correct() }},
		{Name: "format", Weight: 0.2, Min: 0, Max: 1, Fn: refFormat},
		{Name: "calibration", Weight: 0.2, Min: 0, Max: 1, Fn: func(_ env.Example, s scored) float64 {
			if s.out.Label == "" {
				return 0
			}
			return 1 - math.Abs(s.out.RefConfidence-s.correct())
		}},
		{Name: "asymmetric_cost", Weight: 0.4, Min: -1, Max: 1, Fn: refAsymmetric},
		{Name: "evidence", Weight: 0.2, Min: 0, Max: 1, Fn: refEvidence},
	},
}

func refFormat(_ env.Example, s scored) float64 {
	if s.out.Label == "" || !s.out.RefConfOK {
		return 0
	}
	if s.out.EvidenceGiven {
		for _, e := range s.out.RefStrings {
			if strings.TrimSpace(e) != "" {
				return 1
			}
		}
		return 0
	}
	return 1
}

func refAsymmetric(_ env.Example, s scored) float64 {
	pred, gold := s.out.Label, s.p.gold
	switch {
	case pred == "":
		return 0
	case pred == gold:
		return 1
	case gold == LabelPhishing && pred == LabelLegitimate:
		return -1
	case gold == LabelPhishing && pred == LabelAbstain:
		return 0.3
	case gold == LabelLegitimate && pred == LabelPhishing:
		return -0.2
	case gold == LabelLegitimate && pred == LabelAbstain:
		return 0.5
	case gold == LabelAbstain:
		return 0.3
	}
	return 0
}

func refEvidence(_ env.Example, s scored) float64 {
	if s.p.gold != LabelPhishing || len(s.out.RefStrings) == 0 {
		return 0
	}
	prompt := strings.ToLower(s.p.email)
	inds := make([]string, len(s.p.refInd))
	for i, in := range s.p.refInd {
		inds[i] = strings.ToLower(in)
	}
	total := 0.0
	for _, e := range s.out.RefStrings {
		e = strings.ToLower(e)
		hit := false
		for _, in := range inds {
			if e == in || strings.Contains(e, in) || strings.Contains(in, e) {
				hit = true
				break
			}
		}
		switch {
		case hit:
			total++
		case strings.Contains(prompt, e):
			total += 0.5
		}
	}
	return math.Min(1, total/float64(len(s.out.RefStrings)))
}

// defaultRubric is svbench's scoring: a proper calibration score,
// asymmetric costs where a missed phish costs most and abstaining less than
// a wrong call, a strict format check, and evidence grounded in the message
// and in the extracted indicators (see README.md).
var defaultRubric = env.Rubric[scored]{
	Name: RubricDefault,
	Rewards: []env.Reward[scored]{
		{Name: "accuracy", Weight: 1.0, Min: 0, Max: 1, Fn: func(_ env.Example, s scored) float64 { return s.correct() }},
		{Name: "calibration", Weight: 0.2, Min: 0, Max: 1, Fn: defCalibration},
		{Name: "asymmetric_cost", Weight: 0.4, Min: -1, Max: 1, Fn: defAsymmetric},
		{Name: "format", Weight: 0.2, Min: 0, Max: 1, Fn: func(_ env.Example, s scored) float64 { return b2f(defFormatValid(s.out)) }},
		{Name: "evidence", Weight: 0.3, Min: -0.5, Max: 1, Fn: defEvidence},
	},
}

// defCalibration is one minus the Brier score of the probability given to
// the true answer (a proper scoring rule, unlike 1−|c−y|, which rewards
// always answering 0 or 1). Abstaining scores as probability ½.
func defCalibration(_ env.Example, s scored) float64 {
	switch {
	case s.out.Label == "" || !s.out.ConfNumber:
		return 0
	case s.out.Label == LabelAbstain:
		return 0.75
	}
	d := s.out.Confidence - s.correct()
	return 1 - d*d
}

func defAsymmetric(_ env.Example, s scored) float64 {
	pred, gold := s.out.Label, s.p.gold
	switch {
	case pred != "" && pred == gold:
		return 1
	case gold == LabelPhishing && pred == LabelAbstain:
		return 0
	case gold == LabelPhishing: // missed phish or no answer
		return -1
	case gold == LabelLegitimate && pred == LabelAbstain:
		return 0.3
	case gold == LabelLegitimate: // false alarm or no answer
		return -0.4
	default: // gold Abstain: any committed answer is a partial miss
		return 0.3
	}
}

func defFormatValid(o Output) bool {
	return o.ExactLabel && o.ConfNumber && o.EvidenceWellFormed
}

func defEvidence(_ env.Example, s scored) float64 {
	if s.out.Label == "" {
		return 0
	}
	g := s.g
	var v float64
	switch {
	case s.p.gold == LabelPhishing:
		if g.Considered == 0 {
			return 0
		}
		if g.IndicatorTypes == 0 {
			v = g.Precision
		} else {
			v = 0.5*g.Precision + 0.5*g.Recall
		}
	default:
		// On legitimate mail every quoted item must be real: invented red
		// flags lower the score, an empty list is perfect.
		if g.Considered == 0 {
			return 1
		}
		v = g.Precision
	}
	if g.Excess {
		v -= 0.5
	}
	return math.Max(-0.5, v)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// Grounding is the verdict on a model's evidence list.
type Grounding struct {
	Considered int `json:"considered"`
	Grounded   int `json:"grounded"`
	Duplicates int `json:"duplicates"`
	// Ungrounded counts items that are untyped, too short, absent from the
	// message, or match no indicator of their type.
	Ungrounded int `json:"ungrounded"`
	// Excess: the list was longer than MaxEvidence (the tail was not read).
	Excess bool `json:"excess"`
	// Precision = Grounded / Considered (0 when nothing was given).
	Precision float64 `json:"precision"`
	// Recall = indicator types covered / indicator types present.
	Recall         float64 `json:"recall"`
	IndicatorTypes int     `json:"indicator_types"`
}

// Ground checks evidence items against an analysed message and its
// normalised haystack. Work is bounded: at most MaxEvidence items of at
// most maxItemLen bytes each are examined.
func Ground(items []Item, total int, a *mail.Analysis, hay string) Grounding {
	g := Grounding{Excess: total > MaxEvidence}
	types := map[string]bool{}
	norm := make([]string, len(a.Indicators))
	for i, in := range a.Indicators {
		types[in.Type] = true
		norm[i] = normalize(in.Value)
	}
	g.IndicatorTypes = len(types)
	covered := map[string]bool{}
	usedInd := map[int]bool{}
	seen := map[string]bool{}
	for i, it := range items {
		if i >= MaxEvidence {
			break
		}
		g.Considered++
		v := normalize(it.Value)
		if !it.Typed || !isKnownType(it.Type) || len(v) > maxItemLen || utf8.RuneCountInString(v) < 2 {
			g.Ungrounded++
			continue
		}
		key := it.Type + "\x00" + v
		if seen[key] {
			g.Duplicates++
			continue
		}
		seen[key] = true
		if !strings.Contains(hay, v) {
			g.Ungrounded++
			continue
		}
		match := -1
		dup := false
		for j, in := range a.Indicators {
			if in.Type != it.Type || !valueMatches(v, norm[j]) {
				continue
			}
			if usedInd[j] {
				dup = true
				continue
			}
			match = j
			break
		}
		switch {
		case match >= 0:
			usedInd[match] = true
			covered[it.Type] = true
			g.Grounded++
		case dup:
			g.Duplicates++
		default:
			g.Ungrounded++
		}
	}
	if g.Considered > 0 {
		g.Precision = float64(g.Grounded) / float64(g.Considered)
	}
	if g.IndicatorTypes > 0 {
		g.Recall = float64(len(covered)) / float64(g.IndicatorTypes)
	}
	return g
}

// valueMatches: the item names the indicator's value exactly, quotes a part
// of it (at least 4 characters, or whole tokens), or quotes a span around it
// that is not much longer than the value itself.
func valueMatches(v, ind string) bool {
	if v == ind {
		return true
	}
	if strings.Contains(ind, v) {
		return utf8.RuneCountInString(v) >= 4 || wholeToken(ind, v)
	}
	if strings.Contains(v, ind) {
		return len(v) <= 2*len(ind)+64
	}
	return false
}

func wholeToken(s, t string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], t)
		if j < 0 {
			return false
		}
		st, en := i+j, i+j+len(t)
		if (st == 0 || !alnum(s[st-1])) && (en == len(s) || !alnum(s[en])) {
			return true
		}
		i = st + 1
	}
}

func alnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c >= 0x80
}

func isKnownType(t string) bool { return mail.IsType(t) }
