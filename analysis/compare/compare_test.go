package compare

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
)

func TestCompareByHand(t *testing.T) {
	// diffs (b − a) = 1, 1, 0, −1: mean 0.25. McNemar: one pair passes
	// only in A, two only in B; exact p = 2·P(Bin(3, ½) ≤ 1) = 2·4/8 = 1.
	// Sign flips of (1, 1, −1) give |sum| ≥ 1 in all 8 cases: p = 1.
	q := Compare("solved", []float64{0, 0, 1, 1}, []float64{1, 1, 1, 0}, Options{})
	if q.Diff != 0.25 || q.MeanA != 0.5 || q.MeanB != 0.75 {
		t.Fatalf("means %+v", q)
	}
	if q.McNemar == nil || q.McNemar.OnlyA != 1 || q.McNemar.OnlyB != 2 || q.McNemar.P != 1 {
		t.Fatalf("mcnemar %+v", q.McNemar)
	}
	if q.P < 0.99 || q.Test != "sign-flip permutation" {
		t.Fatalf("p %v (%s)", q.P, q.Test)
	}
	if q.DiffLo > q.Diff || q.DiffHi < q.Diff {
		t.Fatalf("CI [%v, %v] excludes %v", q.DiffLo, q.DiffHi, q.Diff)
	}
	if q.Significant() {
		t.Fatalf("a 4-row difference reported as significant: %+v", q)
	}
}

func TestCompareClearDifference(t *testing.T) {
	a, b := make([]float64, 30), make([]float64, 30)
	for i := range b {
		b[i] = 1
	}
	q := Compare("accuracy", a, b, Options{})
	// Only the all-plus and all-minus flips reach |sum| = 30.
	if q.P > 0.001 || !q.Significant() || q.DiffLo != 1 || q.DiffHi != 1 {
		t.Fatalf("%+v", q)
	}
	if q.EffectSize != nil {
		t.Fatalf("effect size defined with zero spread: %v", *q.EffectSize)
	}
	if q.McNemar.P > 1e-8 {
		t.Fatalf("McNemar p %v for 30 discordant pairs all one way", q.McNemar.P)
	}
}

func TestPairedT(t *testing.T) {
	// d = 1..5: mean 3, sd 1.5811, t = 4.2426 on 4 df, two-sided p = 0.013236.
	if p := pairedT([]float64{1, 2, 3, 4, 5}); math.Abs(p-0.013236) > 1e-5 {
		t.Fatalf("p = %v", p)
	}
	q := Compare("reward", []float64{0, 0, 0, 0, 0}, []float64{1, 2, 3, 4, 5}, Options{PermutationBudget: 1})
	if q.Test != "paired t" || math.Abs(q.P-0.013236) > 1e-5 || q.EffectSize == nil || math.Abs(*q.EffectSize-3/1.5811388) > 1e-6 {
		t.Fatalf("%+v", q)
	}
}

func TestPairAndSlices(t *testing.T) {
	row := func(key string, v float64, diff string) Row {
		return Row{Key: key, Values: map[string]float64{"reward": v}, Slices: map[string]string{"difficulty": diff}}
	}
	a := []Row{row("0/0", 1, "easy"), row("1/0", 0, "hard"), row("2/0", 0, "hard"), row("9/0", 1, "easy")}
	b := []Row{row("2/0", 1, "hard"), row("0/0", 1, "easy"), row("1/0", 1, "hard"), row("7/0", 0, "easy")}
	p := Pair(a, b)
	if len(p.A) != 3 || p.OnlyA != 1 || p.OnlyB != 1 {
		t.Fatalf("pairs %d, only A %d, only B %d", len(p.A), p.OnlyA, p.OnlyB)
	}
	// One pair of easy, two of hard: both listed with their n, neither
	// tested (fewer than MinSliceN pairs).
	sl := Slices(p, []string{"difficulty"}, []string{"reward"}, Options{})
	if len(sl) != 2 || sl[0].Value != "easy" || sl[0].N != 1 || sl[1].Value != "hard" || sl[1].N != 2 || sl[0].Tested() || len(sl[1].Quantity) != 0 {
		t.Fatalf("slices %+v", sl)
	}
}

func TestDeterministic(t *testing.T) {
	a := []float64{0.1, 0.5, 0.3, 0.9, 0.2, 0.4}
	b := []float64{0.2, 0.4, 0.8, 0.7, 0.6, 0.1}
	q1 := Compare("r", a, b, Options{Seed: 3})
	q2 := Compare("r", a, b, Options{Seed: 3})
	if q1.P != q2.P || q1.DiffLo != q2.DiffLo || q1.DiffHi != q2.DiffHi {
		t.Fatalf("same seed, different results: %+v vs %+v", q1, q2)
	}
}

func TestMismatchesSamplingAndSystemPrompt(t *testing.T) {
	meta := func(sampling, prompt string) *artifact.Metadata {
		return &artifact.Metadata{Environment: "e1", Rubric: "default", DatasetRev: "r1", Rollouts: 1,
			Sampling: json.RawMessage(sampling), Launch: artifact.Launch{SystemPromptSHA256: prompt}}
	}
	base := `{"temperature":0,"max_tokens":512,"extra":{"chat_template_kwargs":{"enable_thinking":false}}}`
	for _, tc := range []struct {
		name     string
		b        *artifact.Metadata
		mismatch []string
	}{
		{"same", meta(base, ""), nil},
		{"same extra body, keys in another order", meta(`{"max_tokens":512,"extra":{"chat_template_kwargs":{"enable_thinking":false}},"temperature":0}`, ""), nil},
		{"temperature", meta(`{"temperature":0.6,"max_tokens":512,"extra":{"chat_template_kwargs":{"enable_thinking":false}}}`, ""), []string{"temperature"}},
		{"temperature left to the server", meta(`{"max_tokens":512,"extra":{"chat_template_kwargs":{"enable_thinking":false}}}`, ""), []string{"temperature"}},
		{"top_p", meta(`{"temperature":0,"top_p":0.95,"max_tokens":512,"extra":{"chat_template_kwargs":{"enable_thinking":false}}}`, ""), []string{"top_p"}},
		{"thinking", meta(`{"temperature":0,"max_tokens":512,"extra":{"chat_template_kwargs":{"enable_thinking":true}}}`, ""), []string{"extra request body"}},
		{"T=0.6 thinking", meta(`{"temperature":0.6,"max_tokens":512,"extra":{"chat_template_kwargs":{"enable_thinking":true}}}`, ""), []string{"temperature", "extra request body"}},
		{"custom system prompt against the default", meta(base, "abc123"), []string{"system prompt sha256"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, m := range Mismatches(meta(base, ""), tc.b) {
				got = append(got, m.Field)
			}
			if !slices.Equal(got, tc.mismatch) {
				t.Fatalf("mismatches %q, want %q", got, tc.mismatch)
			}
		})
	}
}

func TestHolmByHand(t *testing.T) {
	// p = .01, .04, .03 (m = 3): sorted .01·3 = .03, .03·2 = .06,
	// .04·1 = .04 raised to .06 to stay monotone.
	qs := []*Quantity{{P: 0.01}, {P: 0.04}, {P: 0.03}}
	holm(qs)
	for i, want := range []float64{0.03, 0.06, 0.06} {
		if got := *qs[i].PAdjusted; math.Abs(got-want) > 1e-12 {
			t.Errorf("p %v: adjusted %v, want %v", qs[i].P, got, want)
		}
	}
}

func TestBold(t *testing.T) {
	adj := func(p float64) *float64 { return &p }
	for _, tc := range []struct {
		name string
		q    Quantity
		bold bool
	}{
		{"interval excludes 0, p small", Quantity{DiffLo: 0.1, DiffHi: 0.3, P: 0.01}, true},
		{"interval includes 0", Quantity{DiffLo: -0.1, DiffHi: 0.3, P: 0.01}, false},
		{"degenerate interval", Quantity{DiffLo: 1, DiffHi: 1, P: 0.001}, false},
		{"p over alpha", Quantity{DiffLo: 0.1, DiffHi: 0.3, P: 0.49}, false},
		{"adjusted p over alpha", Quantity{DiffLo: 0.1, DiffHi: 0.3, P: 0.01, PAdjusted: adj(0.4)}, false},
		{"adjusted p under alpha", Quantity{DiffLo: -0.3, DiffHi: -0.1, P: 0.001, PAdjusted: adj(0.02)}, true},
	} {
		if got := tc.q.Bold(); got != tc.bold {
			t.Errorf("%s: bold %v, want %v", tc.name, got, tc.bold)
		}
	}
}

// TestSliceTable: of ~40 slices, a 2-pair slice is not tested and a slice
// whose differences are all equal (a degenerate interval) is never bold;
// p-values are Holm-adjusted over the tested slices.
func TestSliceTable(t *testing.T) {
	var a, b []Row
	add := func(slice string, n int, diff func(i int) float64) {
		for i := range n {
			key := fmt.Sprintf("%s-%d/0", slice, i)
			a = append(a, Row{Key: key, Values: map[string]float64{"reward": 0}, Slices: map[string]string{"cwe": slice}})
			b = append(b, Row{Key: key, Values: map[string]float64{"reward": diff(i)}, Slices: map[string]string{"cwe": slice}})
		}
	}
	add("tiny", 2, func(int) float64 { return 1 })
	add("flat", 12, func(int) float64 { return 1 })
	noise := func(i int) float64 { return float64(i%3) - 1 }
	for k := range 38 {
		add(fmt.Sprintf("noise-%02d", k), 12, noise)
	}
	p := Pair(a, b)
	c := &Comparison{A: "a", B: "b", Pairs: len(p.A), Quantities: Quantities(p, []string{"reward"}, Options{Reps: 200}),
		Slices: Slices(p, []string{"cwe"}, []string{"reward"}, Options{Reps: 200})}
	if len(c.Slices) != 40 {
		t.Fatalf("%d slices", len(c.Slices))
	}
	for _, s := range c.Slices {
		if s.Value == "tiny" && (s.Tested() || s.N != 2) {
			t.Errorf("tiny slice %+v", s)
		}
		for _, q := range s.Quantity {
			if q.PAdjusted == nil || *q.PAdjusted < q.P {
				t.Errorf("%s: p %v, Holm %v", s.Value, q.P, q.PAdjusted)
			}
			if s.Value == "flat" && (!q.Degenerate() || q.Bold()) {
				t.Errorf("flat slice: degenerate %v bold %v", q.Degenerate(), q.Bold())
			}
		}
	}
	md := c.Markdown()
	if !strings.Contains(md, "Not tested (fewer than 10 pairs; value (pairs)): cwe: tiny (2).") || !strings.Contains(md, "| cwe | flat | 12 | +1.0000 |") || !strings.Contains(md, "Holm") {
		t.Errorf("slice table:\n%s", md)
	}
	if strings.Contains(md, "| — | — | — |") {
		t.Errorf("an untested slice still has a row of dashes:\n%s", md)
	}

	// Nothing tested: no empty table, one line naming the slices.
	only := &Comparison{A: "a", B: "b", Pairs: 2, Slices: []Slice{{Field: "scenario", Value: "x", N: 3}, {Field: "scenario", Value: "y", N: 4}, {Field: "difficulty", Value: "hard", N: 2}}}
	md = only.Markdown()
	if strings.Contains(md, "| field | value |") || !strings.Contains(md, "Not tested (fewer than 10 pairs; value (pairs)): scenario: x (3), y (4); difficulty: hard (2).") {
		t.Errorf("all slices untested:\n%s", md)
	}
}

type conditionsToy struct {
	ToolBudget   int    `param:"tool_budget" min:"0" max:"64" doc:"tool calls"`
	RewardSource string `param:"reward_source" enum:"executable,llm_judge" doc:"who grades"`
}

// TestMismatchesReadResolvedConfiguration: runs compare on the parameters
// in force, defaults included. A run that set tool_budget=4 is another
// condition than one left at the default (it used to pass, the unset side
// being skipped), and a default given explicitly is the same condition,
// also for a run recorded before metadata carried its configuration.
func TestMismatchesReadResolvedConfiguration(t *testing.T) {
	env.Register(env.Spec{ID: "compare-conditions-toy", Config: conditionsToy{ToolBudget: 10, RewardSource: "executable"},
		New: func(env.Options) (env.Environment, error) { return nil, errors.New("unused") }})
	meta := func(params, config map[string]string) *artifact.Metadata {
		// Every value a JSON string, as runs recorded their configuration
		// before it kept its types: they compare as text all the same.
		var values env.ConfigValues
		if config != nil {
			values = env.ConfigValues{}
			for k, v := range config {
				values[k], _ = json.Marshal(v)
			}
		}
		return &artifact.Metadata{Environment: "compare-conditions-toy", Rubric: "default", DatasetRev: "r1", Rollouts: 1, Params: params, Config: values}
	}
	defaults := map[string]string{"tool_budget": "10", "reward_source": "executable"}
	for _, tc := range []struct {
		name     string
		a, b     *artifact.Metadata
		mismatch []string
	}{
		{"tool budget set against the default", meta(nil, defaults), meta(map[string]string{"tool_budget": "4"}, map[string]string{"tool_budget": "4", "reward_source": "executable"}), []string{"tool budget"}},
		{"default given explicitly", meta(nil, defaults), meta(map[string]string{"reward_source": "executable"}, defaults), nil},
		{"old run without configuration, default given", meta(map[string]string{"tool_budget": "10"}, nil), meta(nil, defaults), nil},
		{"old run without configuration, judge set", meta(map[string]string{"reward_source": "llm_judge"}, nil), meta(nil, defaults), []string{"param reward_source"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, m := range Mismatches(tc.a, tc.b) {
				got = append(got, m.Field)
			}
			if !slices.Equal(got, tc.mismatch) {
				t.Fatalf("mismatches %q, want %q", got, tc.mismatch)
			}
		})
	}
}

// TestBudgetReadsRecordedLimits: the turn limit and tool budget are read
// from the numbers a run records (what its episodes were held to,
// --max-turns included), and a run recorded before it kept them is
// compared on what it did say: an unknown limit is not a mismatch, so an
// old E1 run and a new one stay comparable.
func TestBudgetReadsRecordedLimits(t *testing.T) {
	run := func(l *env.Limits, launchTurns int) *artifact.Metadata {
		return &artifact.Metadata{Environment: "e1", Rubric: "default", DatasetRev: "r1", Rollouts: 1, Limits: l,
			Launch: artifact.Launch{MaxTurns: launchTurns}}
	}
	for _, tc := range []struct {
		name     string
		a, b     *artifact.Metadata
		mismatch []string
	}{
		{"both recorded, same", run(&env.Limits{MaxTurns: 1}, 0), run(&env.Limits{MaxTurns: 1}, 0), nil},
		{"both recorded, turns differ", run(&env.Limits{MaxTurns: 10, ToolBudget: 6}, 0), run(&env.Limits{MaxTurns: 3, ToolBudget: 6}, 3), []string{"max turns"}},
		{"both recorded, budget differs", run(&env.Limits{MaxTurns: 10, ToolBudget: 6}, 0), run(&env.Limits{MaxTurns: 10, ToolBudget: 2}, 0), []string{"tool budget"}},
		{"old run without limits against a new one", run(nil, 0), run(&env.Limits{MaxTurns: 1}, 0), nil},
		{"old run's --max-turns against a new run's limit", run(nil, 3), run(&env.Limits{MaxTurns: 4}, 4), []string{"max turns"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, m := range Mismatches(tc.a, tc.b) {
				got = append(got, m.Field)
			}
			if !slices.Equal(got, tc.mismatch) {
				t.Fatalf("mismatches %q, want %q", got, tc.mismatch)
			}
		})
	}
}
