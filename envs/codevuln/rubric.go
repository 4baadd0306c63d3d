package codevuln

import (
	"context"
	"fmt"
	"go/scanner"
	"go/token"
	"math"
	"strings"
	"sync"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// Evaluation is everything the verifiers found about one answer.
type Evaluation struct {
	Task      *taskset.Task
	Answer    Answer
	Candidate Candidate
	// Tested is false for static-only tasks (no suites were run).
	Tested          bool
	Visible, Hidden TestRun
	Static          StaticDelta
	StaticErr       string
	APIMissing      []string
	Added, Removed  int // changed lines of the candidate
	RefChanged      int // changed lines of the reference fix
	NoOp            bool
	DeletionOnly    bool
	CommentOnly     bool
}

// Applied reports whether the answer produced a candidate.
func (ev *Evaluation) Applied() bool { return ev.Candidate.Reject == "" }

// Substantive is false for no-op, deletion-only and comment-only patches.
func (ev *Evaluation) Substantive() bool {
	return ev.Applied() && !ev.NoOp && !ev.DeletionOnly && !ev.CommentOnly
}

// Evaluate verifies an answer text against a task. Test suites and analyses
// run concurrently; identical candidates are verified once (memoised).
func (v *Verifier) Evaluate(ctx context.Context, t *taskset.Task, text string) *Evaluation {
	a := ParseAnswer(text)
	return v.EvaluateAnswer(ctx, t, a)
}

// EvaluateAnswer is Evaluate for an already parsed answer.
func (v *Verifier) EvaluateAnswer(ctx context.Context, t *taskset.Task, a Answer) *Evaluation {
	ev := &Evaluation{Task: t, Answer: a, Tested: t.Tested()}
	ev.Candidate = ApplyAnswer(t, a)
	fix := Files(t.Fixed())
	for _, f := range t.Files {
		ad, rm := LineChanges(string(t.Src[f]), string(fix[f]))
		ev.RefChanged += ad + rm
	}
	if !ev.Applied() {
		return ev
	}
	cand := ev.Candidate.Files
	for _, f := range t.Files {
		ad, rm := LineChanges(string(t.Src[f]), string(cand[f]))
		ev.Added += ad
		ev.Removed += rm
	}
	ev.NoOp = len(ev.Candidate.Changed) == 0
	ev.DeletionOnly = !ev.NoOp && ev.Added == 0
	if !ev.NoOp {
		same := true
		for _, f := range ev.Candidate.Changed {
			if codeTokens(t.Language, t.Src[f]) != codeTokens(t.Language, cand[f]) {
				same = false
			}
		}
		ev.CommentOnly = same
	}
	ev.APIMissing = APICheck(t, cand)

	var wg sync.WaitGroup
	if ev.Tested {
		wg.Add(2)
		go func() { defer wg.Done(); ev.Visible = v.RunSuite(ctx, t, SuiteVisible, cand) }()
		go func() { defer wg.Done(); ev.Hidden = v.RunSuite(ctx, t, SuiteHidden, cand) }()
	}
	st := v.analyseMany(ctx, t.Language, []Files{Files(t.Src), fix, cand})
	wg.Wait()
	orig, fixed, patched := st[0], st[1], st[2]
	for _, e := range []string{orig.Err, fixed.Err, patched.Err} {
		if e != "" && ev.StaticErr == "" {
			ev.StaticErr = e
		}
	}
	ev.Static = Delta(t.CWE, orig.Findings, fixed.Findings, patched.Findings)
	return ev
}

// codeTokens renders source without comments and layout, to tell a patch
// that only adds comments (e.g. "# nosec") from one that changes code.
func codeTokens(lang string, src []byte) string {
	var b strings.Builder
	if lang == taskset.Go {
		var s scanner.Scanner
		fset := token.NewFileSet()
		s.Init(fset.AddFile("x.go", -1, len(src)), src, nil, 0)
		for {
			_, tok, lit := s.Scan()
			if tok == token.EOF {
				break
			}
			b.WriteString(tok.String())
			b.WriteString(lit)
			b.WriteByte(' ')
		}
		return b.String()
	}
	if taskset.CLike(lang) {
		return strings.Join(strings.Fields(string(taskset.CStripComments(src))), " ")
	}
	for _, line := range strings.Split(string(src), "\n") {
		line = stripPyComment(line)
		if f := strings.Fields(line); len(f) > 0 {
			b.WriteString(strings.Join(f, " "))
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// stripPyComment removes a trailing # comment outside string quotes.
func stripPyComment(line string) string {
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '#':
			return line[:i]
		}
	}
	return line
}

// Component names of the default rubric.
const (
	CompRepair      = "repair"
	CompBehaviour   = "behaviour"
	CompSecurity    = "security"
	CompStaticFixed = "static_fixed"
	CompNoNewHigh   = "no_new_high"
	CompAPI         = "api_preserved"
	CompSubstantive = "substantive"
	CompPatchSize   = "patch_size"
)

// patchSizeScore is 1 for a patch no larger than the reference fix and
// falls as ref/size beyond it.
func patchSizeScore(ev *Evaluation) float64 {
	size := ev.Added + ev.Removed
	if size == 0 {
		return 0
	}
	ref := max(ev.RefChanged, 1)
	return math.Min(1, float64(ref)/float64(size))
}

// staticFixed is 1 when no target finding remains. With no target (the
// analysers cannot tell the original from the fix on this task) it falls
// back to the security tests' verdict, so it never pays for nothing.
func staticFixed(ev *Evaluation) float64 {
	if !ev.Applied() || ev.StaticErr != "" {
		return 0
	}
	if len(ev.Static.Targets) == 0 {
		if !ev.Tested {
			return 0
		}
		return ev.Hidden.Fraction()
	}
	if len(ev.Static.Remaining) == 0 {
		return 1
	}
	return 0
}

func apiFraction(ev *Evaluation) float64 {
	if !ev.Applied() {
		return 0
	}
	n := len(ev.Task.API)
	if n == 0 {
		return 1
	}
	return float64(n-len(ev.APIMissing)) / float64(n)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// DefaultComponents computes the default rubric's components. repair, the
// only weighted one, is multiplicative: a patch is paid in full only when
// it is substantive, keeps the API, adds no high-severity finding and passes
// every behavioural and security test; a secure patch that breaks
// behaviour gets at most 0.2 (the share of behaviour kept), and one that
// fails any security test gets nothing, so no shortcut (no-op, deleting code,
// hard-coding outputs, swallowing errors, silencing analysers, timing out)
// comes near an honest fix. The other components are reported unweighted
// for trainers that normalise per component.
func DefaultComponents(ev *Evaluation) map[string]float64 {
	c := map[string]float64{
		CompBehaviour:   ev.Visible.Fraction(),
		CompSecurity:    ev.Hidden.Fraction(),
		CompStaticFixed: staticFixed(ev),
		CompNoNewHigh:   b2f(ev.Applied() && ev.StaticErr == "" && len(ev.Static.NewHigh) == 0),
		CompAPI:         apiFraction(ev),
		CompSubstantive: b2f(ev.Substantive()),
		CompPatchSize:   patchSizeScore(ev),
	}
	gate := c[CompSubstantive] * c[CompNoNewHigh] * b2f(c[CompAPI] == 1)
	if !ev.Tested {
		delete(c, CompBehaviour)
		delete(c, CompSecurity)
		// Static-only: the analysers are all there is; reported apart.
		c[CompRepair] = gate * c[CompStaticFixed] * (0.8 + 0.2*c[CompPatchSize])
		return c
	}
	switch {
	case ev.Visible.OK && ev.Hidden.OK:
		c[CompRepair] = gate * (0.8 + 0.1*c[CompStaticFixed] + 0.1*c[CompPatchSize])
	case ev.Hidden.OK:
		// Secure but broken: a share of the behaviour it kept.
		c[CompRepair] = gate * 0.2 * c[CompBehaviour]
	default:
		// The weakness is still there: a patch that passes some of the
		// security tests (the tested literals refused, a work factor
		// raised but not enough) is a spelling of a fix, and paying for
		// it taught policies to stop one test short. security reports
		// the share for trainers that shape on it.
		c[CompRepair] = 0
	}
	return c
}

// Solved is the environment's definition (Info.SolvedWhen).
func Solved(ev *Evaluation) bool {
	if !ev.Applied() || ev.StaticErr != "" || len(ev.Static.NewHigh) > 0 || len(ev.APIMissing) > 0 || !ev.Substantive() {
		return false
	}
	if !ev.Tested {
		return staticFixed(ev) == 1 && len(ev.Static.Targets) > 0
	}
	return ev.Visible.OK && ev.Hidden.OK
}

// view is the Parsed map of a score: what the verifiers saw.
func view(ev *Evaluation) map[string]any {
	v := map[string]any{
		"task_id": ev.Task.ID, "language": ev.Task.Language, "cwe": ev.Task.CWE, "mode": ev.Task.Mode,
		"answer_form": ev.Answer.Form, "applied": ev.Applied(), "format_valid": ev.Applied(),
		"lines_added": ev.Added, "lines_removed": ev.Removed, "ref_lines_changed": ev.RefChanged,
		"no_op": ev.NoOp, "deletion_only": ev.DeletionOnly, "comment_only": ev.CommentOnly,
		"api_missing": ev.APIMissing, "static_targets": ev.Static.Targets, "static_remaining": ev.Static.Remaining,
		"new_high": ev.Static.NewHigh, "findings_original": ev.Static.Original, "findings_patched": ev.Static.Patched,
		"static_discriminates": len(ev.Static.Targets) > 0,
	}
	if !ev.Applied() {
		v["reject_reason"] = ev.Candidate.Reject
	}
	if ev.StaticErr != "" {
		v["static_error"] = ev.StaticErr
	}
	if ev.Tested && ev.Applied() {
		v["visible_passed"], v["visible_total"] = ev.Visible.Passed, ev.Visible.Total
		v["hidden_passed"], v["hidden_total"] = ev.Hidden.Passed, ev.Hidden.Total
		var kills []string
		for _, k := range []string{ev.Visible.Killed, ev.Hidden.Killed} {
			if k != "" {
				kills = append(kills, k)
			}
		}
		if len(kills) > 0 {
			v["sandbox_kills"] = kills
		}
		if ev.Visible.Stage == "compile" || ev.Hidden.Stage == "compile" {
			v["compile_failed"] = true
		}
	}
	return v
}

// Score verifies the final answer with the named rubric.
func (e *Env) Score(ctx context.Context, ex env.Example, r *env.Rollout, rubric string) (env.Score, error) {
	t, err := e.taskOf(ex)
	if err != nil {
		return env.Score{}, err
	}
	if e.vErr != nil {
		return env.Score{}, e.vErr
	}
	switch rubric {
	case "", RubricDefault, RubricReference:
	default:
		return env.Score{}, fmt.Errorf("unknown rubric %q for %s (known: %s, %s)", rubric, ID, RubricDefault, RubricReference)
	}
	ev := e.v.Evaluate(ctx, t, r.FinalText())
	if err := ctx.Err(); err != nil {
		return env.Score{}, fmt.Errorf("e3 scoring %s interrupted: %w", ex.ID, err)
	}
	v := view(ev)
	v["sandbox_mode"] = string(e.v.Mode())
	var s env.Score
	if rubric == RubricReference {
		s = referenceScore(ev, v)
	} else {
		comps := DefaultComponents(ev)
		s = env.Score{Components: comps, Weights: map[string]float64{}, Parsed: v, Rubric: RubricDefault}
		for k := range comps {
			s.Weights[k] = 0
		}
		s.Weights[CompRepair] = 1
		s.Total = comps[CompRepair]
	}
	s.Solved = Solved(ev)
	return s, nil
}
