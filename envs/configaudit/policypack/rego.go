package policypack

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
)

// The Rego convention every pack follows.
const (
	// EntryPackage holds the violations rule; helper packages may live
	// under it (svbench.policypack.lib, …).
	EntryPackage = "svbench.policypack"
	// EntryRule is the partial set rule whose members are
	// {"clause", "object", "msg"} objects.
	EntryRule  = "violations"
	entryQuery = "data." + EntryPackage + "." + EntryRule
)

// Bounds on a pack's Rego.
const (
	MaxRegoFileBytes = 256 << 10
	MaxRegoFiles     = 32
)

// regoFile is one source file of a pack.
type regoFile struct {
	Name string
	Src  []byte
}

// parseRego parses one file as Rego v1, falling back to v0 syntax as
// verify/policy does; the v1 error (with file:line:col) is reported when both
// fail.
func parseRego(f regoFile) (*ast.Module, error) {
	if len(f.Src) > MaxRegoFileBytes {
		return nil, fmt.Errorf("%s: %d bytes exceeds the %d-byte limit for a Rego file", f.Name, len(f.Src), MaxRegoFileBytes)
	}
	m, err := ast.ParseModuleWithOpts(f.Name, string(f.Src), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err == nil {
		return m, nil
	}
	if m0, err0 := ast.ParseModuleWithOpts(f.Name, string(f.Src), ast.ParserOptions{RegoVersion: ast.RegoV0}); err0 == nil {
		return m0, nil
	}
	return nil, fmt.Errorf("invalid Rego: %w", err)
}

// compileRego compiles the implementation modules (no tests) and prepares
// the entry query once. Compile errors carry file:line from OPA.
func compileRego(ctx context.Context, modules map[string]*ast.Module) (*ast.Compiler, rego.PreparedEvalQuery, error) {
	c := ast.NewCompiler()
	if c.Compile(modules); c.Failed() {
		return nil, rego.PreparedEvalQuery{}, fmt.Errorf("Rego does not compile: %w", c.Errors)
	}
	if err := checkEntry(modules); err != nil {
		return nil, rego.PreparedEvalQuery{}, err
	}
	pq, err := rego.New(
		rego.Query(entryQuery),
		rego.Compiler(c),
		// A builtin error on hostile input (a huge number, a bad regex in
		// data) makes that expression undefined instead of failing the
		// evaluation, as in verify/policy.
		rego.StrictBuiltinErrors(false),
	).PrepareForEval(ctx)
	if err != nil {
		return nil, pq, fmt.Errorf("preparing %s: %w", entryQuery, err)
	}
	return c, pq, nil
}

func checkEntry(modules map[string]*ast.Module) error {
	found := false
	for _, name := range slices.Sorted(maps.Keys(modules)) {
		m := modules[name]
		if m.Package.Path.String() != "data."+EntryPackage {
			continue
		}
		for _, r := range m.Rules {
			if r.Head.Name.String() != EntryRule && r.Head.Ref().String() != EntryRule {
				continue
			}
			if r.Head.RuleKind() != ast.MultiValue {
				return fmt.Errorf("%s:%d: %s must be a partial set rule (`%s contains v if { … }`)", name, r.Location.Row, EntryRule, EntryRule)
			}
			found = true
		}
	}
	if !found {
		return fmt.Errorf("no rule %s in package %s: write `package %s` and `%s contains {\"clause\": …, \"object\": …, \"msg\": …} if { … }`", EntryRule, EntryPackage, EntryPackage, EntryRule)
	}
	return nil
}

// literalUse is a clause-id-shaped string literal in the implementation.
type literalUse struct {
	file string
	line int
	// produced is true when the literal is the value of a "clause" key or
	// appears in a violations rule, i.e. the rule can emit it.
	produced bool
}

// clauseLiterals collects the clause-id-shaped string literals of the
// implementation modules with where they occur.
func clauseLiterals(modules map[string]*ast.Module) map[string][]literalUse {
	out := map[string][]literalUse{}
	add := func(s string, loc *ast.Location, produced bool, file string) {
		if !ValidClauseID(s) {
			return
		}
		line := 0
		if loc != nil {
			line = loc.Row
		}
		out[s] = append(out[s], literalUse{file: file, line: line, produced: produced})
	}
	for _, name := range slices.Sorted(maps.Keys(modules)) {
		m := modules[name]
		entry := m.Package.Path.String() == "data."+EntryPackage
		for _, r := range m.Rules {
			inViolations := entry && r.Head.Name.String() == EntryRule
			ast.WalkTerms(r, func(t *ast.Term) bool {
				switch v := t.Value.(type) {
				case ast.String:
					add(string(v), t.Location, inViolations, name)
				case ast.Object:
					if val := v.Get(ast.StringTerm("clause")); val != nil {
						if s, ok := val.Value.(ast.String); ok {
							add(string(s), val.Location, true, name)
						}
					}
				}
				return false
			})
		}
	}
	return out
}

// checkClauseCoverage is the static check: every clause of the document is
// mentioned by some rule, and no rule emits a clause id the document lacks.
func checkClauseCoverage(doc Document, modules map[string]*ast.Module) error {
	lits := clauseLiterals(modules)
	known := map[string]bool{}
	var problems []string
	for _, c := range doc.Clauses {
		known[c.ID] = true
		if len(lits[c.ID]) == 0 {
			problems = append(problems, fmt.Sprintf("clause %s (policy.md line %d) has no rule: the id never appears in any .rego file, so it can never be reported", c.ID, c.Line))
		}
	}
	ids := slices.Sorted(maps.Keys(lits))
	for _, id := range ids {
		if known[id] {
			continue
		}
		for _, u := range lits[id] {
			if u.produced {
				problems = append(problems, fmt.Sprintf("%s:%d: a rule produces clause %s, which policy.md does not define", u.file, u.line, id))
				break
			}
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}
