package tfscan

import (
	"context"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	trivyrego "github.com/aquasecurity/trivy/pkg/iac/rego"
)

// libraryObjByPath evaluates the pinned trivy-checks library's own
// obj_by_path, unmodified.
type libraryObjByPath struct{ pq rego.PreparedEvalQuery }

func newLibraryObjByPath(t testing.TB) *libraryObjByPath {
	t.Helper()
	libs, err := trivyrego.LoadEmbeddedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	var opts []func(*rego.Rego)
	found := false
	for path, m := range libs {
		if m.Package.Path.String() == metadataPackage {
			if got := metadataModuleHash(m); got != metadataModuleSHA256 {
				t.Fatalf("trivy-checks' lib/cloud/metadata.rego changed (sha256 %s): review objByPath against it, then update metadataModuleSHA256", got)
			}
			opts = append(opts, rego.ParsedModule(m))
			found = true
			_ = path
		}
	}
	if !found {
		t.Fatal("lib.cloud.metadata not in trivy-checks' embedded libraries")
	}
	pq, err := rego.New(append(opts, rego.Query("x := data.lib.cloud.metadata.obj_by_path(input.obj, input.path)"))...).PrepareForEval(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return &libraryObjByPath{pq: pq}
}

func (l *libraryObjByPath) eval(t testing.TB, obj, path ast.Value) ast.Value {
	t.Helper()
	in := ast.NewObject([2]*ast.Term{ast.StringTerm("obj"), ast.NewTerm(obj)}, [2]*ast.Term{ast.StringTerm("path"), ast.NewTerm(path)})
	rs, err := l.pq.Eval(context.Background(), rego.EvalParsedInput(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 {
		t.Fatalf("library obj_by_path undefined for %v %v", obj, path)
	}
	v, err := ast.InterfaceToValue(rs[0].Bindings["x"])
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func checkObjByPath(t testing.TB, lib *libraryObjByPath, obj, path ast.Value) {
	t.Helper()
	want := lib.eval(t, obj, path)
	got := objByPath(ast.NewTerm(obj), ast.NewTerm(path)).Value
	// Bindings come back as JSON-like Go values, in which a set is an
	// array; compare through the same conversion.
	gotJSON, err := ast.JSON(got)
	if err != nil {
		t.Fatal(err)
	}
	gotBack, err := ast.InterfaceToValue(gotJSON)
	if err != nil {
		t.Fatal(err)
	}
	if ast.Compare(gotBack, want) != 0 {
		t.Fatalf("obj_by_path(%v, %v)\n go:      %v\n library: %v", obj, path, got, want)
	}
}

func TestObjByPathMatchesRego(t *testing.T) {
	lib := newLibraryObjByPath(t)
	if !scanner(t).checks.fastObjByPath {
		t.Error("the scanner evaluates the library's obj_by_path in Rego: replaceObjByPath did not recognise lib/cloud/metadata.rego")
	}
	md := `"__defsec_metadata": {"startline": 1}`
	for _, tt := range []struct{ obj, path string }{
		{`{` + md + `, "versioning": {` + md + `, "enabled": {"fskey": "k", "value": false}}}`, `["versioning", "enabled"]`},
		{`{` + md + `, "versioning": {` + md + `}}`, `["versioning", "enabled"]`},
		{`{` + md + `}`, `["logging", "enabled"]`},
		{`{"a": 1}`, `["a"]`},
		{`{` + md + `, "enabled": {"fskey": "k", "value": true}}`, `["versioning", "enabled"]`},
		{`{"__defsec_metadata": false, "x": {"fskey": "k", "value": null}}`, `["x"]`},
		{`{"x": {"fskey": false, "value": 1}}`, `["x"]`},
		{`{"x": [{"fskey": "a", "value": 1}, {"fskey": "b", "value": 2}]}`, `["x", 1]`},
		{`{"x": [{"fskey": "a", "value": 1}, {"fskey": "b", "value": 2}]}`, `["x"]`},
		{`{"x": {"fskey": "a", "value": 1}}`, `"x"`},
		{`{"x": {"fskey": "a", "value": 1}}`, `{"x"}`},
		{`{"x": {"fskey": "a", "value": 1}}`, `[]`},
		{`{` + md + `, "a": {` + md + `, "a": {` + md + `}}}`, `["a", "a", "a"]`},
		{`{"a": {"b": {` + md + `}}, "b": {` + md + `}}`, `["b"]`},
		{`{"a": {"b": {` + md + `}}, "b": {` + md + `}}`, `["a", "b"]`},
		{`{"s": {"__defsec_metadata", "x"}}`, `["s"]`},
		{`{"s": {"fskey", "value"}}`, `["s"]`},
		{`[{` + md + `}]`, `[0]`},
		{`"scalar"`, `["a"]`},
	} {
		obj, err := ast.ParseTerm(tt.obj)
		if err != nil {
			t.Fatal(err)
		}
		path, err := ast.ParseTerm(tt.path)
		if err != nil {
			t.Fatal(err)
		}
		checkObjByPath(t, lib, obj.Value, path.Value)
	}
}

// FuzzObjByPath builds objects and paths from the fuzzer's bytes over a
// small alphabet of keys (so paths and metadata keys collide often) and
// holds objByPath to the library's Rego.
func FuzzObjByPath(f *testing.F) {
	f.Add([]byte{1, 2, 0, 3, 1, 4, 2, 1, 0, 2})
	f.Add([]byte{1, 3, 5, 1, 6, 7, 0, 1, 2, 2, 5, 6})
	lib := newLibraryObjByPath(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := &valueReader{data: data}
		obj := astValue(r, 0)
		var path ast.Value
		if r.byte()%8 == 0 {
			path = astValue(r, 3)
		} else {
			var terms []*ast.Term
			for range int(r.byte() % 4) {
				terms = append(terms, astKey(r))
			}
			path = ast.NewArray(terms...)
		}
		checkObjByPath(t, lib, obj, path)
	})
}

var fuzzKeys = []string{"__defsec_metadata", "fskey", "value", "a", "b", "enabled"}

func astKey(r *valueReader) *ast.Term {
	b := r.byte()
	if b%7 == 6 {
		return ast.IntNumberTerm(int(b/7) % 3)
	}
	return ast.StringTerm(fuzzKeys[int(b%7)%len(fuzzKeys)])
}

func astValue(r *valueReader, depth int) ast.Value {
	op := r.byte() % 8
	if depth > 4 && op < 3 {
		op = 3
	}
	switch op {
	case 0, 1:
		obj := ast.NewObject()
		for range int(r.byte() % 4) {
			k := astKey(r)
			if obj.Get(k) == nil {
				obj.Insert(k, ast.NewTerm(astValue(r, depth+1)))
			}
		}
		return obj
	case 2:
		var terms []*ast.Term
		for range int(r.byte() % 3) {
			terms = append(terms, ast.NewTerm(astValue(r, depth+1)))
		}
		return ast.NewArray(terms...)
	case 3:
		return ast.Boolean(r.byte()%2 == 0)
	case 4:
		return ast.String(fuzzKeys[int(r.byte())%len(fuzzKeys)])
	case 5:
		return ast.NewSet(astKey(r), astKey(r))
	case 6:
		return ast.Null{}
	}
	return ast.IntNumberTerm(int(r.byte())).Value
}
