package ingest_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/envs/netlogs"
	"github.com/svbench/svbench/ingest"
)

// TestLoadGoesOnPastBadTables: in a directory of completions tables, a
// table that cannot be read (corrupt, over the decoded-bytes limit) is one
// bad row naming it, and the other tables are re-scored; given alone, the
// same table is the error.
func TestLoadGoesOnPastBadTables(t *testing.T) {
	e, scored := scoreE1(t, netlogs.RubricDefault, 2)
	cols := []string{"step", "prompt", "completion", "example_id"}
	row := func(i int, completion string) map[string]any {
		return map[string]any{"step": int64(1), "prompt": "user\n" + scored[i].ex.Prompt[0].Content, "completion": completion, "example_id": scored[i].ex.ID}
	}
	dir := t.TempDir()
	table := func(n int) string { return filepath.Join(dir, "completions_0000"+string(rune('0'+n))+".parquet") }
	writeTRLTable(t, table(1), cols, []map[string]any{row(0, scored[0].output), row(1, scored[1].output)})
	// A table whose footer says it is longer than the file.
	corrupt := []byte("PAR1\x00\x00\x00\x00\xf0\xff\xff\xffPAR1")
	if err := os.WriteFile(table(2), corrupt, 0o644); err != nil {
		t.Fatal(err)
	}
	writeTRLTable(t, table(3), cols, []map[string]any{row(0, strings.Repeat("x", 200<<10))})
	writeTRLTable(t, table(4), cols, []map[string]any{row(1, scored[1].output)})
	// A table the parquet reader panics on.
	if err := os.WriteFile(table(5), ingest.CorpusBytes(t, "reader-index-out-of-range"), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := ingest.Options{MaxTableBytes: 64 << 10}

	run, err := ingest.Load(context.Background(), dir, e, opts)
	if err != nil {
		t.Fatalf("one bad table ended the load: %v", err)
	}
	want := []struct{ errHas []string }{
		{}, {},
		{[]string{table(2), "footer claims"}},
		{[]string{table(3), "--max-table-mib"}},
		{},
		{[]string{table(5), "the parquet reader failed"}},
	}
	if len(run.Rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(run.Rows), len(want))
	}
	for i, w := range want {
		r := run.Rows[i]
		if run.Lines[i] != i+1 {
			t.Errorf("row %d: line %d", i, run.Lines[i])
		}
		if len(w.errHas) == 0 {
			if r.ScoreError != "" || r.ExampleID == "" {
				t.Errorf("row %d: error %q, example %q", i, r.ScoreError, r.ExampleID)
			}
			continue
		}
		for _, s := range w.errHas {
			if !strings.Contains(r.ScoreError, s) {
				t.Errorf("row %d: error %q does not say %q", i, r.ScoreError, s)
			}
		}
	}
	for _, n := range []int{2, 3, 5} {
		if _, err := ingest.Load(context.Background(), table(n), e, opts); err == nil || !strings.Contains(err.Error(), table(n)) {
			t.Errorf("table %d alone: err = %v, want one naming it", n, err)
		}
	}
}

// TestLoadKeep: Keep trims each re-scored row, and Load reads the input
// as it goes (the rows are re-scored the same whether or not the rubric
// is chosen from them first).
func TestLoadKeep(t *testing.T) {
	e, scored := scoreE1(t, netlogs.RubricDefault, 3)
	var rows []map[string]any
	for _, s := range scored {
		rows = append(rows, map[string]any{"step": int64(1), "prompt": "user\n" + s.ex.Prompt[0].Content, "completion": s.output, "example_id": s.ex.ID})
	}
	path := filepath.Join(t.TempDir(), "completions_00001.parquet")
	writeTRLTable(t, path, []string{"step", "prompt", "completion", "example_id"}, rows)
	// "" chooses the rubric from the rows first (reference: TRL's rows
	// carry no mark of svbench's); a rubric given reads them once.
	for rubric, want := range map[string]string{"": netlogs.RubricReference, netlogs.RubricDefault: netlogs.RubricDefault} {
		kept := 0
		run, err := ingest.Load(context.Background(), path, e, ingest.Options{Rubric: rubric, Keep: func(r *artifact.Result) { r.Prompt = nil; kept++ }})
		if err != nil {
			t.Fatal(err)
		}
		if kept != 3 || len(run.Rows) != 3 || run.Rubric != want {
			t.Fatalf("rubric %q: kept %d of %d rows, rubric %s, want %s", rubric, kept, len(run.Rows), run.Rubric, want)
		}
		for i, r := range run.Rows {
			if r.Prompt != nil || r.ScoreError != "" || r.FinalText != scored[i].output {
				t.Fatalf("rubric %q row %d: prompt %v error %q final %q", rubric, i, r.Prompt, r.ScoreError, r.FinalText)
			}
		}
	}
}
