package netlogs

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/svbench/svbench/dataset"
)

func TestBuildSplits(t *testing.T) {
	splits, card, err := BuildSplits(GenerateOptions{N: 2000, Seed: 9, Difficulty: DifficultyMixed})
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	hashes := map[string]string{}
	for name, rows := range splits {
		total += len(rows)
		for _, r := range rows {
			row := r.(Row)
			if row.Meta["split"] != name {
				t.Fatalf("row in %s has meta.split %v", name, row.Meta["split"])
			}
			h := row.Meta["hash"].(string)
			if prev, ok := hashes[h]; ok {
				t.Fatalf("hash %s in both %s and %s", h, prev, name)
			}
			hashes[h] = name
		}
	}
	if total != 2000 {
		t.Fatalf("rows %d, want 2000", total)
	}
	for i, name := range dataset.SplitNames {
		if got := float64(len(splits[name])) / float64(total); math.Abs(got-SplitRatios[i]) > 0.01 {
			t.Errorf("%s holds %.3f of rows, want %.2f", name, got, SplitRatios[i])
		}
	}
	dir := t.TempDir()
	if err := dataset.WriteSplits(dir, splits, card); err != nil {
		t.Fatal(err)
	}
	// The written test split loads through the environment.
	ds, err := New().Load(t.Context(), filepath.Join(dir, "test.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if ds.Info.Rows != len(splits["test"]) {
		t.Errorf("loaded %d rows, wrote %d", ds.Info.Rows, len(splits["test"]))
	}
	f, err := os.Open(filepath.Join(dir, "card.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var c dataset.Card
	if err := json.NewDecoder(bufio.NewReader(f)).Decode(&c); err != nil {
		t.Fatal(err)
	}
	if c.Generator == nil || c.Generator.Version != GeneratorVersion || c.Counts.Labels[LabelMalicious] != 1000 {
		t.Errorf("card: %+v", c)
	}
}
