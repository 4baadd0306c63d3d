package compare

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
)

// TestLoadKeepsCompleteUnterminatedTail: compare reads a run as report
// does (issue #21: a last line without its newline gave 6 rows in report
// and 5 in compare).
func TestLoadKeepsCompleteUnterminatedTail(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i := range 6 {
		b, _ := json.Marshal(artifact.Result{Index: i, ExampleID: "ex", FinalText: "x", Reward: 1})
		lines = append(lines, string(b))
	}
	if err := os.WriteFile(filepath.Join(dir, artifact.ResultsFile), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := artifact.LoadResults(filepath.Join(dir, artifact.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Rows) != 6 || len(rows) != 6 {
		t.Errorf("compare %d rows, report %d; want 6 and 6", len(run.Rows), len(rows))
	}
}
