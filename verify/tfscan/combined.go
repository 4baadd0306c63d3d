package tfscan

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/aquasecurity/trivy/pkg/iac/scan"
	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	trivyrego "github.com/aquasecurity/trivy/pkg/iac/rego"
)

// Which checks apply depends only on the input's providers and services, so
// checks are grouped by their selectors (a few dozen groups for ~500
// checks) and each group is tested once per scan. The applicable checks of
// an input are then evaluated in one combined query, prepared once per
// distinct set: one evaluation instead of ~70 saves the per-query set-up
// and lets the checks share the library rules OPA caches within a query.
// Each check is wrapped in an array comprehension ([r | r := data.ns.deny])
// so an undefined rule cannot make the whole query undefined, and a query
// that fails (a conflict in one rule) is re-run check by check, which is
// what trivy does (it logs the failing rule and carries on).

// maxCombinedSets bounds the prepared combined queries; hostile inputs can
// name many provider and service combinations, and past the bound they are
// evaluated check by check.
const maxCombinedSets = 256

type selectorGroup struct {
	selectors []trivyrego.Selector
	checks    []int // indexes into checkSet.checks
}

type combinedQuery struct {
	once   sync.Once
	query  rego.PreparedEvalQuery
	err    error
	checks []int
}

// groupChecks fills cs.groups from cs.checks.
func (cs *checkSet) groupChecks() error {
	byKey := map[string]int{}
	for i, c := range cs.checks {
		b, err := json.Marshal(c.selectors)
		if err != nil {
			return fmt.Errorf("selectors of %s.%s: %w", c.namespace, c.rule, err)
		}
		g, ok := byKey[string(b)]
		if !ok {
			g = len(cs.groups)
			byKey[string(b)] = g
			cs.groups = append(cs.groups, selectorGroup{selectors: c.selectors})
		}
		cs.groups[g].checks = append(cs.groups[g].checks, i)
	}
	return nil
}

// applicableChecks lists, in cs.checks order, the checks that apply to
// contents, and a key naming that set.
func (cs *checkSet) applicableChecks(contents map[string]any) ([]int, string) {
	var groups []int
	for g := range cs.groups {
		if cs.applicable(cs.groups[g].selectors, contents) {
			groups = append(groups, g)
		}
	}
	key := make([]byte, 0, 2*len(groups))
	var checks []int
	for _, g := range groups {
		key = binary.AppendUvarint(key, uint64(g))
		checks = append(checks, cs.groups[g].checks...)
	}
	return checks, string(key)
}

// combined returns the prepared query evaluating checks, preparing it on
// first use; nil when the bound on prepared sets is reached.
func (cs *checkSet) combined(ctx context.Context, key string, checks []int) *combinedQuery {
	q := cs.combinedEntry(key, checks)
	if q == nil {
		return nil
	}
	q.once.Do(func() {
		var b strings.Builder
		for n, i := range q.checks {
			if n > 0 {
				b.WriteString("; ")
			}
			c := &cs.checks[i]
			fmt.Fprintf(&b, "x%d := [r | r := data.%s.%s]", n, c.namespace, c.rule)
		}
		// Shared by every later scan: a cancelled first request must not
		// leave the set unprepared for good.
		q.query, q.err = rego.New(cs.regoOptions(b.String())...).PrepareForEval(context.WithoutCancel(ctx))
	})
	if q.err != nil {
		return nil
	}
	return q
}

func (cs *checkSet) combinedEntry(key string, checks []int) *combinedQuery {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if q, ok := cs.sets[key]; ok {
		return q
	}
	if len(cs.sets) >= maxCombinedSets {
		return nil
	}
	q := &combinedQuery{checks: checks}
	cs.sets[key] = q
	return q
}

// evalCombined evaluates the checks in one query; ok is false when that
// failed and the caller should evaluate them one by one.
func (cs *checkSet) evalCombined(ctx context.Context, q *combinedQuery, input ast.Value, contents map[string]any, path string) (scan.Results, bool) {
	rs, err := q.query.Eval(ctx, rego.EvalParsedInput(input))
	if err != nil || len(rs) != 1 {
		return nil, false
	}
	var results scan.Results
	for n, i := range q.checks {
		c := &cs.checks[i]
		values, ok := rs[0].Bindings[fmt.Sprintf("x%d", n)].([]any)
		if !ok {
			return nil, false
		}
		var failed scan.Results
		for _, v := range values {
			failed = append(failed, convertValue(v, contents, path, c.namespace, c.rule)...)
		}
		failed.SetRule(c.meta)
		results = append(results, failed...)
	}
	return results, true
}

// evalEach is trivy's way: one query per check, a failing check skipped.
func (cs *checkSet) evalEach(ctx context.Context, checks []int, input ast.Value, contents map[string]any, path string) (scan.Results, error) {
	var results scan.Results
	for _, i := range checks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		c := &cs.checks[i]
		rs, err := c.query.Eval(ctx, rego.EvalParsedInput(input))
		if err != nil {
			continue
		}
		failed := convertResults(rs, contents, path, c.namespace, c.rule)
		failed.SetRule(c.meta)
		results = append(results, failed...)
	}
	return results, nil
}
