package codevuln

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/svbench/svbench/envs/codevuln/taskset"
)

func goRules(src string) []string {
	var out []string
	for _, f := range AnalyseGo("a.go", []byte(src)) {
		out = append(out, f.RuleID)
	}
	return out
}

func TestGoRules(t *testing.T) {
	const head = "package p\n\nimport (\n\t\"crypto/tls\"\n\t\"database/sql\"\n\t\"fmt\"\n\t\"io\"\n\t\"math/rand\"\n\t\"net/http\"\n\t\"os\"\n\t\"os/exec\"\n\t\"path/filepath\"\n\t\"strings\"\n)\n\n"
	for _, c := range []struct {
		name, body string
		want       string // rule that must fire, "" = none
	}{
		{"sql concat", "func F(db *sql.DB, n string) { db.Query(\"SELECT * FROM t WHERE n = '\" + n + \"'\") }", "SVGO-SQL"},
		{"sql sprintf var", "func F(db *sql.DB, n string) { q := fmt.Sprintf(\"SELECT %s\", n); db.Query(q) }", "SVGO-SQL"},
		{"sql placeholder", "func F(db *sql.DB, n string) { db.Query(\"SELECT * FROM t WHERE n = ?\", n) }", ""},
		{"shell", "func F(x string) { exec.Command(\"sh\", \"-c\", \"grep \"+x).Run() }", "SVGO-CMD"},
		{"shell named by a const", "const shell = \"/bin/\" + \"sh\"\n\nfunc F(x string) { exec.Command(shell, \"-c\", \"grep \"+x).Run() }", "SVGO-CMD"},
		{"shell const, constant command line", "const shell = \"sh\"\n\nfunc F() { exec.Command(shell, \"-c\", \"grep -r x .\").Run() }", ""},
		{"argv", "func F(x string) { exec.Command(\"grep\", \"--\", x).Run() }", ""},
		{"argv, program in a const", "const prog = \"grep\"\n\nfunc F(x string) { exec.Command(prog, \"--\", x).Run() }", ""},
		{"path join", "func F(base, n string) { os.ReadFile(filepath.Join(base, n)) }", "SVGO-PATH"},
		{"path checked", "func F(base, n string) { p := filepath.Join(base, n); if !strings.HasPrefix(p, base) { return }; os.ReadFile(p) }", ""},
		{"tls", "var c = &tls.Config{InsecureSkipVerify: true}", "SVGO-TLSVERIFY"},
		{"secret", "const apiKey = \"sk-live-1234567890\"", "SVGO-HARDCODED"},
		{"weak rand", "func NewToken() int { return rand.Int() }", "SVGO-WEAKRAND"},
		{"redirect", "func F(w http.ResponseWriter, r *http.Request, next string) { http.Redirect(w, r, next, 302) }", "SVGO-REDIRECT"},
		{"xss", "func F(w http.ResponseWriter, name string) { fmt.Fprintf(w, \"<h1>%s</h1>\", name) }", "SVGO-XSS"},
		{"readall", "func F(r *http.Request) { io.ReadAll(r.Body) }", "SVGO-UNBOUNDED"},
		{"os.Exit tampering", "func init() { os.Exit(0) }", "SVGO-TAMPER"},
	} {
		got := goRules(head + c.body + "\n")
		has := strings.Join(got, ",")
		switch {
		case c.want != "" && !strings.Contains(has, c.want):
			t.Errorf("%s: rules %v, want %s", c.name, got, c.want)
		case c.want == "" && len(got) > 0:
			t.Errorf("%s: rules %v, want none", c.name, got)
		}
	}
}

// TestSuppressionCommentsIgnored: the analysers judge the code, so a
// //nolint, #nosec or # nosec comment changes nothing.
func TestSuppressionCommentsIgnored(t *testing.T) {
	src := "package p\n\nimport \"crypto/tls\"\n\nvar c = &tls.Config{InsecureSkipVerify: true} //nolint:gosec // #nosec G402\n"
	if got := goRules(src); len(got) != 1 || got[0] != "SVGO-TLSVERIFY" {
		t.Errorf("Go rules with suppression comments: %v", got)
	}
	e := testEnv(t)
	py := "import yaml\n\n\ndef load(doc, conn, name):\n    conn.execute(\"SELECT * FROM t WHERE n = '%s'\" % name)  # nosec\n    return yaml.load(doc)  # nosec B506\n"
	plain := strings.ReplaceAll(strings.ReplaceAll(py, "  # nosec B506", ""), "  # nosec", "")
	with := e.v.Analyse(context.Background(), taskset.Python, Files{"m.py": []byte(py)})
	without := e.v.Analyse(context.Background(), taskset.Python, Files{"m.py": []byte(plain)})
	if with.Err != "" || len(with.Findings) == 0 || len(with.Findings) != len(without.Findings) {
		t.Errorf("python findings with # nosec: %v (err %q); without: %v", with.Findings, with.Err, without.Findings)
	}
	rules := map[string]bool{}
	for _, f := range with.Findings {
		rules[f.Key()] = true
	}
	if e.v.py.Bandit == "" {
		t.Log("bandit not installed (apt-get install python3-bandit): only svbench's Python rules checked")
	}
	if !rules["svbench-py/SVPY-SQL"] || (e.v.py.Bandit != "" && !rules["bandit/B506"]) {
		t.Errorf("expected SVPY-SQL and bandit B506 through # nosec, got %v", rules)
	}
}

func TestDelta(t *testing.T) {
	f := func(rule, cwe, sev string) Finding { return Finding{Tool: "x", RuleID: rule, CWE: cwe, Severity: sev} }
	orig := []Finding{f("SQL", "CWE-89", "high"), f("SQL", "CWE-89", "high"), f("RAND", "CWE-338", "medium")}
	fix := []Finding{f("SQL", "CWE-89", "high")} // one false positive stays on the fix
	cand := []Finding{f("SQL", "CWE-89", "high"), f("CMD", "CWE-78", "high")}
	d := Delta("CWE-89", orig, fix, cand)
	if strings.Join(d.Targets, ",") != "x/SQL" || len(d.Remaining) != 0 || strings.Join(d.NewHigh, ",") != "x/CMD" {
		t.Errorf("delta = %+v", d)
	}
	if d := Delta("CWE-330", orig, nil, orig); strings.Join(d.Remaining, ",") != "x/RAND" {
		t.Errorf("CWE family 330/338: %+v", d)
	}
}

func TestAPICheck(t *testing.T) {
	py := &taskset.Task{Language: taskset.Python, API: []string{"find(conn, name)", "search(conn, prefix, order_by='name', limit=20)", "Store(ttl=900, clock=time.monotonic)", "Store.get(self, key)"}}
	good := Files{"a.py": []byte("class Store:\n    def __init__(self, ttl: int = 900, clock=None):\n        pass\n\n    def get(self, key):\n        return key\n\n\ndef find(conn, name: str) -> list:\n    pass\n\n\ndef search(\n    conn,\n    prefix,\n    order_by=\"name\",  # a comment, with a comma\n    limit=20,\n):\n    pass\n")}
	if m := APICheck(py, good); len(m) != 0 {
		t.Errorf("python API reported missing: %v", m)
	}
	bad := Files{"a.py": []byte("def find(conn, name, extra):\n    pass\n\ndef search(conn, prefix):\n    pass\n")}
	if m := APICheck(py, bad); len(m) != 4 {
		t.Errorf("python API changes not all caught: %v", m)
	}
	g := &taskset.Task{Language: taskset.Go, API: []string{"func New(root string) *Server", "func (s *Server) Open(name string) ([]byte, error)", "Find(db, name)"}}
	gsrc := Files{"s.go": []byte("package s\n\ntype Server struct{}\n\nfunc New(dir string) *Server { return nil }\n\nfunc (srv *Server) Open(n string) ([]byte, error) { return nil, nil }\n\nfunc Find(a, b int) {}\n")}
	if m := APICheck(g, gsrc); len(m) != 0 {
		t.Errorf("go API reported missing: %v", m)
	}
	gbad := Files{"s.go": []byte("package s\n\ntype Server struct{}\n\nfunc New(dir string, x int) *Server { return nil }\n\nfunc (srv Other) Open(n string) ([]byte, error) { return nil, nil }\n")}
	if m := APICheck(g, gbad); len(m) != 3 {
		t.Errorf("go API changes not all caught: %v", m)
	}
}

// TestPythonBridgeTamperRule: library code that names the candidate end of
// the bridge or svbench's fixtures, or prints a verdict marker, costs the
// patch its no_new_high; ordinary code with similar words does not.
func TestPythonBridgeTamperRule(t *testing.T) {
	e := testEnv(t)
	cases := []struct {
		name, src string
		want      bool
	}{
		{"fixture patched", "import sys\nsys.modules['svbench_fixtures'].records = lambda n: []\n", true},
		{"fixture module named", "import svbench_fixtures\n", true},
		{"bridge entry named", "def f():\n    return serve_candidate\n", true},
		{"verdict marker", "print('SVBENCH-VERDICT {}')\n", true},
		{"ordinary frame and candidate words", "class Candidate:\n    frame = 1\n", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.v.Analyse(context.Background(), taskset.Python, Files{"m.py": []byte(c.src)})
			got := false
			for _, f := range r.Findings {
				if f.RuleID == "SVPY-TAMPER" {
					got = true
				}
			}
			if got != c.want {
				t.Errorf("SVPY-TAMPER fired %v, want %v: %v (err %q)", got, c.want, r.Findings, r.Err)
			}
		})
	}
}

// TestFloodingCandidateLeavesBatchIntact: the Python analysers see a task's
// original, its fix and the candidate in one process. A candidate whose
// findings overflow that process's output (so the batch has no answer; the
// bound is lowered here so 400 functions overflow it, not 12,000)
// gets an analysis error of its own; the original's and the fix's findings
// are those they get analysed alone, and no error is memoised for them.
func TestFloodingCandidateLeavesBatchIntact(t *testing.T) {
	e := testEnv(t)
	v, err := NewVerifier(context.Background(), e.v.sb, e.v.cache, e.v.limits.Wall)
	if err != nil {
		t.Fatal(err)
	}
	v.staticOutput = 64 << 10
	task := firstTestedTask(t, e, taskset.Python)
	ctx := context.Background()
	flood := Files{}
	for _, f := range task.Files {
		var b strings.Builder
		b.Write(task.Src[f])
		b.WriteString("\nimport pickle, subprocess\n")
		for i := range 400 {
			fmt.Fprintf(&b, "def f%d(x):\n    return eval(x) or pickle.loads(x) or subprocess.call(x, shell=True)\n", i)
		}
		flood[f] = []byte(b.String())
	}
	v.forget()
	got := v.analyseMany(ctx, task.Language, []Files{Files(task.Src), Files(task.Fixed()), flood})
	if got[2].Err == "" {
		t.Fatalf("flooding candidate analysed without error (%d findings): the probe no longer overflows the batch", len(got[2].Findings))
	}
	for i, files := range []Files{Files(task.Src), Files(task.Fixed())} {
		if got[i].Err != "" {
			t.Errorf("tree %d inherits the candidate's failure: %s", i, got[i].Err)
		}
		v.forget()
		if alone := v.Analyse(ctx, task.Language, files); !reflect.DeepEqual(alone, got[i]) {
			t.Errorf("tree %d: batched %+v, alone %+v", i, got[i], alone)
		}
	}
	if ev := v.Evaluate(ctx, task, refAnswer(task)); !Solved(ev) || ev.StaticErr != "" {
		t.Errorf("reference fix after the flood: solved %v, static error %q", Solved(ev), ev.StaticErr)
	}
}
