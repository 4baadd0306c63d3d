package netlogs

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/svbench/svbench/env"
)

// Rubric names.
const (
	RubricReference = "reference"
	RubricDefault   = "default"
)

// scored is what a reward function sees: the parse, the gold answer in
// canonical spelling ("Malicious", "Benign", or "" when unknown) and
// whether the row is one its record does not decide (Ambiguous).
type scored struct {
	out       Output
	answer    string
	ambiguous bool
}

// Ambiguous reports whether a row's meta marks it as one whose record does
// not show what decides it (meta.ambiguous, which the generator sets: a
// missing or in-between fact, a missing counter). A row without the mark —
// imported corpora, the reference's sets, older generator versions — counts
// as decided.
func Ambiguous(ex env.Example) bool {
	b, _ := ex.Meta["ambiguous"].(bool)
	return b
}

// referenceRubric reproduces the reference's four reward functions and
// weights exactly, including their quirks: case-sensitive labels, a missing
// or non-numeric confidence read as 0 (so a correct answer without a
// confidence loses calibration), and Abstain scored like a false positive.
var referenceRubric = env.Rubric[scored]{
	Name: RubricReference,
	Rewards: []env.Reward[scored]{
		{Name: "accuracy", Weight: 1.0, Min: 0, Max: 1, Fn: func(_ env.Example, s scored) float64 {
			if s.out.RefLabel == "" || s.answer == "" {
				return 0
			}
			return b2f(strings.EqualFold(s.out.RefLabel, s.answer))
		}},
		{Name: "format", Weight: 0.1, Min: 0, Max: 1, Fn: func(_ env.Example, s scored) float64 {
			return b2f(s.out.RefFormat)
		}},
		{Name: "calibration", Weight: 0.2, Min: 0, Max: 1, Fn: func(_ env.Example, s scored) float64 {
			if s.out.RefLabel == "" {
				return 0
			}
			correct := b2f(strings.EqualFold(s.out.RefLabel, s.answer))
			d := s.out.RefConfidence - correct
			if d < 0 {
				d = -d
			}
			return 1 - d
		}},
		{Name: "asymmetric_cost", Weight: 0.5, Min: -1, Max: 1, Fn: func(_ env.Example, s scored) float64 {
			if s.out.RefLabel == "" || s.answer == "" {
				return 0
			}
			switch {
			case strings.EqualFold(s.out.RefLabel, s.answer):
				return 1
			case s.out.RefLabel == LabelBenign && s.answer == LabelMalicious:
				return -1
			}
			return 0
		}},
	},
}

// Costs of the default rubric's decision outcomes, matching the metrics
// contract (a missed attack costs ten false alarms).
const (
	costFalsePositive = 0.1
	costFalseNegative = 1.0
)

// defaultRubric is svbench's rubric; README.md explains each choice and
// tabulates what typical answers earn.
var defaultRubric = env.Rubric[scored]{
	Name: RubricDefault,
	Rewards: []env.Reward[scored]{
		// accuracy: the label, matched case-insensitively, equals the answer.
		{Name: "accuracy", Weight: 1.0, Min: 0, Max: 1, Fn: func(_ env.Example, s scored) float64 {
			return b2f(s.out.Label != "" && s.out.Label != LabelAbstain && s.out.Label == s.answer)
		}},
		// format: the exact schema the system prompt asks for.
		{Name: "format", Weight: 0.1, Min: 0, Max: 1, Fn: func(_ env.Example, s scored) float64 {
			return b2f(s.out.StrictFormat)
		}},
		// calibration: 1 - Brier score of the confidence as the probability
		// that the label is right. Abstain is never right, so an honest
		// abstention reports a low confidence. No valid confidence earns 0:
		// a missing probability is not a calibrated one.
		{Name: "calibration", Weight: 0.2, Min: 0, Max: 1, Fn: func(_ env.Example, s scored) float64 {
			if s.out.Label == "" || !s.out.ConfidenceOK || s.answer == "" {
				return 0
			}
			y := b2f(s.out.Label == s.answer)
			d := s.out.Confidence - y
			return 1 - d*d
		}},
		// asymmetric_cost: +1 when right, minus the outcome's cost when
		// wrong (false negative 10× a false positive); abstaining costs nothing.
		{Name: "asymmetric_cost", Weight: 0.5, Min: -costFalseNegative, Max: 1, Fn: func(_ env.Example, s scored) float64 {
			if s.out.Label == "" || s.answer == "" || s.out.Label == LabelAbstain {
				return 0
			}
			switch {
			case s.out.Label == s.answer:
				return 1
			case s.out.Label == LabelBenign:
				return -costFalseNegative
			}
			return -costFalsePositive
		}},
		// abstention: credit for declining to decide a row whose record does
		// not decide it, and only there (issue #41: a flat credit made
		// abstaining on every row earn 69% of the features baseline, and
		// svtrain's GDPO arm converged to it). On such a row an abstention
		// earns 1.3, about midway between the best blind guess (Malicious at
		// 0.5, 0.975) and the least a right answer earns (1.6); on a decided
		// row it earns at most 0.3, under any guess's expected reward, so a
		// policy abstains only where it is confident the evidence is missing.
		{Name: "abstention", Weight: 1.0, Min: 0, Max: 1, Fn: func(_ env.Example, s scored) float64 {
			return b2f(s.out.Label == LabelAbstain && s.answer != "" && s.ambiguous)
		}},
	},
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// ScoreText scores one completion text against a canonical answer with the
// named rubric ("" = default).
// The row counts as decided (Ambiguous).
func ScoreText(text, answer, rubric string) (env.Score, bool) {
	return scoreParsed(env.Example{}, Parse(text), answer, rubric)
}

// ambiguousRow is the example of a row its record does not decide, for
// scoring answers outside a dataset.
var ambiguousRow = env.Example{Meta: map[string]any{"ambiguous": true}}

func scoreParsed(ex env.Example, out Output, answer, rubric string) (env.Score, bool) {
	s := scored{out: out, answer: answer, ambiguous: Ambiguous(ex)}
	switch rubric {
	case RubricReference:
		return referenceRubric.Evaluate(ex, s, map[string]any{
			"predicted_label": out.RefLabel,
			"confidence":      out.RefConfidence,
			"format_valid":    out.RefFormat,
			"object_found":    out.Object,
		}), true
	case "", RubricDefault:
		conf := 0.0
		if out.ConfidenceOK {
			conf = out.Confidence
		}
		return defaultRubric.Evaluate(ex, s, map[string]any{
			"predicted_label":  out.Label,
			"confidence":       conf,
			"confidence_valid": out.ConfidenceOK,
			"format_valid":     out.StrictFormat,
			"object_found":     out.Object,
			"has_rationale":    out.HasRationale,
		}), true
	}
	return env.Score{}, false
}

// embeddedAmbiguity is the ambiguity mark of the embedded example (the
// evaluation set, or a generated train or dev row) with this id and gold
// answer; ok is false when there is none. Only ids of the embedded sets'
// forms are looked up, so other rows never make the splits be generated.
func embeddedAmbiguity(id, answer string) (amb, ok bool) {
	if !strings.HasPrefix(id, "synth-") && !strings.HasPrefix(id, env.SplitTrain+"-") && !strings.HasPrefix(id, env.SplitDev+"-") {
		return false, false
	}
	amb, ok = embeddedMarks()[markKey{id, answer}]
	return amb, ok
}

type markKey struct{ id, answer string }

// markedSplits is generatedSplits, bound in init: parseRow, which the
// splits' generation calls, reaches this index, and a package variable
// naming generatedSplits here would be an initialization cycle.
var markedSplits func() (map[string][]byte, error)

func init() { markedSplits = generatedSplits }

// embeddedMarks indexes the embedded rows' marks, read from their JSON
// lines (not through parseRow, which consults this index; the embedded
// rows all carry their mark, so generating the splits never looks here).
var embeddedMarks = sync.OnceValue(func() map[markKey]bool {
	marks := map[markKey]bool{}
	add := func(data []byte) {
		for line := range bytes.Lines(data) {
			var r struct {
				ID     string `json:"id"`
				Answer string `json:"answer"`
				Meta   struct {
					Ambiguous *bool `json:"ambiguous"`
				} `json:"meta"`
			}
			if json.Unmarshal(line, &r) == nil && r.Meta.Ambiguous != nil {
				marks[markKey{r.ID, r.Answer}] = *r.Meta.Ambiguous
			}
		}
	}
	add(miniSet)
	if splits, err := markedSplits(); err == nil {
		for _, data := range splits {
			add(data)
		}
	}
	return marks
})
