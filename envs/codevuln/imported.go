package codevuln

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// ImportCheck is what running an imported pytest task's reference fix and
// original code showed. A task is kept only when the reference passes both
// suites and, for a repair task, the original fails the security suite: a task its own
// reference does not solve, or whose weakness the tests cannot see, would
// pay or punish nothing real.
type ImportCheck struct {
	ID               string  `json:"id"`
	Source           string  `json:"source"`
	Visible          int     `json:"visible_tests"`
	Hidden           int     `json:"hidden_tests"`
	ReferenceVisible bool    `json:"reference_passes_functionality"`
	ReferenceHidden  bool    `json:"reference_passes_security"`
	OriginalVisible  bool    `json:"original_passes_functionality"`
	OriginalHidden   bool    `json:"original_passes_security"`
	OriginalSecurity float64 `json:"original_security_fraction"`
	Problem          string  `json:"problem,omitempty"`
	// ReferenceOutput is the test output when the reference failed.
	ReferenceOutput string `json:"-"`
}

var (
	missingModule = regexp.MustCompile(`No module named '([A-Za-z0-9_]+)`)
	notData       = regexp.MustCompile(`a ([A-Za-z0-9_.]+) is not data`)
)

// installHints say where modules benchmarks' tests import come from.
var installHints = map[string]string{
	"Crypto":                  "Debian package python3-pycryptodome: svbench serves Crypto from the Cryptodome it installs",
	"argon2":                  "Debian package python3-argon2",
	"jwt":                     "Debian package python3-jwt",
	"yaml":                    "Debian package python3-yaml",
	"lxml":                    "Debian package python3-lxml",
	"requests":                "Debian package python3-requests",
	"cryptography":            "Debian package python3-cryptography",
	"bcrypt":                  "Debian package python3-bcrypt",
	"wrapt_timeout_decorator": "PyPI's wrapt-timeout-decorator; no Debian package",
}

// Kept reports whether the task passed the check.
func (c ImportCheck) Kept() bool { return c.Problem == "" }

// CheckImported runs an imported pytest task's reference fix with each
// suite's size unknown, records the sizes it ran in t.Pytest, then runs the
// original code against them. It bypasses the memo: the counting runs must
// not be remembered as verdicts.
func (v *Verifier) CheckImported(ctx context.Context, t *taskset.Task) ImportCheck {
	c := ImportCheck{ID: t.ID, Source: t.Source}
	if t.Pytest == nil {
		c.Problem = "not a pytest task"
		return c
	}
	count := *t
	sel := *t.Pytest
	sel.Visible.Tests, sel.Hidden.Tests = 0, 0
	count.Pytest = &sel
	refVis, refHid := v.bothSuites(ctx, &count, Files(t.Fixed()))
	c.Visible, c.Hidden = refVis.Total, refHid.Total
	c.ReferenceVisible, c.ReferenceHidden = refVis.OK, refHid.OK
	switch {
	case refVis.Stage == "compile":
		c.ReferenceOutput = refVis.Output
		first, _, _ := strings.Cut(strings.TrimSpace(refVis.Output), "\n")
		c.Problem = "the reference does not build here: " + first
		return c
	case refVis.Total == 0 || refHid.Total == 0:
		c.ReferenceOutput = refVis.Output + "\n" + refHid.Output
		c.Problem = fmt.Sprintf("the reference ran %d functionality and %d security tests; both suites need at least one", refVis.Total, refHid.Total)
		if m := missingModule.FindStringSubmatch(c.ReferenceOutput); m != nil {
			c.Problem = fmt.Sprintf("the tests import Python module %s, which is not installed", m[1])
			if hint := installHints[m[1]]; hint != "" {
				c.Problem += " (" + hint + ")"
			}
		}
		return c
	case !refVis.OK || !refHid.OK:
		c.ReferenceOutput = refVis.Output + "\n" + refHid.Output
		c.Problem = fmt.Sprintf("the reference fix fails its own tests (functionality %d/%d, security %d/%d)",
			refVis.Passed, refVis.Total, refHid.Passed, refHid.Total)
		if m := notData.FindStringSubmatch(c.ReferenceOutput); m != nil {
			c.Problem += fmt.Sprintf(": the tests hand the function a %s, which cannot cross E3's data-only bridge", m[1])
		}
		return c
	}
	t.Pytest.Visible.Tests, t.Pytest.Hidden.Tests = refVis.Total, refHid.Total
	origVis, origHid := v.bothSuites(ctx, t, Files(t.Src))
	c.OriginalVisible, c.OriginalHidden = origVis.OK, origHid.OK
	c.OriginalSecurity = origHid.Fraction()
	switch {
	case t.Mode != taskset.ModeGenerate && origHid.OK:
		c.Problem = "the unsafe code passes every security test, so the tests cannot tell a repair from none"
	case t.Mode == taskset.ModeGenerate && origVis.OK:
		// A stub that stops the program (or raises) passing every
		// functionality test means those tests never run the function
		// (CWEval's JavaScript cwe_078_0 tests its own Python copy): func
		// and func-sec would pay for writing nothing. A stub passing
		// security cases alone is CWEval's own semantics (a refusal is
		// secure), which func-sec already guards.
		c.Problem = "the unwritten function passes every functionality test, so the tests do not run it"
	}
	return c
}

// bothSuites runs the two suites at once, as the rubric does: each waits
// mostly on its own sandbox and interpreters.
func (v *Verifier) bothSuites(ctx context.Context, t *taskset.Task, files Files) (vis, hid TestRun) {
	var wg sync.WaitGroup
	wg.Go(func() { vis = v.runSuite(ctx, t, SuiteVisible, files) })
	hid = v.runSuite(ctx, t, SuiteHidden, files)
	wg.Wait()
	return vis, hid
}
