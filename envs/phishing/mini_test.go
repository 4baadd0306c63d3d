package phishing

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"testing"

	"github.com/svbench/svbench/env"
)

var update = flag.Bool("update", false, "rewrite data/mini.jsonl from the generator")

// Seed and size of the embedded public mini set.
const (
	miniSeed = 4
	miniRows = 180
)

// TestMiniSetReproducible regenerates the embedded mini set and compares it
// byte for byte; -update rewrites it.
func TestMiniSetReproducible(t *testing.T) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	rows, err := GenerateSplit(env.SplitTest, miniSeed, miniRows)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	if *update {
		if err := os.WriteFile("data/mini.jsonl", buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if !bytes.Equal(buf.Bytes(), miniSet) {
		t.Fatal("data/mini.jsonl differs from the generator's output; run `go test ./envs/phishing -run TestMiniSetReproducible -update` and review the diff")
	}
}
