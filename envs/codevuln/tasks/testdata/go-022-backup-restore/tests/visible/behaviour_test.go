package restore

import (
	"archive/zip"
	"os"
	"path/filepath"
	"testing"
)

func TestRestore(t *testing.T) {
	dir := t.TempDir()
	zp := filepath.Join(dir, "b.zip")
	f, _ := os.Create(zp)
	zw := zip.NewWriter(f)
	for name, body := range map[string]string{"notes/todo.txt": "buy milk", "README": "hi"} {
		w, _ := zw.Create(name)
		w.Write([]byte(body))
	}
	zw.Create("empty/")
	zw.Close()
	f.Close()
	dest := filepath.Join(dir, "ws")
	got, err := Restore(zp, dest)
	if err != nil || len(got) != 2 {
		t.Fatalf("Restore = %v, %v", got, err)
	}
	b, err := os.ReadFile(filepath.Join(dest, "notes", "todo.txt"))
	if err != nil || string(b) != "buy milk" {
		t.Fatalf("todo.txt = %q, %v", b, err)
	}
	if st, err := os.Stat(filepath.Join(dest, "empty")); err != nil || !st.IsDir() {
		t.Fatal("empty dir not created")
	}
	if _, err := Restore(filepath.Join(dir, "missing.zip"), dest); err == nil {
		t.Fatal("missing archive accepted")
	}
}
