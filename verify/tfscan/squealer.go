package tfscan

import (
	"fmt"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown/builtins"
	"github.com/open-policy-agent/opa/v1/types"
	"github.com/owenrumney/squealer/pkg/squealer"
)

// trivy-checks' squealer.scan_string built-in (the secrets-in-user-data
// checks) builds a new squealer scanner, compiling every one of its
// regular expressions, on each call: about 3 ms per EC2 instance, launch
// configuration or VM, even with no user data. A scanner only reads its
// compiled expressions once built, so svbench builds one per checkSet and
// points the checks' calls at it. OPA resolves a globally registered
// built-in before a query's own, so the calls are renamed rather than
// overridden. TestSquealerMatchesTrivy holds the two to the same answers.

var (
	squealerCall     = ast.MustParseRef("squealer.scan_string")
	fastSquealerName = "svbench.squealer_scan_string"
	fastSquealerCall = ast.MustParseRef(fastSquealerName)
)

var fastSquealerDecl = &rego.Function{
	Name: fastSquealerName,
	Decl: types.NewFunction(types.Args(types.S), types.NewObject([]*types.StaticProperty{
		{Key: "transgressionFound", Value: types.NewBoolean()},
		{Key: "description", Value: types.NewString()},
	}, nil)),
	Memoize: true,
}

// fastSquealerBuiltin is the rego option supplying the shared scanner.
func fastSquealerBuiltin(sc *squealer.StringScanner) func(*rego.Rego) {
	return rego.Function1(fastSquealerDecl, func(_ rego.BuiltinContext, a *ast.Term) (*ast.Term, error) {
		s, err := builtins.StringOperand(a.Value, 0)
		if err != nil {
			return nil, fmt.Errorf("invalid parameter type: %w", err)
		}
		res := sc.Scan(string(s))
		return ast.ObjectTerm(
			ast.Item(ast.StringTerm("transgressionFound"), ast.BooleanTerm(res.TransgressionFound)),
			ast.Item(ast.StringTerm("description"), ast.StringTerm(res.Description)),
		), nil
	})
}

// renameSquealerCalls points every squealer.scan_string call in modules at
// the shared scanner and reports whether there was one.
func renameSquealerCalls(modules map[string]*ast.Module) bool {
	renamed := false
	for _, m := range modules {
		ast.WalkExprs(m, func(e *ast.Expr) bool {
			if e.IsCall() && e.Operator().Equal(squealerCall) {
				e.Terms.([]*ast.Term)[0] = ast.NewTerm(fastSquealerCall.Copy())
				renamed = true
			}
			return false
		})
		ast.WalkTerms(m, func(t *ast.Term) bool {
			if c, ok := t.Value.(ast.Call); ok && len(c) > 0 && c[0].Value.Compare(squealerCall) == 0 {
				c[0] = ast.NewTerm(fastSquealerCall.Copy())
				renamed = true
			}
			return false
		})
	}
	return renamed
}
