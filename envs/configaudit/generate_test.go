package configaudit

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"
)

var update = flag.Bool("update", false, "rewrite data/mini.jsonl from the generator")

// Mini set parameters: changing them (or the corpus, or the catalogue)
// changes the embedded set, which this test then asks to regenerate.
var miniOptions = GenOptions{N: 160, Seed: 20260601}

func encodeRows(t testing.TB, rows []Row) []byte {
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

func TestMiniSetIsReproducible(t *testing.T) {
	rows, err := Generate(miniOptions)
	if err != nil {
		t.Fatal(err)
	}
	got := encodeRows(t, rows)
	if *update {
		if err := os.WriteFile("data/mini.jsonl", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, miniJSONL) {
		t.Fatal("data/mini.jsonl differs from the generator's output; run `go test ./envs/configaudit -run TestMiniSetIsReproducible -update` and commit the file")
	}
	again, _ := Generate(miniOptions)
	if !bytes.Equal(encodeRows(t, again), got) {
		t.Fatal("Generate is not deterministic")
	}
}

func TestMiniSetComposition(t *testing.T) {
	rows, err := Generate(miniOptions)
	if err != nil {
		t.Fatal(err)
	}
	var tf, clean int
	ids := map[string]bool{}
	for _, r := range rows {
		if ids[r.ID] {
			t.Errorf("duplicate id %s", r.ID)
		}
		ids[r.ID] = true
		if r.FixtureType == FixtureTF {
			tf++
		}
		if len(r.Labels.Mutations) == 0 {
			clean++
			if len(r.Labels.Expected) != 0 {
				t.Errorf("%s: clean row with expected findings", r.ID)
			}
		} else if len(r.Labels.Expected) == 0 {
			t.Errorf("%s: mutated row without expected findings", r.ID)
		}
	}
	if len(rows) < 150 {
		t.Errorf("%d rows, want >= 150", len(rows))
	}
	if float64(tf) < 0.4*float64(len(rows)) {
		t.Errorf("%d Terraform rows of %d, want >= 40%%", tf, len(rows))
	}
	if clean == 0 {
		t.Error("no clean rows")
	}
	t.Logf("rows=%d terraform=%d clean=%d", len(rows), tf, clean)
}
