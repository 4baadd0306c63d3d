package configaudit

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"testing"

	"github.com/svbench/svbench/env"
)

// TestSplitsAreReproducible regenerates the train and dev splits from
// splitOptions and compares them with the committed files (-update
// rewrites them). Skipped under -race and -short: the draw scans about
// 3,000 rows with trivy and kube-linter, minutes under the race detector;
// the conformance suite checks the committed splits' leakage either way.
func TestSplitsAreReproducible(t *testing.T) {
	if (raceEnabled || testing.Short()) && !*update {
		t.Skip("regenerating the splits scans ~3,000 rows; run without -race and -short (or with -update)")
	}
	e, _ := testEnv(t)
	var mini []Row
	for _, l := range bytes.Split(bytes.TrimSpace(miniJSONL), []byte("\n")) {
		var r Row
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatal(err)
		}
		mini = append(mini, r)
	}
	train, err := e.splitRows(t.Context(), env.SplitTrain, mini)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := e.splitRows(t.Context(), env.SplitDev, append(mini, train...))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("train %d rows, dev %d rows", len(train), len(dev))
	for _, s := range []struct {
		file string
		rows []Row
		have []byte
	}{{"data/train.jsonl.gz", train, trainJSONLGz}, {"data/dev.jsonl.gz", dev, devJSONLGz}} {
		got := encodeRows(t, s.rows)
		if *update {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			zw.Write(got)
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(s.file, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		zr, err := gzip.NewReader(bytes.NewReader(s.have))
		if err != nil {
			t.Fatal(err)
		}
		have, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(have, got) {
			t.Errorf("%s differs from the generator's output; run `go test ./envs/configaudit -run TestSplitsAreReproducible -update` and commit it", s.file)
		}
	}
}
