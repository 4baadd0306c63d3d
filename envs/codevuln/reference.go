package codevuln

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/svbench/svbench/env"
)

// The reference rubric reproduces the Python project's E3 formula
// (patch_and_test weight 1.0, format weight 0.2) with svbench's verifiers
// standing in for its in-process test_spec runner:
//
//	r = .6·tests + .2·sim + .1·consistency + .1·expl; r = max(0, r−.1) when
//	the tests failed; patch_and_test = min(r, 1)
//
// tests is 1 when every visible and hidden test passes; sim is difflib's
// SequenceMatcher ratio (autojunk on) between the expected diff (difflib's
// unified_diff of the reference fix, as the reference builds it) and the
// answer's diff, both stripped; consistency compares Python truthiness of
// the claimed tests_passed with the outcome; expl is the share of
// explanation keywords present, and svbench's tasks have none, so any
// non-blank explanation scores 1. Only a JSON answer counts (the reference
// gives 0 to anything json.loads and its fence fallback cannot read).

// RefInputs are the quantities the reference formula reads.
type RefInputs struct {
	ParsedJSON     bool
	Empty          bool // the parsed answer is an empty object
	Diff           string
	ExpectedDiff   string
	TestsPassed    bool
	Claimed        any
	HasClaimed     bool
	Explanation    string
	Keywords       []string
	HasDiff        bool
	HasExplanation bool
}

// pyTruthy is Python's bool() of a decoded JSON value.
func pyTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case float64:
		return x != 0
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// RefPatchAndTest is the reference's patch_and_test reward.
func RefPatchAndTest(in RefInputs) (float64, map[string]float64) {
	parts := map[string]float64{}
	if !in.ParsedJSON || in.Empty {
		return 0, parts
	}
	tests := b2f(in.TestsPassed)
	consistency := b2f(pyTruthy(in.Claimed) == in.TestsPassed)
	var sim float64
	switch {
	case strings.TrimSpace(in.ExpectedDiff) == "":
		sim = 1
	case strings.TrimSpace(in.Diff) == "":
		sim = 0
	default:
		sim = SequenceRatio(strings.TrimSpace(in.ExpectedDiff), strings.TrimSpace(in.Diff))
	}
	var expl float64
	if len(in.Keywords) == 0 {
		expl = b2f(strings.TrimSpace(in.Explanation) != "")
	} else {
		low := strings.ToLower(in.Explanation)
		n := 0
		for _, k := range in.Keywords {
			if strings.Contains(low, strings.ToLower(k)) {
				n++
			}
		}
		expl = float64(n) / float64(len(in.Keywords))
	}
	r := 0.6*tests + 0.2*sim + 0.1*consistency + 0.1*expl
	if !in.TestsPassed {
		r = math.Max(0, r-0.1)
	}
	parts["tests"], parts["similarity"], parts["consistency"], parts["explanation"] = tests, sim, consistency, expl
	return math.Min(r, 1), parts
}

// RefFormat is the reference's format reward.
func RefFormat(in RefInputs) float64 {
	if !in.ParsedJSON || !in.HasDiff || !in.HasClaimed || !in.HasExplanation {
		return 0
	}
	if _, ok := in.Claimed.(bool); !ok {
		return 0.5
	}
	if strings.TrimSpace(in.Explanation) == "" {
		return 0.5
	}
	return 1
}

// refParse reads text as the reference does: json.loads of the whole text,
// else the first ``` or ```json fence.
func refParse(text string) (map[string]any, bool) {
	var m map[string]any
	if json.Unmarshal([]byte(strings.TrimSpace(text)), &m) == nil {
		return m, true
	}
	if f := fenceRe.FindStringSubmatch(text); f != nil && (f[1] == "" || strings.EqualFold(f[1], "json")) {
		if json.Unmarshal([]byte(strings.TrimSpace(f[2])), &m) == nil {
			return m, true
		}
	}
	return nil, false
}

// expectedDiff is the reference's expected_diff for a task: difflib's
// unified diff of each changed file, joined by newlines.
func expectedDiff(ev *Evaluation) string {
	var parts []string
	fix := ev.Task.Fixed()
	for _, f := range ev.Task.Files {
		if string(ev.Task.Src[f]) != string(fix[f]) {
			parts = append(parts, UnifiedDiff(f, string(ev.Task.Src[f]), string(fix[f])))
		}
	}
	return strings.Join(parts, "\n")
}

func referenceScore(ev *Evaluation, v map[string]any) env.Score {
	m, ok := refParse(rawText(ev))
	in := RefInputs{ParsedJSON: ok, Empty: ok && len(m) == 0, ExpectedDiff: expectedDiff(ev),
		TestsPassed: ev.Tested && ev.Applied() && ev.Visible.OK && ev.Hidden.OK}
	if ok {
		in.Diff, _ = m["diff"].(string)
		_, in.HasDiff = m["diff"]
		in.Claimed, in.HasClaimed = m["tests_passed"]
		var e any
		e, in.HasExplanation = m["explanation"]
		in.Explanation, _ = e.(string)
	}
	pt, parts := RefPatchAndTest(in)
	f := RefFormat(in)
	for k, x := range parts {
		v["ref_"+k] = x
	}
	return env.Score{Total: pt + 0.2*f, Components: map[string]float64{"patch_and_test": pt, "format": f},
		Weights: map[string]float64{"patch_and_test": 1, "format": 0.2}, Parsed: v, Rubric: RubricReference}
}

// rawText is the answer text the evaluation parsed (kept for the
// reference parser, which reads the text its own way).
func rawText(ev *Evaluation) string { return ev.Answer.raw }
