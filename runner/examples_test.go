package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/svbench/svbench/envs/netlogs"
)

func writeRows(t *testing.T, rows []netlogs.Row, extra string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "rows.jsonl")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for _, r := range rows {
		b, _ := json.Marshal(r)
		w.Write(b)
		w.WriteByte('\n')
	}
	w.WriteString(extra)
	w.Flush()
	f.Close()
	return p
}

// The lazy path must see exactly the examples the environment's own loader
// does, or a large dataset would be evaluated differently from a small one.
func TestLazyDatasetMatchesEagerLoad(t *testing.T) {
	rows, err := netlogs.Generate(netlogs.GenerateOptions{N: 300, Seed: 5, Difficulty: "mixed"})
	if err != nil {
		t.Fatal(err)
	}
	rows[3].ID, rows[3].Meta = "", nil // falls back to the line number
	path := writeRows(t, rows, "\n")
	e := netlogs.New()
	ctx := context.Background()
	eager, _, err := OpenDataset(ctx, e, path, "", false)
	if err != nil {
		t.Fatal(err)
	}
	lazy, closeLazy, err := OpenDataset(ctx, e, path, "", true)
	if err != nil {
		t.Fatal(err)
	}
	defer closeLazy()
	if eager.Info() != lazy.Info() || eager.Len() != lazy.Len() {
		t.Fatalf("info %+v vs %+v", eager.Info(), lazy.Info())
	}
	for i := range eager.Len() {
		a, _ := eager.Example(i)
		b, err := lazy.Example(i)
		if err != nil {
			t.Fatal(err)
		}
		if a.ID != b.ID || !reflect.DeepEqual(a.Prompt, b.Prompt) || string(a.Answer) != string(b.Answer) || !reflect.DeepEqual(a.Meta, b.Meta) {
			t.Fatalf("row %d differs:\n eager %+v\n lazy  %+v", i, a, b)
		}
	}
}

func TestLazyDatasetNamesBadLine(t *testing.T) {
	rows, _ := netlogs.Generate(netlogs.GenerateOptions{N: 5, Seed: 1, Difficulty: "easy"})
	for _, tc := range []struct{ extra, want string }{
		{`{"question": "q", "answer": "Maybe"}` + "\n", `line 6: field "answer"`},
		{`{"answer": "Benign"}` + "\n", "line 6: row has no prompt"},
		{"not json\n", "line 6"},
	} {
		path := writeRows(t, rows, tc.extra)
		_, _, err := OpenDataset(context.Background(), netlogs.New(), path, "", true)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%q: err = %v, want file and %q", tc.extra, err, tc.want)
		}
	}
}
