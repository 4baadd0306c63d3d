package netlogs

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite data/mini.jsonl from the generator")

// EncodeRows writes rows as JSONL.
func encodeRows(t testing.TB, rows []Row) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

// TestMiniSetReproducible regenerates the embedded mini set and requires it
// to match byte for byte, so the shipped data is provably the generator's
// output. Run with -update (or go generate) after changing the generator.
func TestMiniSetReproducible(t *testing.T) {
	rows, err := Generate(MiniOptions)
	if err != nil {
		t.Fatal(err)
	}
	want := encodeRows(t, rows)
	path := filepath.Join("data", "mini.jsonl")
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		miniSet = want
	}
	if !bytes.Equal(miniSet, want) {
		t.Fatalf("%s differs from Generate(%+v); run `go generate ./envs/netlogs` (go test -run TestMiniSetReproducible -update) and commit the result", path, MiniOptions)
	}
	ds, err := New().Load(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	levels := map[string]int{}
	for _, ex := range ds.Examples {
		counts[string(ex.Answer)]++
		levels[ex.Meta["difficulty"].(string)]++
		if ex.Meta["source"] != "svbench-synth" || ex.Meta["generator_version"] != GeneratorVersion {
			t.Errorf("%s: provenance meta missing: %v", ex.ID, ex.Meta)
		}
	}
	if ds.Info.Rows != 150 || counts[`"Malicious"`] != 75 || counts[`"Benign"`] != 75 {
		t.Errorf("mini set: %d rows, labels %v; want 150 balanced", ds.Info.Rows, counts)
	}
	if len(levels) != 3 {
		t.Errorf("mini set should mix all difficulty levels, got %v", levels)
	}
}
