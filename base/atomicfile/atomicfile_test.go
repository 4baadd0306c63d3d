package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteModes(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name     string
		existing os.FileMode // 0 = no file before
		want     os.FileMode
	}{
		{"new file is 0644", 0, 0o644},
		{"rewrite keeps 0640", 0o640, 0o640},
		{"rewrite keeps 0600", 0o600, 0o600},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, tc.name)
			if tc.existing != 0 {
				if err := os.WriteFile(p, []byte("old"), tc.existing); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(p, tc.existing); err != nil {
					t.Fatal(err)
				}
			}
			if err := WriteBytes(p, []byte("new")); err != nil {
				t.Fatal(err)
			}
			st, err := os.Stat(p)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != tc.want {
				t.Fatalf("mode %v, want %v", st.Mode().Perm(), tc.want)
			}
			if b, _ := os.ReadFile(p); string(b) != "new" {
				t.Fatalf("content %q", b)
			}
		})
	}
}

func TestWriteFailureLeavesOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(p, func(w io.Writer) error {
		w.Write([]byte("half"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "old" {
		t.Fatalf("content %q", b)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Fatalf("temporary file left behind: %v", ents)
	}
}
