package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// TestDataBuildE1 runs E1's build pipeline, declared in its registration
// (envs/netlogs/data.go), through the command tree.
func TestDataBuildE1(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "e1")
	if code, _, stderr := runCLI(t, "data", "build", "e1", "--n", "400", "--seed", "3", "--difficulty", "hard", "--out", dir); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"train.jsonl", "dev.jsonl", "test.jsonl", "card.json", "README.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	if code, _, stderr := runCLI(t, "data", "build", "network-logs", "--difficulty", "brutal", "--out", dir); code != ExitUsage {
		t.Errorf("bad difficulty: exit %d, want %d (%s)", code, ExitUsage, stderr)
	}
}
