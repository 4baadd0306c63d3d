package taskset

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

func validPy() fstest.MapFS {
	meta := map[string]any{
		"id": "py-089-demo", "title": "demo", "language": "python", "cwe": "CWE-89",
		"severity": "high", "description": "d", "files": []string{"app.py"},
		"api": []string{"find(conn, name)"}, "difficulty": "easy",
	}
	b, _ := json.Marshal(meta)
	return fstest.MapFS{
		"py-089-demo/task.json":                       {Data: b},
		"py-089-demo/src/app.py":                      {Data: []byte("def find(conn, name):\n    return 1\n")},
		"py-089-demo/src/helper.py":                   {Data: []byte("X = 1\n")},
		"py-089-demo/fix/app.py":                      {Data: []byte("def find(conn, name):\n    return 2\n")},
		"py-089-demo/tests/visible/test_behaviour.py": {Data: []byte("import app\n")},
		"py-089-demo/tests/hidden/test_security.py":   {Data: []byte("import app\n")},
	}
}

func withMeta(fsys fstest.MapFS, edit func(m map[string]any)) fstest.MapFS {
	out := fstest.MapFS{}
	for k, v := range fsys {
		out[k] = v
	}
	var m map[string]any
	json.Unmarshal(out["py-089-demo/task.json"].Data, &m)
	edit(m)
	b, _ := json.Marshal(m)
	out["py-089-demo/task.json"] = &fstest.MapFile{Data: b}
	return out
}

func without(fsys fstest.MapFS, names ...string) fstest.MapFS {
	out := fstest.MapFS{}
	for k, v := range fsys {
		out[k] = v
	}
	for _, n := range names {
		delete(out, n)
	}
	return out
}

func with(fsys fstest.MapFS, name, body string) fstest.MapFS {
	out := without(fsys)
	out[name] = &fstest.MapFile{Data: []byte(body)}
	return out
}

func TestLoadValid(t *testing.T) {
	got, err := Load(validPy())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].ID != "py-089-demo" || got[0].Mode != ModeTested || !got[0].Tested() {
		t.Fatalf("got %+v", got)
	}
	if string(got[0].Fixed()["app.py"]) != "def find(conn, name):\n    return 2\n" || got[0].Fixed()["helper.py"] == nil {
		t.Errorf("Fixed() = %v", got[0].Fixed())
	}
	if n := got[0].APINames(); len(n) != 1 || n[0] != "find" {
		t.Errorf("APINames = %v", n)
	}
}

func TestLoadErrors(t *testing.T) {
	base := validPy()
	cases := []struct {
		name string
		fsys fstest.MapFS
		want string
	}{
		{"no task.json", without(base, "py-089-demo/task.json"), "task py-089-demo: task.json"},
		{"bad json", with(base, "py-089-demo/task.json", "{"), "task.json: unexpected EOF"},
		{"unknown field", withMeta(base, func(m map[string]any) { m["sevrity"] = "x" }), `unknown field "sevrity"`},
		{"id differs", withMeta(base, func(m map[string]any) { m["id"] = "py-089-other" }), "differs from the directory name"},
		{"id cwe mismatch", withMeta(base, func(m map[string]any) { m["cwe"] = "CWE-22" }), "encodes CWE 089 but field cwe is CWE-22"},
		{"language", withMeta(base, func(m map[string]any) { m["language"] = "rust" }), `field language "rust"`},
		{"prefix", withMeta(base, func(m map[string]any) { m["language"] = "go"; m["files"] = []string{"app.py"} }), `prefix "py" does not match language "go"`},
		{"cwe syntax", withMeta(base, func(m map[string]any) { m["cwe"] = "89" }), `field cwe "89"`},
		{"cwe not allowed", withMeta(base, func(m map[string]any) { m["cwe"] = "CWE-999" }), "not one of the CWEs"},
		{"severity", withMeta(base, func(m map[string]any) { m["severity"] = "urgent" }), `field severity "urgent"`},
		{"difficulty", withMeta(base, func(m map[string]any) { m["difficulty"] = "trivial" }), `field difficulty "trivial"`},
		{"mode", withMeta(base, func(m map[string]any) { m["mode"] = "fuzzy" }), `field mode "fuzzy"`},
		{"empty description", withMeta(base, func(m map[string]any) { m["description"] = " " }), "field description is empty"},
		{"no files", withMeta(base, func(m map[string]any) { m["files"] = []string{} }), "field files is empty"},
		{"missing file", withMeta(base, func(m map[string]any) { m["files"] = []string{"app.py", "nope.py"} }), `files[1] "nope.py" does not exist under src/`},
		{"unclean path", withMeta(base, func(m map[string]any) { m["files"] = []string{"../app.py"} }), "not a clean relative path"},
		{"wrong ext", withMeta(with(base, "py-089-demo/src/notes.txt", "x"), func(m map[string]any) { m["files"] = []string{"app.py", "notes.txt"} }), `"notes.txt" is not a .py file`},
		{"no api", withMeta(base, func(m map[string]any) { m["api"] = []string{} }), "field api is empty"},
		{"api undefined", withMeta(base, func(m map[string]any) { m["api"] = []string{"lookup(x)"} }), "no definition of lookup"},
		{"api syntax", withMeta(base, func(m map[string]any) { m["api"] = []string{"not a signature"} }), "is not a signature"},
		{"no fix", without(base, "py-089-demo/fix/app.py"), "fix/: no files"},
		{"fix without src", with(base, "py-089-demo/fix/other.py", "x"), "fix/other.py: no file of the same name under src/"},
		{"fix not editable", with(base, "py-089-demo/fix/helper.py", "X = 2\n"), "fix/helper.py: not listed in task.json files"},
		{"fix identical", with(base, "py-089-demo/fix/app.py", "def find(conn, name):\n    return 1\n"), "identical to src/app.py"},
		{"no visible", without(base, "py-089-demo/tests/visible/test_behaviour.py"), "tests/visible/: no test files"},
		{"no hidden", without(base, "py-089-demo/tests/hidden/test_security.py"), "tests/hidden/: no test files"},
		{"test name", with(base, "py-089-demo/tests/hidden/security.py", "x"), "must be named test_*.py"},
		{"static-only with tests", withMeta(base, func(m map[string]any) { m["mode"] = "static-only" }), "must not ship tests"},
		{"too big", with(base, "py-089-demo/src/big.py", strings.Repeat("x", MaxFileBytes+1)), "larger than"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Load(c.fsys)
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v; want it to contain %q", err, c.want)
			}
			if !strings.Contains(err.Error(), "py-089-demo") {
				t.Errorf("error does not name the task: %v", err)
			}
		})
	}
}

func TestStaticOnly(t *testing.T) {
	fsys := withMeta(without(validPy(), "py-089-demo/tests/visible/test_behaviour.py", "py-089-demo/tests/hidden/test_security.py"),
		func(m map[string]any) { m["mode"] = "static-only"; m["cwe"] = "CWE-89" })
	got, err := Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Tested() {
		t.Error("static-only task reports Tested")
	}
	// Static-only tasks may carry CWEs outside the tested list.
	fsys = withMeta(fsys, func(m map[string]any) { m["cwe"] = "CWE-89" })
	if _, err := Load(fsys); err != nil {
		t.Fatal(err)
	}
}

func TestGoModSynthesised(t *testing.T) {
	meta := `{"id":"go-022-x","title":"t","language":"go","cwe":"CWE-22","severity":"low","description":"d","files":["a.go"],"api":["func (s *S) Open(name string) error"],"difficulty":"hard"}`
	fsys := fstest.MapFS{
		"go-022-x/task.json":                       {Data: []byte(meta)},
		"go-022-x/src/a.go":                        {Data: []byte("package a\n\nfunc (s *S) Open(name string) error { return nil }\n")},
		"go-022-x/fix/a.go":                        {Data: []byte("package a\n\nfunc (s *S) Open(name string) error { return err }\n")},
		"go-022-x/tests/visible/behaviour_test.go": {Data: []byte("package a\n")},
		"go-022-x/tests/hidden/security_test.go":   {Data: []byte("package a\n")},
	}
	got, err := Load(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if string(got[0].Src["go.mod"]) != GoMod {
		t.Errorf("go.mod = %q", got[0].Src["go.mod"])
	}
	bad := with(fsys, "go-022-x/tests/hidden/security.go", "package a\n")
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "*_test.go") {
		t.Errorf("err = %v", err)
	}
}

func TestWriteRoundTrip(t *testing.T) {
	src, err := Load(validPy())
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := Write(dir, src[0]); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, src[0]); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second Write: %v", err)
	}
	back, err := Load(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	if back[0].Description != src[0].Description || string(back[0].Fix["app.py"]) != string(src[0].Fix["app.py"]) || len(back[0].Hidden) != 1 {
		t.Errorf("round trip lost data: %+v", back[0])
	}
	bad := src[0]
	bad.Severity = "x"
	if err := Write(filepath.Join(dir, "other"), bad); err == nil {
		t.Error("Write accepted an invalid task")
	}
}
