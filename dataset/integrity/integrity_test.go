package integrity

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, dir, name string, lines ...string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestNormalise(t *testing.T) {
	cases := map[string]string{
		"Device  X observed tcp 6662→62336": "device x observed tcp 0→0",
		"  a\t\nB 12.5 ":                    "a b 0.0",
		"":                                  "",
	}
	for in, want := range cases {
		if got := Normalise(in); got != want {
			t.Errorf("Normalise(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestValidateCleanSplits(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "train.jsonl", `{"question":"alpha flow","answer":"Malicious"}`, `{"question":"beta flow","answer":"Benign"}`)
	write(t, dir, "test.jsonl", `{"question":"gamma flow","answer":"Benign"}`)
	files, err := Expand(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Validate(files, GenericParse, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || len(rep.Files) != 2 || rep.Files[0].Split != "test" || rep.Files[1].Labels[`"Malicious"`] != 1 {
		t.Errorf("report %+v", rep)
	}
}

func TestValidateFindsProblems(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "train.jsonl",
		`{"question":"port 22 scan","answer":"Malicious"}`,
		`{"question":"port 22 scan","answer":"Benign"}`, // duplicate with conflicting label
		`{"question":"dns lookup 1","answer":"Benign"}`,
		`{"question":"DNS  lookup 2","answer":"Benign"}`, // near duplicate (warning)
		`[1,2]`, // not an object
	)
	write(t, dir, "test.jsonl",
		`{"question":"port 22 scan","answer":"Malicious"}`, // exact leak
		`{"question":"dns lookup 77","answer":"Benign"}`,   // near leak
		`{"question":"something else","answer":"Benign"}`,
	)
	files, _ := Expand(dir)
	rep, err := Validate(files, GenericParse, Options{MaxNearLeak: 0.7})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() {
		t.Fatal("problems not found")
	}
	kinds := map[string]int{}
	for _, p := range rep.Problems {
		kinds[p.Kind]++
	}
	for _, want := range []string{"duplicate", "conflicting-label", "schema", "leakage"} {
		if kinds[want] == 0 {
			t.Errorf("no %s problem in %v", want, rep.Problems)
		}
	}
	if kinds["near-leakage"] != 0 {
		t.Errorf("near leakage of 2/3 reported as a problem under a 0.7 threshold? %v", rep.Problems)
	}
	var lk Leak
	for _, l := range rep.Leaks {
		if l.Into == "test" && l.From == "train" {
			lk = l
		}
	}
	if lk.Exact != 1 || lk.Near != 2 {
		t.Errorf("leak %+v, want 1 exact and 2 near", lk)
	}
	// Tighter threshold: near leakage becomes a problem.
	rep, _ = Validate(files, GenericParse, Options{MaxNearLeak: 0.1})
	found := false
	for _, p := range rep.Problems {
		found = found || p.Kind == "near-leakage"
	}
	if !found {
		t.Error("near leakage over the threshold not a problem")
	}
	for _, p := range rep.Problems {
		if p.Kind == "schema" && (p.Line != 5 || !strings.HasSuffix(p.File, "train.jsonl")) {
			t.Errorf("schema problem not located: %+v", p)
		}
	}
}

func TestOverlap(t *testing.T) {
	dir := t.TempDir()
	a := write(t, dir, "a.jsonl", `{"question":"one 1","answer":"Benign"}`, `{"question":"two","answer":"Malicious"}`, `{"question":"three","answer":"Benign"}`)
	b := write(t, dir, "b.jsonl", `{"question":"two","answer":"Malicious"}`, `{"question":"ONE 99","answer":"Benign"}`)
	r, err := Overlap([]string{a}, []string{b}, GenericParse)
	if err != nil {
		t.Fatal(err)
	}
	if r.RowsA != 3 || r.RowsB != 2 || r.ExactInA != 1 || r.NearInA != 2 || r.ExactInB != 1 || r.NearInB != 2 || r.SameLabelB != 1 {
		t.Errorf("overlap %+v", r)
	}
}

func TestLabelClass(t *testing.T) {
	long := `{"fixture_path":"deploy/aws_rds/main.tf","fixture_type":"tf","mutations":["rds-no-backups","rds-public"],"oracle":[{"id":"trivy/AVD-AWS-0077","severity":"med"},{"id":"trivy/AVD-AWS-0180","severity":"high"}]}`
	cases := map[string]string{
		`"Benign"`: `"Benign"`,
		long:       "{fixture_type: tf, mutations: 2, oracle: 2}",
		`[` + strings.Repeat(`"x",`, 40) + `"y"]`: "[41 items]",
		strings.Repeat("z", 100):                  strings.Repeat("z", MaxLabelWidth-12) + "…",
	}
	for in, want := range cases {
		if got := LabelClass(in); got != want {
			t.Errorf("LabelClass(%.30q…) = %q, want %q", in, got, want)
		}
	}
	if a := AbbrevLabel(long); !strings.HasPrefix(a, "{fixture_type: tf, mutations: 2, oracle: 2} (sha256 ") || len(a) > 90 {
		t.Errorf("AbbrevLabel = %q", a)
	}
	if AbbrevLabel(`"Benign"`) != `"Benign"` {
		t.Error("short labels change")
	}
}

// TestFindingsAreReadable: long labels are abbreviated in findings and line
// lists are not printed as Go slices.
func TestFindingsAreReadable(t *testing.T) {
	dir := t.TempDir()
	big := func(n int) string {
		return `{"oracle":[` + strings.TrimSuffix(strings.Repeat(`{"id":"x"},`, n), ",") + `]}`
	}
	write(t, dir, "train.jsonl",
		`{"question":"q1","answer":`+big(300)+`}`,
		`{"question":"q1","answer":`+big(301)+`}`,
		`{"question":"q2","answer":"a"}`)
	write(t, dir, "test.jsonl", `{"question":"q1","answer":"a"}`, `{"question":"q2","answer":"a"}`)
	files, _ := Expand(dir)
	rep, err := Validate(files, GenericParse, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var conflict, leak string
	for _, p := range rep.Problems {
		switch p.Kind {
		case "conflicting-label":
			conflict = p.Msg
		case "leakage":
			leak = p.Msg
		}
	}
	if len(conflict) > 200 || !strings.Contains(conflict, "{oracle: 301} (sha256 ") {
		t.Errorf("conflicting-label message: %.300s", conflict)
	}
	if !strings.Contains(leak, "(lines 1, 2)") {
		t.Errorf("leakage message: %s", leak)
	}
}
