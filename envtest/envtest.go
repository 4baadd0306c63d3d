// Package envtest is the conformance suite every svbench environment runs:
// what the rest of svbench (runner, reports, the reward server, the probe)
// relies on an environment to do, checked on its embedded mini set. A new
// environment gets it for free: internal/envs runs it for every registered
// environment, and the toy-parity fixture proves that an environment svbench
// knows nothing else about passes it.
package envtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/analysis/probe"
	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/report"
	"github.com/svbench/svbench/runner"
	"github.com/svbench/svbench/server"
)

// Options scale the suite to an environment's cost.
type Options struct {
	// Rows is how many rows of the embedded set each built-in policy plays
	// (4 when 0).
	Rows int
	// ProbeRows is how many rows the probe plays (2 when 0); negative skips
	// the probe.
	ProbeRows int
	// Params are environment parameters for every instance.
	Params map[string]string
	// SolvableFamilies, when > 0, makes the solvability check play only
	// that many rows of each generated family (Family) per split, for
	// environments whose scoring runs programs; SVBENCH_FULL_SOLVABLE=1
	// plays every row anyway. 0 plays every row.
	SolvableFamilies int
	// NoReference says why the environment's rows have no gold answer: the
	// solvability check is then skipped with that reason. Without it an
	// environment that is no Referencer fails the check.
	NoReference string
}

// Hostile are answers every environment's parser must survive: scored (to
// anything finite) or refused with an error, never a panic, a hang or a
// non-finite reward.
var Hostile = []string{
	"",
	"\x00\xff\xfe invalid UTF-8 \xc3",
	strings.Repeat("{", 10000),
	strings.Repeat("[", 5000) + strings.Repeat("]", 5000),
	"```json\n{\"label\": ",
	`{"label": NaN, "confidence": Infinity, "answer": 1e999}`,
	strings.Repeat("yes no Malicious Benign ", 20000),
	"--- a/../../etc/passwd\n+++ b/../../etc/passwd\n@@ -1 +1 @@\n-x\n+y\n",
}

// Run runs the conformance suite on the registered environment named id.
func Run(t *testing.T, id string, opts Options) {
	t.Helper()
	if opts.Rows <= 0 {
		opts.Rows = 4
	}
	if opts.ProbeRows == 0 {
		opts.ProbeRows = 2
	}
	ctx := t.Context()
	spec, err := env.Default.Lookup(id)
	if err != nil {
		t.Fatal(err)
	}
	e, err := env.Default.New(id, env.Options{Params: opts.Params})
	if err != nil {
		t.Fatal(err)
	}
	info := e.Info()
	ds, err := e.Load(ctx, "")
	if err != nil {
		t.Fatalf("load the embedded set: %v", err)
	}
	rows := ds.Examples[:min(opts.Rows, len(ds.Examples))]

	t.Run("registration", func(t *testing.T) { checkRegistration(t, spec, e) })
	t.Run("splits", func(t *testing.T) { checkSplits(t, spec, e) })
	t.Run("solvable", func(t *testing.T) { checkSolvable(ctx, t, e, opts) })
	t.Run("limits", func(t *testing.T) { checkLimits(ctx, t, e, info, rows[0]) })
	rubrics := describeRubrics(t, e)

	var played []artifact.Result
	var episodes []episode
	t.Run("episodes", func(t *testing.T) {
		played, episodes = playPolicies(ctx, t, e, rows, rubrics)
	})
	t.Run("recorded examples", func(t *testing.T) {
		if len(episodes) == 0 {
			t.Skip("no built-in policy played")
		}
		checkRecorded(ctx, t, e, episodes)
	})
	t.Run("report", func(t *testing.T) {
		if len(played) == 0 {
			t.Skip("no built-in policy played")
		}
		rep, err := report.Build(id, played, &artifact.Metadata{Environment: id, Seed: 1}, report.Options{BootstrapReps: 20})
		if err != nil {
			t.Fatalf("report: %v", err)
		}
		if rep.Markdown == "" || rep.Summary["key_metrics"] == nil {
			t.Errorf("report without markdown or key metrics: %v", rep.Summary)
		}
		if err := report.WriteDir(t.TempDir(), rep); err != nil {
			t.Fatal(err)
		}
		// svbench report reads rows slimmed (report.Slim): the builder
		// must make the same report from what Slim keeps.
		b, err := json.Marshal(played)
		if err != nil {
			t.Fatal(err)
		}
		// Both from the rows as a results file holds them.
		var read, slim []artifact.Result
		if err := json.Unmarshal(b, &read); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &slim); err != nil {
			t.Fatal(err)
		}
		for i := range slim {
			report.Slim(&slim[i])
		}
		meta := &artifact.Metadata{Environment: id, Seed: 1}
		rep1, err := report.Build(id, read, meta, report.Options{BootstrapReps: 20})
		if err != nil {
			t.Fatalf("report of the rows read back: %v", err)
		}
		rep2, err := report.Build(id, slim, meta, report.Options{BootstrapReps: 20})
		if err != nil {
			t.Fatalf("report of slimmed rows: %v", err)
		}
		full, _ := json.Marshal(rep1.Summary)
		slimmed, _ := json.Marshal(rep2.Summary)
		if string(full) != string(slimmed) || rep1.Markdown != rep2.Markdown {
			t.Errorf("the report reads what report.Slim drops:\nfull:    %s\nslimmed: %s", full, slimmed)
		}
	})
	t.Run("hostile answers", func(t *testing.T) { checkHostile(ctx, t, e, rows[0], rubrics) })
	t.Run("probe", func(t *testing.T) {
		if _, ok := e.(env.Prober); !ok || opts.ProbeRows < 0 {
			t.Skip("no exploit strategies (env.Prober)")
		}
		res, err := probe.Run(ctx, probe.Config{EnvID: id, Params: opts.Params, Limit: opts.ProbeRows, Concurrency: 2,
			New: func(p map[string]string) (env.Environment, error) { return env.Default.New(id, env.Options{Params: p}) }})
		if err != nil {
			t.Fatalf("probe: %v", err)
		}
		if res.Honest.Rows == 0 || len(res.Strategies) == 0 {
			t.Errorf("probe played nothing: %+v", res)
		}
		for _, s := range res.Strategies {
			if s.Errors > 0 {
				t.Errorf("strategy %s: %d error(s): %s", s.Name, s.Errors, s.FirstError)
			}
		}
	})
	t.Run("server", func(t *testing.T) { checkServer(ctx, t, id, opts.Params, info) })
}

func checkRegistration(t *testing.T, spec env.Spec, e env.Environment) {
	info := e.Info()
	if info.ID != spec.ID {
		t.Errorf("Info().ID %q, registered as %q", info.ID, spec.ID)
	}
	if !slices.Equal(info.Aliases, spec.Aliases) && !(len(info.Aliases) == 0 && len(spec.Aliases) == 0) {
		t.Errorf("Info().Aliases %v, registered %v: declare aliases once, in env.Spec, and read them with env.Default.Aliases", info.Aliases, spec.Aliases)
	}
	if !slices.Contains(info.Rubrics, info.DefaultRubric) {
		t.Errorf("default rubric %q not among %v", info.DefaultRubric, info.Rubrics)
	}
	if info.SolvedWhen == "" {
		t.Error("Info().SolvedWhen is empty: reports print it beside pass@k")
	}
	if len(info.Policies) > 0 {
		pp, ok := e.(env.PolicyProvider)
		if !ok {
			t.Fatalf("Info() lists policies %v but the environment is no env.PolicyProvider", info.Policies)
		}
		for _, name := range info.Policies {
			if _, ok := pp.Policy(name); !ok {
				t.Errorf("policy %q listed but not provided", name)
			}
		}
	}
	if pr, ok := e.(env.Prober); ok {
		if !slices.Contains(info.Policies, pr.HonestPolicy()) {
			t.Errorf("honest policy %q is not a listed policy", pr.HonestPolicy())
		}
		seen := map[string]bool{}
		for _, x := range pr.Exploits() {
			if x.Name == "" || x.Policy == nil || seen[x.Name] {
				t.Errorf("exploit %+v: needs a unique name and a policy", x)
			}
			seen[x.Name] = true
		}
	}
	if spec.Data != nil {
		for _, dc := range spec.Data() {
			if dc.Flags == nil || dc.Short == "" {
				t.Errorf("data command %s %q: needs Short and Flags", dc.Kind, dc.Args)
			}
		}
	}
}

// describeRubrics reads the description of every rubric Info lists
// (env.RubricDescriber, which every environment implements): names and
// weights as scores record them, ranges that hold. Keyed by rubric name,
// "" for the default.
func describeRubrics(t *testing.T, e env.Environment) map[string]env.RubricInfo {
	t.Helper()
	out := map[string]env.RubricInfo{}
	d, ok := e.(env.RubricDescriber)
	if !ok {
		t.Errorf("no env.RubricDescriber: describe each rubric's components, weights and ranges (DescribeRubric) so /v1/environments, metadata.json and reports can publish them")
		return out
	}
	info := e.Info()
	for _, name := range append([]string{""}, info.Rubrics...) {
		ri, err := d.DescribeRubric(name)
		if err != nil {
			// A rubric the instance's options rule out (E2's reference
			// under mode=policy) may be refused; the default may not.
			if name == "" || name == info.DefaultRubric {
				t.Errorf("DescribeRubric(%q): %v", name, err)
			}
			continue
		}
		want := name
		if want == "" {
			want = info.DefaultRubric
		}
		if ri.Name != want {
			t.Errorf("DescribeRubric(%q) names rubric %q, want %q", name, ri.Name, want)
		}
		if len(ri.Components) == 0 || ri.TotalMin > ri.TotalMax {
			t.Errorf("DescribeRubric(%q): no components or an empty total range: %+v", name, ri)
		}
		for _, c := range ri.Components {
			if c.Min > c.Max || !finite(c.Min) || !finite(c.Max) || !finite(c.Weight) {
				t.Errorf("DescribeRubric(%q): component %s declares [%v, %v] weight %v", name, c.Name, c.Min, c.Max, c.Weight)
			}
		}
		out[name] = ri
	}
	if _, err := d.DescribeRubric("no-such-rubric"); err == nil {
		t.Error(`DescribeRubric("no-such-rubric") describes something: an unknown rubric must be an error`)
	}
	return out
}

// checkDeclared fails when a score leaves its rubric's declaration:
// components and weights other than declared, a value or the total outside
// the declared range.
func checkDeclared(t *testing.T, what string, rubrics map[string]env.RubricInfo, rubric string, sc env.Score) {
	t.Helper()
	ri, ok := rubrics[rubric]
	if !ok {
		return // not described: reported once by describeRubrics
	}
	if err := ri.Check(sc); err != nil {
		t.Errorf("%s: the score leaves the rubric's declaration (DescribeRubric): %v", what, err)
	}
}

// playPolicies runs every built-in policy on rows and checks each score:
// finite, Total = Σ weight·component when weights are given, inside the
// rubric's declaration (and so under every other rubric), the same when
// scored again (determinism) and when scored from the rollout's JSON (a
// results row re-scores as it was scored).
func playPolicies(ctx context.Context, t *testing.T, e env.Environment, rows []env.Example, rubrics map[string]env.RubricInfo) ([]artifact.Result, []episode) {
	pp, _ := e.(env.PolicyProvider)
	var out []artifact.Result
	var eps []episode
	for _, name := range e.Info().Policies {
		p, ok := pp.Policy(name)
		if !ok {
			continue
		}
		for i, ex := range rows {
			ro, err := runner.RunEpisode(ctx, llm.Builtin{Policy: p}, e, ex, runner.EpisodeConfig{})
			if err != nil {
				t.Errorf("policy %s, row %s: episode: %v", name, ex.ID, err)
				continue
			}
			sc, err := e.Score(ctx, ex, ro, "")
			if err != nil {
				t.Errorf("policy %s, row %s: score: %v", name, ex.ID, err)
				continue
			}
			checkScore(t, fmt.Sprintf("policy %s, row %s", name, ex.ID), sc)
			checkDeclared(t, fmt.Sprintf("policy %s, row %s", name, ex.ID), rubrics, "", sc)
			for _, rb := range e.Info().Rubrics {
				if rb == e.Info().DefaultRubric {
					continue
				}
				if other, err := e.Score(ctx, ex, ro, rb); err == nil {
					checkScore(t, fmt.Sprintf("policy %s, row %s, rubric %s", name, ex.ID, rb), other)
					checkDeclared(t, fmt.Sprintf("policy %s, row %s, rubric %s", name, ex.ID, rb), rubrics, rb, other)
				}
			}
			again, err := e.Score(ctx, ex, ro, "")
			if err != nil || !sameScore(sc, again) {
				t.Errorf("policy %s, row %s: scored twice, different: %+v then %+v (%v)", name, ex.ID, sc, again, err)
			}
			b, err := json.Marshal(ro)
			if err != nil {
				t.Fatal(err)
			}
			var back env.Rollout
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("rollout JSON round trip: %v", err)
			}
			if rt, err := e.Score(ctx, ex, &back, ""); err != nil || !sameScore(sc, rt) {
				t.Errorf("policy %s, row %s: the rollout read back from JSON scores %+v, live %+v (%v)", name, ex.ID, rt, sc, err)
			}
			eps = append(eps, episode{policy: name, ex: ex, ro: ro, sc: sc})
			solved := sc.Solved
			out = append(out, artifact.Result{Index: i, ExampleID: ex.ID, Model: "builtin:" + name, Answer: ex.Answer, Meta: ex.Meta,
				Completion: ro.Completion, FinalText: ro.FinalText(), Reward: sc.Total, Components: sc.Components, Weights: sc.Weights,
				Parsed: sc.Parsed, Rubric: sc.Rubric, Solved: &solved, Turns: ro.Turns, StopReason: ro.StopReason})
		}
	}
	return out, eps
}

// episode is one built-in policy's play of one row, as scored live.
type episode struct {
	policy string
	ex     env.Example
	ro     *env.Rollout
	sc     env.Score
}

// checkRecorded holds every environment to the ParseExample round trip
// (env.Rehydrate): an example as the runner records it (its JSON: id,
// prompt, answer, meta, no payload), decoded from results, sent to the
// server or ingested from a trainer, scores the same rollout exactly as
// the live example did, and ParseExample of it starts an episode with the
// same prompt.
func checkRecorded(ctx context.Context, t *testing.T, e env.Environment, eps []episode) {
	started := map[string]bool{}
	for _, p := range eps {
		what := fmt.Sprintf("policy %s, row %s", p.policy, p.ex.ID)
		raw, err := json.Marshal(p.ex)
		if err != nil {
			t.Fatal(err)
		}
		var stripped env.Example
		if err := json.Unmarshal(raw, &stripped); err != nil {
			t.Fatal(err)
		}
		// Score rebuilds the payload itself (env.PayloadOf), which is
		// ParseExample of the same JSON.
		sc, err := e.Score(ctx, stripped, p.ro, "")
		if err != nil {
			t.Errorf("%s: the recorded example does not score: %v", what, err)
			continue
		}
		if !sameScore(p.sc, sc) {
			t.Errorf("%s: the recorded example scores %+v, the live one %+v", what, sc, p.sc)
		}
		if started[p.ex.ID] {
			continue
		}
		started[p.ex.ID] = true
		back, err := e.ParseExample(raw)
		if err != nil {
			t.Errorf("%s: ParseExample of the recorded example: %v", what, err)
			continue
		}
		if back.ID != p.ex.ID || !bytes.Equal(back.Answer, p.ex.Answer) {
			t.Errorf("%s: ParseExample of the recorded example gives id %q answer %s, recorded %q %s", what, back.ID, back.Answer, p.ex.ID, p.ex.Answer)
		}
		live, err1 := startPrompt(ctx, e, p.ex)
		again, err2 := startPrompt(ctx, e, back)
		if err1 != nil || err2 != nil {
			t.Errorf("%s: start: live %v, recorded %v", what, err1, err2)
			continue
		}
		if !reflect.DeepEqual(live, again) {
			t.Errorf("%s: the recorded example starts with prompt %+v, the live one %+v", what, again, live)
		}
	}
}

func startPrompt(ctx context.Context, e env.Environment, ex env.Example) ([]env.Message, error) {
	ep, err := e.Start(ctx, ex)
	if err != nil {
		return nil, err
	}
	defer ep.Close()
	return ep.Prompt(), nil
}

func checkScore(t *testing.T, what string, sc env.Score) {
	t.Helper()
	if !finite(sc.Total) {
		t.Errorf("%s: reward %v", what, sc.Total)
	}
	sum := 0.0
	for k, v := range sc.Components {
		if !finite(v) {
			t.Errorf("%s: component %s = %v", what, k, v)
		}
		sum += sc.Weights[k] * v
	}
	if len(sc.Weights) > 0 && len(sc.Weights) == len(sc.Components) && math.Abs(sum-sc.Total) > 1e-9 {
		t.Errorf("%s: reward %v ≠ Σ weight·component %v", what, sc.Total, sum)
	}
}

// sameScore compares what a score says (JSON form: NaN-free, map order
// free).
func sameScore(a, b env.Score) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb) || reflect.DeepEqual(a, b)
}

func checkHostile(ctx context.Context, t *testing.T, e env.Environment, ex env.Example, rubrics map[string]env.RubricInfo) {
	for i, text := range Hostile {
		ro := &env.Rollout{Completion: []env.Message{{Role: env.RoleAssistant, Content: text}}, Turns: 1}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Errorf("hostile answer %d panicked: %v", i, p)
				}
			}()
			sc, err := e.Score(ctx, ex, ro, "")
			if err == nil {
				checkScore(t, fmt.Sprintf("hostile answer %d", i), sc)
				checkDeclared(t, fmt.Sprintf("hostile answer %d", i), rubrics, "", sc)
			}
		}()
	}
}

// checkServer serves the environment alone and scores one of its examples
// over /v1/score.
func checkServer(ctx context.Context, t *testing.T, id string, params map[string]string, info env.Info) {
	// The suite checks the wire, not the speed: under the race detector,
	// with every environment's suite in parallel on two cores, E2's first
	// score (its policy engines warming) took 35 s in CI, past the 30 s
	// default. The test's deadline still bounds a hung scorer.
	srv, err := server.New(server.Config{Envs: []string{id}, EnvParams: map[string]map[string]string{id: params},
		Timeout: 5 * time.Minute, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Load(ctx); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	get := func(path string, v any) {
		t.Helper()
		resp, err := http.Get(ts.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b, _ := io.ReadAll(resp.Body)
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	var list struct {
		Environments []struct {
			ID string `json:"id"`
		} `json:"environments"`
	}
	get("/v1/environments", &list)
	if len(list.Environments) != 1 || list.Environments[0].ID != info.ID {
		t.Fatalf("serving %+v, want %s", list.Environments, info.ID)
	}
	var page struct {
		Examples []struct {
			ExampleID string          `json:"example_id"`
			Answer    json.RawMessage `json:"answer"`
		} `json:"examples"`
	}
	get("/v1/environments/"+id+"/examples?limit=1&seed=1", &page)
	if len(page.Examples) == 0 {
		t.Fatal("no examples served")
	}
	body, _ := json.Marshal(map[string]any{"items": []any{map[string]any{"env": id, "example_id": page.Examples[0].ExampleID, "completion": "no idea"}}})
	resp, err := http.Post(ts.URL+"/v1/score", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var res struct {
		Results []struct {
			Reward *float64 `json:"reward"`
			Error  any      `json:"error"`
		} `json:"results"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/v1/score: %d %v", resp.StatusCode, err)
	}
	if len(res.Results) != 1 || res.Results[0].Error != nil || res.Results[0].Reward == nil || !finite(*res.Results[0].Reward) {
		t.Errorf("/v1/score: %+v", res.Results)
	}
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// checkLimits: the framework holds episodes to the limits Info declares
// (env.Limit), counting the tools Info lists; a tool an episode offers
// that Info does not list would escape the budget, and tools offered with
// a budget of 0 would all be refused.
func checkLimits(ctx context.Context, t *testing.T, e env.Environment, info env.Info, ex env.Example) {
	if info.MaxTurns < 1 || info.ToolBudget < 0 {
		t.Errorf("Info declares max_turns %d and tool_budget %d; want at least 1 turn and a budget of 0 or more", info.MaxTurns, info.ToolBudget)
	}
	ep, err := e.Start(ctx, ex)
	if err != nil {
		t.Fatalf("start %s: %v", ex.ID, err)
	}
	defer ep.Close()
	listed := map[string]bool{}
	for _, tool := range info.Tools {
		listed[tool.Name] = true
	}
	budgeted := 0
	for _, tool := range ep.Tools() {
		if !listed[tool.Name] {
			t.Errorf("the episode offers tool %q, which Info.Tools does not list: the framework would not count its calls against tool_budget", tool.Name)
		}
		if !tool.OwnBudget {
			budgeted++
		}
	}
	if budgeted > 0 && info.ToolBudget == 0 {
		t.Errorf("the episode offers %d tools but Info declares tool_budget 0: every call would be refused", budgeted)
	}
}
