package tfscan

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/types"
)

// trivy's checks point each finding at the most specific attribute of the
// resource with lib.cloud.metadata.obj_by_path(obj, path). Its Rego walks
// every node of the resource through a comprehension, so a bucket without
// the attribute in question costs about 1.5 ms per check (two such checks
// made a two-resource file cost 5 ms of evaluation). objByPath computes the
// same value in Go, visiting only the nodes whose path can match; the
// library rule is swapped for a call to it only while the library module is
// exactly the one it was written against (metadataModuleSHA256), and
// TestObjByPathMatchesRego and FuzzObjByPath hold the two to the same
// results.

const (
	metadataPackage = "data.lib.cloud.metadata"
	objByPathName   = "svbench.trivy_obj_by_path"
	// metadataModuleSHA256 is the sha256 of lib/cloud/metadata.rego's
	// parsed form (ast.Module.String) in the pinned trivy-checks.
	metadataModuleSHA256 = "63622105d00c0d12c9b6c15ecd67ec7cd6f727abb72f2bf08a18154bedc8b8ce"
)

var objByPathDecl = &rego.Function{
	Name: objByPathName,
	Decl: types.NewFunction(types.Args(types.A, types.A), types.A),
}

// objByPathBuiltin is the rego option that supplies objByPath to a query.
func objByPathBuiltin() func(*rego.Rego) {
	return rego.Function2(objByPathDecl, func(_ rego.BuiltinContext, obj, path *ast.Term) (*ast.Term, error) {
		return objByPath(obj, path), nil
	})
}

// metadataModuleHash identifies a parsed library module.
func metadataModuleHash(m *ast.Module) string {
	sum := sha256.Sum256([]byte(m.String()))
	return hex.EncodeToString(sum[:])
}

// replaceObjByPath swaps obj_by_path in modules' lib.cloud.metadata for a
// call to objByPath when that module is the known one, and reports whether
// it did; the compiler's capabilities must then declare the built-in.
func replaceObjByPath(modules map[string]*ast.Module) (bool, error) {
	for _, m := range modules {
		if m.Package.Path.String() != metadataPackage || metadataModuleHash(m) != metadataModuleSHA256 {
			continue
		}
		stub, err := ast.ParseModuleWithOpts("svbench-obj-by-path.rego",
			"package lib.cloud.metadata\n\nobj_by_path(obj, path) := "+objByPathName+"(obj, path)\n",
			ast.ParserOptions{RegoVersion: ast.RegoV1})
		if err != nil {
			return false, err
		}
		rules := m.Rules[:0:0]
		for _, r := range m.Rules {
			if r.Head.Name.String() != "obj_by_path" {
				rules = append(rules, r)
			}
		}
		for _, r := range stub.Rules {
			r.Module = m
			rules = append(rules, r)
		}
		m.Rules = rules
		return true, nil
	}
	return false, nil
}

// objByPath is obj_by_path: among the nodes of obj (obj itself included)
// that carry trivy metadata and whose path from obj is a contiguous
// sub-sequence of path, the one whose path is greatest in OPA's ordering;
// obj itself when there is none. A path that is not an array matches
// nothing (object.subset fails on it, which Rego reads as undefined).
func objByPath(obj, path *ast.Term) *ast.Term {
	want, ok := path.Value.(*ast.Array)
	if !ok {
		return obj
	}
	var best *ast.Array
	var bestNode *ast.Term
	var visit func(node *ast.Term, at []*ast.Term)
	visit = func(node *ast.Term, at []*ast.Term) {
		if !contiguousIn(want, at) {
			// Every extension of a path that is not a contiguous
			// sub-sequence contains it, so none is one either.
			return
		}
		if hasMetadata(node.Value) {
			p := ast.NewArray(append([]*ast.Term(nil), at...)...)
			if best == nil || ast.Compare(p, best) > 0 {
				best, bestNode = p, node
			}
		}
		child := func(k, v *ast.Term) { visit(v, append(at[:len(at):len(at)], k)) }
		switch v := node.Value.(type) {
		case ast.Object:
			v.Foreach(child)
		case *ast.Array:
			for i := range v.Len() {
				child(ast.InternedTerm(i), v.Elem(i))
			}
		case ast.Set:
			v.Foreach(func(e *ast.Term) { child(e, e) })
		}
	}
	visit(obj, nil)
	if bestNode == nil {
		return obj
	}
	return bestNode
}

// contiguousIn is object.subset(super, sub) for two arrays: sub occurs in
// super as a run of consecutive elements (an empty sub always does).
func contiguousIn(super *ast.Array, sub []*ast.Term) bool {
	n, m := super.Len(), len(sub)
outer:
	for start := 0; start+m <= n; start++ {
		for i := range m {
			if super.Elem(start+i).Value.Compare(sub[i].Value) != 0 {
				continue outer
			}
		}
		return true
	}
	return m == 0
}

// hasMetadata is the library's has_metadata: x.__defsec_metadata is
// defined and not false, or x.fskey is defined and not false and x has a
// "value" key. A ref into a set asks for membership.
func hasMetadata(x ast.Value) bool {
	return truthy(lookup(x, "__defsec_metadata")) || (truthy(lookup(x, "fskey")) && lookup(x, "value") != nil)
}

func lookup(x ast.Value, key string) *ast.Term {
	k := ast.StringTerm(key)
	switch v := x.(type) {
	case ast.Object:
		return v.Get(k)
	case ast.Set:
		if v.Contains(k) {
			return k
		}
	}
	return nil
}

func truthy(t *ast.Term) bool {
	if t == nil {
		return false
	}
	b, isBool := t.Value.(ast.Boolean)
	return !isBool || bool(b)
}
