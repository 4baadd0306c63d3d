package codevuln

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/base/sharedtest"
)

// Values computed once with CPython 3.11's difflib and checked by hand
// against the algorithm (they also re-run against the machine's python3 in
// TestSequenceRatioMatchesPython when it is present).
func TestSequenceRatioKnownValues(t *testing.T) {
	long := "x" + strings.Repeat("ab", 110)
	long2 := "y" + strings.Repeat("ab", 110)
	for _, c := range []struct {
		a, b string
		want float64
	}{
		{"", "", 1},
		{"abc", "", 0},
		{"abcd", "bcde", 0.75},
		{"private Thread currentThread;", "private volatile Thread currentThread;", 0.8656716417910447},
		// autojunk: b has 221 elements, so "a" and "b" (110 > 3
		// occurrences each) are popular and cannot seed a match, and the
		// first elements differ, so nothing extends: 0, where difflib
		// without autojunk gives 0.9955.
		{long, long2, 0},
		// Identical strings still match fully: the extension loop runs
		// from (0, 0) through popular elements.
		{long, long, 1},
		// Below 200 elements in b nothing is popular.
		{long[:199], long2[:199], 0.9949748743718593},
	} {
		if got := SequenceRatio(c.a, c.b); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("SequenceRatio(%.20q…, %.20q…) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func python3(t *testing.T) string {
	p, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH: cannot compare with difflib")
	}
	return p
}

// TestSequenceRatioMatchesPython compares the port with CPython's difflib on
// random strings (including long, repetitive ones where autojunk matters)
// and the unified-diff output on random line edits.
func TestSequenceRatioMatchesPython(t *testing.T) {
	py := python3(t)
	r := rand.New(rand.NewPCG(7, 11))
	gen := func(n int, alpha string) string {
		var b strings.Builder
		for range n {
			b.WriteByte(alpha[r.IntN(len(alpha))])
		}
		return b.String()
	}
	type pair struct{ A, B string }
	var pairs []pair
	for i := range 80 {
		n := []int{5, 50, 199, 200, 201, 400, 900}[i%7]
		alpha := []string{"ab", "abc \n", "abcdefghij", "ab\n+-"}[i%4]
		a := gen(n, alpha)
		b := []rune(a)
		for range r.IntN(20) + 1 {
			if len(b) == 0 {
				break
			}
			j := r.IntN(len(b))
			b[j] = rune(alpha[r.IntN(len(alpha))])
		}
		pairs = append(pairs, pair{a, string(b) + gen(r.IntN(30), alpha)})
	}
	in, _ := json.Marshal(pairs)
	script := `import difflib, json, sys
pairs = json.load(sys.stdin)
out = []
for p in pairs:
    r = difflib.SequenceMatcher(None, p["A"], p["B"]).ratio()
    d = "\n".join(difflib.unified_diff(p["A"].splitlines(), p["B"].splitlines(), fromfile="f.py", tofile="f.py", lineterm=""))
    out.append([r, d])
json.dump(out, sys.stdout)`
	cmd := exec.CommandContext(context.Background(), py, "-I", "-c", script)
	cmd.Stdin = strings.NewReader(string(in))
	outb, err := cmd.Output()
	if err != nil {
		t.Skipf("python3 difflib: %v", err)
	}
	var want [][2]any
	if err := json.Unmarshal(outb, &want); err != nil {
		t.Fatal(err)
	}
	for i, p := range pairs {
		if got := SequenceRatio(p.A, p.B); math.Abs(got-want[i][0].(float64)) > 1e-12 {
			t.Errorf("pair %d (len %d/%d): ratio %v, difflib %v", i, len(p.A), len(p.B), got, want[i][0])
		}
		if got := UnifiedDiff("f.py", p.A, p.B); got != want[i][1].(string) {
			t.Errorf("pair %d: unified diff differs from difflib:\n%s\n---- want\n%s", i, got, want[i][1])
		}
	}
}

// refRow is the reference's built-in E3 row as its fixtures record it.
type refRow struct {
	Answer struct {
		ID                  string   `json:"id"`
		OriginalCode        string   `json:"original_code"`
		PatchedCode         string   `json:"patched_code"`
		ExpectedDiff        string   `json:"expected_diff"`
		ExplanationKeywords []string `json:"explanation_keywords"`
	} `json:"answer"`
}

func loadRefRows(t *testing.T) []refRow {
	dir := sharedtest.Dir(t)
	b, err := os.ReadFile(filepath.Join(dir, "reference-data", "e3_e6_reference_fixtures.json"))
	if err != nil {
		t.Skip(err)
	}
	var f struct {
		E3 []refRow `json:"e3_builtin"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.E3) != 2 {
		t.Fatalf("fixtures hold %d E3 rows, want 2", len(f.E3))
	}
	return f.E3
}

// TestReferenceFormulaOnReferenceTasks reproduces the reference's numbers on
// its two built-in tasks from its described behaviour: the expected diff is
// rebuilt with the difflib port, and the smoke expectations hold (the SQL
// row's good answer scores 1.0, no-op and deletion score ≈ 0; the YAML row's
// own reference patch fails its tests on CPython 3.11, a verified bug, so
// its good answer is capped by the tests term).
func TestReferenceFormulaOnReferenceTasks(t *testing.T) {
	rows := loadRefRows(t)
	for _, r := range rows {
		a := r.Answer
		name := map[string]string{"sql_injection_parameterization": "query.py", "yaml_safe_load": "config.py"}[a.ID]
		if got := UnifiedDiff(name, a.OriginalCode, a.PatchedCode); got != a.ExpectedDiff {
			t.Errorf("%s: expected_diff not reproduced:\n%s\n---- fixture\n%s", a.ID, got, a.ExpectedDiff)
		}
	}
	sql := rows[0].Answer
	good := RefInputs{ParsedJSON: true, Diff: sql.ExpectedDiff, ExpectedDiff: sql.ExpectedDiff, TestsPassed: true,
		Claimed: true, HasClaimed: true, HasDiff: true, HasExplanation: true,
		Explanation: "Uses parameterized query parameters.", Keywords: sql.ExplanationKeywords}
	if got, _ := RefPatchAndTest(good); got != 1 || RefFormat(good) != 1 {
		t.Errorf("SQL good answer: patch_and_test %v format %v, want 1 and 1", got, RefFormat(good))
	}
	noop := RefInputs{ParsedJSON: true, ExpectedDiff: sql.ExpectedDiff, Claimed: false, HasClaimed: true, HasDiff: true, HasExplanation: true}
	if got, _ := RefPatchAndTest(noop); got > 1e-9 {
		t.Errorf("no-op: %v, want 0 (0.1 consistency − 0.1 failure penalty)", got)
	}
	// Deletion: a diff removing the function, tests fail, claimed true.
	del := "--- query.py\n+++ query.py\n@@ -1,4 +0,0 @@\n" + prefixLines(sql.OriginalCode, "-")
	in := RefInputs{ParsedJSON: true, Diff: del, ExpectedDiff: sql.ExpectedDiff, Claimed: true, HasClaimed: true}
	want := math.Max(0, 0.2*SequenceRatio(strings.TrimSpace(sql.ExpectedDiff), strings.TrimSpace(del))-0.1)
	if got, _ := RefPatchAndTest(in); math.Abs(got-want) > 1e-12 || got >= 0.5 {
		t.Errorf("deletion: %v, want %v (< .5)", got, want)
	}
	// Truthiness: the string "false" counts as a claim of success.
	str := good
	str.Claimed = "false"
	if got, parts := RefPatchAndTest(str); parts["consistency"] != 1 || got != 1 || RefFormat(str) != 0.5 {
		t.Errorf(`claimed "false": %v %v format %v`, got, parts, RefFormat(str))
	}
	// The YAML row's reference patch fails its own tests on 3.11.
	y := rows[1].Answer
	yin := RefInputs{ParsedJSON: true, Diff: y.ExpectedDiff, ExpectedDiff: y.ExpectedDiff, TestsPassed: false, Claimed: true, HasClaimed: true,
		Explanation: "Use yaml safe_load instead of the unsafe loader.", Keywords: y.ExplanationKeywords}
	if got, _ := RefPatchAndTest(yin); math.Abs(got-0.2) > 1e-12 {
		t.Errorf("YAML reference patch: %v, want 0.2 (.2 sim + 0 consistency + .1 expl − .1)", got)
	}
}

func prefixLines(s, p string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		b.WriteString(p + l + "\n")
	}
	return b.String()
}

// TestReferenceRubricOnSvbenchTasks checks the reference rubric end to end
// on one embedded task: the reference fix in the reference's JSON schema
// gets similarity 1 and full marks; a non-JSON answer gets 0.
func TestReferenceRubricOnSvbenchTasks(t *testing.T) {
	e := testEnv(t)
	task := e.task("py-089-user-lookup")
	if task == nil {
		t.Skip("task py-089-user-lookup not in the corpus")
	}
	ex := exampleFor(t, e, task.ID)
	diff := expectedDiff(&Evaluation{Task: task})
	good, _ := json.Marshal(map[string]any{"diff": diff, "tests_passed": true, "explanation": "Parameterised queries."})
	s := score(t, e, ex, string(good), RubricReference)
	if math.Abs(s.Total-1.2) > 1e-9 || s.Parsed["ref_similarity"] != 1.0 {
		t.Errorf("reference fix under the reference rubric: %v %v", s.Total, s.Parsed)
	}
	fenced := "```diff\n" + diff + "\n```"
	if s := score(t, e, ex, fenced, RubricReference); s.Total != 0 {
		t.Errorf("non-JSON answer under the reference rubric: %v, want 0", s.Total)
	}
}
