package netlogs

import (
	"context"
	"strings"
	"testing"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/dataset/integrity"
	"github.com/svbench/svbench/env"
)

// TestSplitsReproducibleAndDisjoint: train and dev are the same bytes
// every time they are made, the size and balance the README states, named
// by split, and share no id and no prompt (exact or normalised) with each
// other or with the evaluation set.
func TestSplitsReproducibleAndDisjoint(t *testing.T) {
	ctx := context.Background()
	e := New()
	first, err := generatedSplits()
	if err != nil {
		t.Fatal(err)
	}
	test, err := e.LoadSplit(ctx, env.SplitTest)
	if err != nil {
		t.Fatal(err)
	}
	mini, _ := e.Load(ctx, "")
	if test.Info.Revision != mini.Info.Revision || test.Info.ID != mini.Info.ID {
		t.Errorf("test split %s@%s is not Load(\"\") %s@%s", test.Info.ID, test.Info.Revision, mini.Info.ID, mini.Info.Revision)
	}
	seen := map[string]string{} // "id …", "text …", "near …" → the split first showing it
	claim := func(split string, ex env.Example) {
		q := lastUser(ex.Prompt)
		for _, k := range []string{"id " + ex.ID, "text " + q, "near " + integrity.Normalise(q)} {
			// Near duplicates within a split are other flows of one kind;
			// only a prompt another split shows is a leak.
			if other, ok := seen[k]; ok && other != split {
				t.Errorf("%s row %s repeats a %s row's %s", split, ex.ID, other, strings.SplitN(k, " ", 2)[0])
			} else if !ok {
				seen[k] = split
			}
		}
	}
	for _, ex := range test.Examples {
		claim(env.SplitTest, ex)
	}
	for _, tc := range []struct {
		split string
		rows  int
	}{
		{env.SplitTrain, 2000},
		{env.SplitDev, 300},
	} {
		t.Run(tc.split, func(t *testing.T) {
			spec := GeneratedSplits[tc.split]
			held := map[string]bool{}
			for _, ex := range test.Examples {
				q := lastUser(ex.Prompt)
				held[q], held[integrity.Normalise(q)] = true, true
			}
			if tc.split == env.SplitDev {
				train, err := generateSplit(env.SplitTrain, GeneratedSplits[env.SplitTrain], held)
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range train {
					held[r.Question], held[integrity.Normalise(r.Question)] = true, true
				}
			}
			again, err := generateSplit(tc.split, spec, held)
			if err != nil {
				t.Fatal(err)
			}
			if got := string(encodeRows(t, again)); got != string(first[tc.split]) {
				t.Errorf("%s regenerated differs from the cached split", tc.split)
			}
			ds, err := env.LoadDataset(ctx, e, "", tc.split)
			if err != nil {
				t.Fatal(err)
			}
			if want := "embedded:e1-" + tc.split; ds.Info.ID != want || ds.Info.Split != tc.split {
				t.Errorf("info %+v, want id %s split %s", ds.Info, want, tc.split)
			}
			if ds.Info.Revision != dataset.Revision(first[tc.split]) {
				t.Errorf("revision %s is not the content's %s", ds.Info.Revision, dataset.Revision(first[tc.split]))
			}
			labels := map[string]int{}
			for _, ex := range ds.Examples {
				if !strings.HasPrefix(ex.ID, tc.split+"-") || ex.Meta["split"] != tc.split {
					t.Errorf("row %s (meta split %v) is not named by its split", ex.ID, ex.Meta["split"])
				}
				labels[ex.Payload.(payload).answer]++
				claim(tc.split, ex)
			}
			if len(ds.Examples) != tc.rows || labels[LabelMalicious] != tc.rows/2 {
				t.Errorf("%d rows, labels %v; want %d balanced", len(ds.Examples), labels, tc.rows)
			}
			t.Logf("%s: %d rows, revision %s", tc.split, len(ds.Examples), ds.Info.Revision)
		})
	}
	if _, err := e.LoadSplit(ctx, "validation"); err == nil {
		t.Error("an unknown split loaded")
	}
}
