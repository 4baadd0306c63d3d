package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDataBuildE1(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "e1")
	cmd := newDataBuildE1Cmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--n", "400", "--seed", "3", "--difficulty", "hard", "--out", dir})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"train.jsonl", "dev.jsonl", "test.jsonl", "card.json", "README.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s: %v", f, err)
		}
	}
	bad := newDataBuildE1Cmd()
	bad.SetArgs([]string{"--difficulty", "brutal", "--out", dir})
	var ue usageError
	if err := bad.ExecuteContext(context.Background()); !errors.As(err, &ue) {
		t.Errorf("bad difficulty: want a usage error, got %v", err)
	}
}
