package cli

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a")
	if err := os.WriteFile(a, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(a, link); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "b")
	if err := os.WriteFile(other, []byte("x"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		x, y string
		want bool
	}{{a, a, true}, {a, link, true}, {a, other, false}, {a, filepath.Join(dir, "missing"), false}} {
		if got := sameFile(c.x, c.y); got != c.want {
			t.Errorf("sameFile(%s, %s) = %v, want %v", c.x, c.y, got, c.want)
		}
	}
	// In-process (a test binary, not named svbench): the documented name.
	if got := invokedAs(); got != "svbench" {
		t.Errorf("invokedAs() = %q in a test binary, want svbench", got)
	}
}
