package cvefixes

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/svbench/svbench/envs/codevuln/taskset"
)

func TestImportFixture(t *testing.T) {
	var results []Result
	for _, name := range []string{"file_change.jsonl", "file_change.csv"} {
		res, err := ImportFile(filepath.Join("testdata", name), Options{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		results = append(results, res)
		var ids []string
		for _, task := range res.Tasks {
			ids = append(ids, task.ID)
			if task.Mode != taskset.ModeStaticOnly || task.Tested() {
				t.Errorf("%s: mode %q", task.ID, task.Mode)
			}
			if len(task.Visible)+len(task.Hidden) != 0 {
				t.Errorf("%s: has tests", task.ID)
			}
		}
		want := []string{"py-089-cve-2021-1234-1", "go-079-cve-2020-54321-1", "py-089-cve-2021-1234-2"}
		if !reflect.DeepEqual(ids, want) {
			t.Errorf("%s: ids %v, want %v", name, ids, want)
		}
		if len(res.Skipped) != 4 {
			t.Errorf("%s: skipped %+v, want 4 (C, NVD-CWE-Other, unchanged, added file)", name, res.Skipped)
		}
		py := res.Tasks[0]
		if !reflect.DeepEqual(py.API, []string{"get_user(conn, name)"}) || py.Severity != "high" || py.CWE != "CWE-89" || py.Files[0] != "users.py" {
			t.Errorf("python task: %+v", py)
		}
		if !strings.Contains(py.Source, "CVE-2021-1234") || !strings.Contains(py.Source, "abc123") {
			t.Errorf("source %q", py.Source)
		}
		if strings.Contains(py.Description, "?") || !strings.Contains(py.Description, "SQL Injection") {
			t.Errorf("description leaks the fix or lacks the CWE: %q", py.Description)
		}
		g := res.Tasks[1]
		if g.Language != taskset.Go || string(g.Src["go.mod"]) != taskset.GoMod || len(g.API) != 1 || !strings.HasPrefix(g.API[0], "func Greet(w http.ResponseWriter") {
			t.Errorf("go task: %+v", g)
		}
		if res.Tasks[2].Severity != "critical" || res.Tasks[2].CWE != "CWE-89" {
			t.Errorf("bare numeric cwe_id / severity: %+v", res.Tasks[2])
		}
	}
	for i := range results[0].Tasks {
		a, b := results[0].Tasks[i], results[1].Tasks[i]
		if !reflect.DeepEqual(a, b) {
			t.Errorf("CSV and JSONL imports differ for %s", a.ID)
		}
	}
	// Written tasks load back through the validator.
	dir := t.TempDir()
	for _, task := range results[0].Tasks {
		if err := taskset.Write(dir, task); err != nil {
			t.Fatal(err)
		}
	}
	back, err := taskset.Load(os.DirFS(dir))
	if err != nil || len(back) != 3 {
		t.Fatalf("reload: %d tasks, %v", len(back), err)
	}
	if back[0].Mode != taskset.ModeStaticOnly {
		t.Errorf("mode lost on disk: %q", back[0].Mode)
	}
}

func TestOptions(t *testing.T) {
	res, err := ImportFile("testdata/file_change.jsonl", Options{Languages: []string{taskset.Go}})
	if err != nil || len(res.Tasks) != 1 || res.Tasks[0].Language != taskset.Go {
		t.Errorf("Go only: %v %v", res.Tasks, err)
	}
	res, err = ImportFile("testdata/file_change.jsonl", Options{MaxFileBytes: 100})
	if err != nil || len(res.Tasks) != 0 {
		t.Errorf("MaxFileBytes=100: %d tasks, %v", len(res.Tasks), err)
	}
	res, err = ImportFile("testdata/file_change.jsonl", Options{MaxTasks: 1})
	if err != nil || len(res.Tasks) != 1 {
		t.Errorf("MaxTasks=1: %d tasks, %v", len(res.Tasks), err)
	}
	res, err = ImportFile("testdata/file_change.jsonl", Options{MaxRecordBytes: 200})
	if err != nil || len(res.Tasks) != 0 || !strings.Contains(res.Skipped[0].Reason, "longer than 200") {
		t.Errorf("MaxRecordBytes=200: %d tasks, %v, %+v", len(res.Tasks), err, res.Skipped)
	}
}

func TestErrors(t *testing.T) {
	row := `{"filename":"a.py","programming_language":"Python","cve_id":"CVE-2021-1000","cwe_id":"CWE-89","code_before":"def f():\n  return 1\n","code_after":"def f():\n  return 2\n"}`
	cases := []struct {
		name, format, input, want string
	}{
		{"jsonl syntax", "jsonl", row + "\n{\"filename\": \"x\",, }\n", "line 2, column 18"},
		{"jsonl not object", "jsonl", "[1, 2]\n", "line 1, column"},
		{"jsonl missing field", "jsonl", `{"filename":"a.py"}` + "\n", `line 1: record lacks field "code_before"`},
		{"csv header", "csv", "filename,cve_id\na.py,CVE-2021-1\n", "CSV header lacks column(s) code_before, code_after, programming_language, cwe_id"},
		{"csv quote", "csv", "code_before,code_after,programming_language,cve_id,cwe_id,filename\n\"def f(): pass\" x,b,Python,CVE-2021-1,CWE-1,a.py\n", "line 2, column 15"},
		{"csv fields", "csv", "code_before,code_after,programming_language,cve_id,cwe_id,filename\na,b\n", "line 2, column 1: wrong number of fields"},
		{"format", "xml", "", "unknown format"},
	}
	for _, c := range cases {
		_, err := Read(strings.NewReader(c.input), c.format, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want it to contain %q", c.name, err, c.want)
		}
	}
	// Auto-detection: JSONL by a leading '{', CSV otherwise.
	res, err := Read(strings.NewReader("\ufeff"+row+"\n"), "", Options{})
	if err != nil || len(res.Tasks) != 1 {
		t.Errorf("auto JSONL with BOM: %v %v", res, err)
	}
}

func TestSkipReasons(t *testing.T) {
	mk := func(fields map[string]string) string {
		base := map[string]string{"filename": "a.py", "programming_language": "Python", "cve_id": "CVE-2021-1111", "cwe_id": "CWE-22",
			"code_before": "def f(x):\n    return x\n", "code_after": "def f(x):\n    return x + 1\n"}
		for k, v := range fields {
			base[k] = v
		}
		var sb strings.Builder
		sb.WriteString("{")
		first := true
		for k, v := range base {
			if !first {
				sb.WriteString(",")
			}
			first = false
			sb.WriteString(`"` + k + `":` + quote(v))
		}
		sb.WriteString("}\n")
		return sb.String()
	}
	cases := map[string]string{
		"not a CVE id":             mk(map[string]string{"cve_id": "GHSA-1234"}),
		"names no specific CWE":    mk(map[string]string{"cwe_id": "NVD-CWE-noinfo"}),
		"is not a python source":   mk(map[string]string{"filename": "a.txt"}),
		"characters outside":       mk(map[string]string{"filename": "we ird.py"}),
		"no function definitions":  mk(map[string]string{"code_before": "x = 1\n", "code_after": "x = 2\n"}),
		"without a package clause": mk(map[string]string{"programming_language": "Go", "filename": "a.go", "code_before": "func F() {}\n", "code_after": "func F() { return }\n"}),
		"is not a go source":       mk(map[string]string{"programming_language": "Go", "filename": "a_test.go"}),
	}
	for reason, input := range cases {
		res, err := Read(strings.NewReader(input), "jsonl", Options{})
		if err != nil || len(res.Tasks) != 0 || len(res.Skipped) != 1 || !strings.Contains(strings.ToLower(res.Skipped[0].Reason), strings.ToLower(reason)) {
			t.Errorf("%s: tasks %d, skipped %+v, err %v", reason, len(res.Tasks), res.Skipped, err)
		}
	}
	// Windows line endings alone are not a fix.
	res, _ := Read(strings.NewReader(mk(map[string]string{"code_after": "def f(x):\r\n    return x\r\n"})), "jsonl", Options{})
	if len(res.Tasks) != 0 {
		t.Error("CRLF-only change imported")
	}
}

func quote(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`)
	return `"` + r.Replace(s) + `"`
}

// FuzzRead: arbitrary input never panics, and every task returned passes the
// task-format validator.
func FuzzRead(f *testing.F) {
	for _, name := range []string{"file_change.jsonl", "file_change.csv"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("code_before,code_after,programming_language,cve_id,cwe_id,filename\n"))
	f.Add([]byte(`{"code_before": 1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Read(strings.NewReader(string(data)), "", Options{MaxRecordBytes: 1 << 16})
		if err != nil {
			return
		}
		for _, task := range res.Tasks {
			if err := taskset.Validate(&task); err != nil {
				t.Fatalf("invalid task from importer: %v", err)
			}
			if task.Tested() {
				t.Fatalf("%s: imported task is not static-only", task.ID)
			}
		}
	})
}
