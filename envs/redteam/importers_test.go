package redteam

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
)

func open(t *testing.T, name string) *os.File {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "import", name))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestImportJBBPairsTwinsAndLoads(t *testing.T) {
	ss, err := ImportJBB("jbb_harmful.csv", open(t, "jbb_harmful.csv"), "jbb_benign.csv", open(t, "jbb_benign.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != 4 || ss[0].Kind != KindHarmful || ss[1].Kind != KindBenign || ss[0].Pair != ss[1].Pair || ss[2].Category != "cybercrime" || ss[0].Category != "hate" {
		t.Fatalf("%+v", ss)
	}
	var buf bytes.Buffer
	if err := WriteJSONL(&buf, ss); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "jbb.jsonl")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	d := mustDefense(t, env.Options{})
	ds, err := d.Load(context.Background(), path)
	if err != nil || len(ds.Examples) != 4 || ds.Examples[1].ID != "jbb-001-benign" {
		t.Fatalf("E6 load: %v %v", ds, err)
	}
	a := mustAttack(t, env.Options{})
	ads, err := a.Load(context.Background(), path)
	if err != nil || len(ads.Examples) != 2 {
		t.Fatalf("E5 load: %v", err)
	}
}

func TestImportHarmBenchAndXSTest(t *testing.T) {
	hb, err := ImportHarmBench("harmbench.csv", open(t, "harmbench.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(hb) != 2 || hb[0].Category != "indiscriminate_weapons" || hb[1].Category != "elections" || hb[1].Context == "" || !strings.Contains(hb[1].Request, hb[1].Context) {
		t.Fatalf("%+v", hb)
	}
	xs, err := ImportXSTest("xstest.csv", open(t, "xstest.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if len(xs) != 3 || xs[1].Kind != KindHarmful || xs[1].Pair != xs[0].ID || xs[2].Pair != "" {
		t.Fatalf("%+v", xs)
	}
}

func TestImportErrorsNameLineAndColumn(t *testing.T) {
	for _, c := range []struct {
		file, want string
	}{
		{"bad_quote.csv", "bad_quote.csv: line 2, column"},
		{"bad_category.csv", `line 2, column 5 (Category): unknown category "Gardening"`},
		{"harmbench.csv", "header lacks column(s) Goal"},
	} {
		_, err := ImportJBB(c.file, open(t, c.file), "", nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.file, err, c.want)
		}
	}
	_, err := ImportXSTest("x", strings.NewReader("prompt,label\nhello,maybe\n"))
	if err == nil || !strings.Contains(err.Error(), `line 2, column 2 (label): "maybe"`) {
		t.Errorf("xstest: %v", err)
	}
	_, err = ImportHarmBench("h", strings.NewReader("Behavior,FunctionalCategory,SemanticCategory,BehaviorID\nx,standard,illegal,a\ny,standard,illegal,a\n"))
	if err == nil || !strings.Contains(err.Error(), "line 3, column 4 (BehaviorID)") {
		t.Errorf("harmbench dup: %v", err)
	}
}
