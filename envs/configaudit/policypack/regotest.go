package policypack

import (
	"context"
	"fmt"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/tester"
)

// runRegoTests runs the pack's *_test.rego files with OPA's tester, as
// `opa test` would, and fails with every failing test's file, line and name.
func (p *Pack) runRegoTests(ctx context.Context) error {
	if len(p.tests) == 0 {
		return nil
	}
	all := make(map[string]*ast.Module, len(p.modules)+len(p.tests))
	for k, m := range p.modules {
		all[k] = m
	}
	for k, m := range p.tests {
		all[k] = m
	}
	ch, err := tester.NewRunner().SetModules(all).SetParallel(1).RunTests(ctx, nil)
	if err != nil {
		return fmt.Errorf("Rego tests do not compile: %w", err)
	}
	var failed []string
	n := 0
	for r := range ch {
		n++
		if r.Pass() || r.Skip {
			continue
		}
		loc := "?"
		if r.Location != nil {
			loc = fmt.Sprintf("%s:%d", r.Location.File, r.Location.Row)
		}
		what := "failed"
		if r.Error != nil {
			what = "error: " + r.Error.Error()
		}
		failed = append(failed, fmt.Sprintf("%s: %s %s", loc, r.Name, what))
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d Rego tests fail: %s", len(failed), n, strings.Join(failed, "; "))
	}
	return nil
}
