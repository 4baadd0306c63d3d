package envtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svbench/svbench/base/clip"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/runner"
)

// Referencer is implemented by environments whose rows carry a gold
// answer. A trainer is served every row of the train split and rewards
// whatever solves it: a row its own reference answer does not solve
// punishes the correct answer on every visit (issue #41), so the
// conformance suite plays the reference answer on every row of every
// split (checkSolvable).
//
// The interface lives here rather than in env because nothing but the
// check needs it yet; its method names only env types, so an environment
// implements it without importing envtest.
type Referencer interface {
	// ReferencePolicy returns the policy that plays row ex's reference
	// answer through the ordinary episode loop (tools and follow-up turns
	// included). Unlike a built-in baseline it may read ex: it is the
	// gold answer, not a model stand-in. An error says why the row has
	// none, and is reported as a failure of that row.
	ReferencePolicy(ex env.Example) (env.Policy, error)
}

// Inerter is implemented by environments that name, row by row, the
// answers that do nothing (the unmodified file, an abstention, no
// findings): none of them may solve the row, or a reward pays for doing
// nothing. An empty map says doing nothing is the row's correct answer
// (a clean file, a harmful request declined). Without an Inerter the
// empty answer (EmptyAnswer) is the one inert answer checked.
type Inerter interface {
	InertPolicies(ex env.Example) map[string]env.Policy
}

// EmptyAnswer answers every turn with an empty assistant message.
var EmptyAnswer env.Policy = env.PolicyFunc(func(context.Context, []env.Message, []env.Tool) (env.Message, error) {
	return env.Message{Role: env.RoleAssistant}, nil
})

// FullSolvableEnv names the environment variable that makes the
// solvability check play every row of an environment it otherwise
// samples (Options.SolvableFamilies): SVBENCH_FULL_SOLVABLE=1.
const FullSolvableEnv = "SVBENCH_FULL_SOLVABLE"

// Family is the generated family a row id belongs to: the id less a final
// "-<suffix>" of lower-case hex digits, the random suffix generators
// append ("py-089-gen-sqli-3fa9c1" is "py-089-gen-sqli"). A suffix of
// fewer than six letters and no digit ("-cafe") is read as a word. Ids
// without such a suffix are their own family, so a hand-written row is
// always played when a split is sampled by family.
func Family(id string) string {
	i := strings.LastIndexByte(id, '-')
	if i <= 0 || i == len(id)-1 {
		return id
	}
	suffix, digit := id[i+1:], false
	for _, c := range suffix {
		switch {
		case c >= '0' && c <= '9':
			digit = true
		case c >= 'a' && c <= 'f':
		default:
			return id
		}
	}
	if !digit && len(suffix) < 6 {
		return id
	}
	return id[:i]
}

// SampleFamilies keeps the first perFamily rows of each Family, in split
// order: deterministic, and every family (every hand-written row) is in.
func SampleFamilies(rows []env.Example, perFamily int) []env.Example {
	seen := map[string]int{}
	var out []env.Example
	for _, ex := range rows {
		f := Family(ex.ID)
		if seen[f] < perFamily {
			seen[f]++
			out = append(out, ex)
		}
	}
	return out
}

// Unsolvable is one row the solvability check fails: its reference answer
// is not solved (or the row has none, or playing it failed), or an inert
// answer is.
type Unsolvable struct {
	Env, Split, Row string
	// Answer is "reference" or the inert answer's name.
	Answer string
	// Err is why nothing was scored (no reference, episode or score
	// error); Score is the verdict otherwise.
	Err   error
	Score env.Score
	// Stop is the rollout's stop reason.
	Stop string
}

// String says what failed, with the score's components and the start of
// what the scorer parsed (where the reason usually is).
func (u Unsolvable) String() string {
	if u.Err != nil {
		return u.Short()
	}
	parsed, _ := json.Marshal(u.Score.Parsed)
	return u.Short() + ", parsed " + clip.Bytes(string(parsed), 600, clip.Ellipsis)
}

// Short is String without the parsed view.
func (u Unsolvable) Short() string {
	if u.Err != nil {
		return fmt.Sprintf("%s split %s, row %s: %s answer: %v", u.Env, u.Split, u.Row, u.Answer, u.Err)
	}
	what := "the reference answer is not solved"
	if u.Answer != "reference" {
		what = fmt.Sprintf("the inert answer %q is solved", u.Answer)
	}
	return fmt.Sprintf("%s split %s, row %s: %s: reward %.4g, components %s, stop %q",
		u.Env, u.Split, u.Row, what, u.Score.Total, components(u.Score.Components), u.Stop)
}

func components(c map[string]float64) string {
	parts := make([]string, 0, len(c))
	for _, k := range slices.Sorted(maps.Keys(c)) {
		parts = append(parts, fmt.Sprintf("%s=%.4g", k, c[k]))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// SplitResult is what the solvability check played on one split.
type SplitResult struct {
	Split         string
	Rows, Played  int
	Failures      []Unsolvable
	Duration      time.Duration
	ReferenceFail int // rows whose reference answer failed
	InertSolved   int // rows an inert answer solved
	FailedRows    int // rows with any failure
}

// SolvableOptions scale the solvability check.
type SolvableOptions struct {
	// PerFamily, when > 0, plays only that many rows of each Family per
	// split; 0 plays every row.
	PerFamily int
	// Workers is how many rows are played at once (2 when 0).
	Workers int
}

// Solvability plays, on every row of every split the environment ships
// (env.SplitNames; an environment without an env.SplitLoader has only
// test), the reference answer, which must be solved, and every inert
// answer, which must not be. It needs a Referencer. Rows are played
// through runner.RunEpisode and scored with the default rubric, exactly
// as an evaluation or a trainer's session would.
func Solvability(ctx context.Context, e env.Environment, opts SolvableOptions) ([]SplitResult, error) {
	ref, ok := e.(Referencer)
	if !ok {
		return nil, fmt.Errorf("%s has no reference answers (envtest.Referencer)", e.Info().ID)
	}
	if opts.Workers <= 0 {
		opts.Workers = 2
	}
	inerter, _ := e.(Inerter)
	var out []SplitResult
	for _, split := range env.SplitNames() {
		ds, err := env.LoadDataset(ctx, e, "", split)
		if errors.Is(err, env.ErrNoSplit) {
			continue
		}
		if err != nil {
			return out, fmt.Errorf("load split %s: %w", split, err)
		}
		rows := ds.Examples
		if opts.PerFamily > 0 {
			rows = SampleFamilies(rows, opts.PerFamily)
		}
		res := SplitResult{Split: split, Rows: len(ds.Examples), Played: len(rows)}
		start := time.Now()
		fails := make([][]Unsolvable, len(rows))
		sem := make(chan struct{}, opts.Workers)
		var wg sync.WaitGroup
		for i, ex := range rows {
			if ctx.Err() != nil {
				break // the test's deadline: report what was played
			}
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				fails[i] = solveRow(ctx, e, ref, inerter, split, ex)
			})
		}
		wg.Wait()
		res.Duration = time.Since(start)
		for _, f := range fails {
			if len(f) == 0 {
				continue
			}
			res.FailedRows++
			res.Failures = append(res.Failures, f...)
			inert := false
			for _, u := range f {
				if u.Answer == "reference" {
					res.ReferenceFail++
				} else {
					inert = true
				}
			}
			if inert {
				res.InertSolved++
			}
		}
		out = append(out, res)
		if err := ctx.Err(); err != nil {
			return out, err
		}
	}
	return out, nil
}

// solveRow plays one row's reference and inert answers.
func solveRow(ctx context.Context, e env.Environment, ref Referencer, inerter Inerter, split string, ex env.Example) []Unsolvable {
	var fails []Unsolvable
	fail := func(u Unsolvable) {
		u.Env, u.Split, u.Row = e.Info().ID, split, ex.ID
		fails = append(fails, u)
	}
	play := func(p env.Policy) (env.Score, string, error) {
		ro, err := runner.RunEpisode(ctx, llm.Builtin{Policy: p}, e, ex, runner.EpisodeConfig{})
		if err != nil {
			return env.Score{}, ro.StopReason, fmt.Errorf("episode: %w", err)
		}
		sc, err := e.Score(ctx, ex, ro, "")
		if err != nil {
			return env.Score{}, ro.StopReason, fmt.Errorf("score: %w", err)
		}
		return sc, ro.StopReason, nil
	}

	p, err := ref.ReferencePolicy(ex)
	if err != nil {
		fail(Unsolvable{Answer: "reference", Err: fmt.Errorf("no reference answer: %w", err)})
	} else if sc, stop, err := play(p); err != nil {
		fail(Unsolvable{Answer: "reference", Err: err, Stop: stop})
	} else if !sc.Solved {
		fail(Unsolvable{Answer: "reference", Score: sc, Stop: stop})
	}

	inert := map[string]env.Policy{"empty": EmptyAnswer}
	if inerter != nil {
		inert = inerter.InertPolicies(ex)
	}
	for _, name := range slices.Sorted(maps.Keys(inert)) {
		// An inert answer the environment refuses to score (an error) or
		// cannot play is not paid: only a Solved verdict fails the row.
		if sc, stop, err := play(inert[name]); err == nil && sc.Solved {
			fail(Unsolvable{Answer: name, Score: sc, Stop: stop})
		}
	}
	return fails
}

// detailedFailures is how many failures per split checkSolvable prints
// with the scorer's parsed view.
const detailedFailures = 10

// checkSolvable is the conformance check of issue #41: every row of every
// split is solved by its reference answer and by none of its inert answers.
// Every failing row is listed, then a count per split.
func checkSolvable(ctx context.Context, t *testing.T, e env.Environment, opts Options) {
	if _, ok := e.(Referencer); !ok {
		if opts.NoReference != "" {
			t.Skipf("no reference answers: %s", opts.NoReference)
		}
		t.Fatalf("%s has no reference answers (envtest.Referencer): nothing shows that the rows it serves can be solved; add one, or say why there is none (Options.NoReference)", e.Info().ID)
	}
	so := SolvableOptions{PerFamily: opts.SolvableFamilies}
	if os.Getenv(FullSolvableEnv) == "1" {
		so.PerFamily = 0
	}
	res, err := Solvability(ctx, e, so)
	for _, r := range res {
		// Every failure is listed; the parsed view only for the first
		// few, so a split that fails wholesale stays readable.
		for i, u := range r.Failures {
			if i < detailedFailures {
				t.Error(u)
			} else {
				t.Error(u.Short())
			}
		}
		sample := ""
		if r.Played < r.Rows {
			sample = fmt.Sprintf(" (a sample: %d per family; %s=1 plays all %d)", so.PerFamily, FullSolvableEnv, r.Rows)
		}
		t.Logf("split %s: %d of %d rows played in %s%s: %d not solved by their reference answer, %d solved by an inert answer",
			r.Split, r.Played, r.Rows, r.Duration.Round(time.Millisecond), sample, r.ReferenceFail, r.InertSolved)
		if r.FailedRows > 0 {
			t.Errorf("split %s: %d of %d rows played fail (listed above)", r.Split, r.FailedRows, r.Played)
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}
