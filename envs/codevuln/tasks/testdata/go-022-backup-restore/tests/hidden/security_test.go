package restore

import (
	"archive/zip"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type entry struct {
	name, body string
	mode       fs.FileMode
}

func build(t *testing.T, path string, entries []entry) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	for _, e := range entries {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate}
		if e.mode != 0 {
			h.SetMode(e.mode)
		}
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(e.body))
	}
	zw.Close()
	f.Close()
}

// strays lists files under base that are neither the archive nor inside dest.
func strays(base, dest, archive string) []string {
	var out []string
	filepath.WalkDir(base, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && p != archive && !strings.HasPrefix(p, dest+string(filepath.Separator)) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

func TestMaliciousArchives(t *testing.T) {
	cases := [][]entry{
		{{name: "../pwned.txt", body: "x"}},
		{{name: "a/../../pwned.txt", body: "x"}},
		{{name: "a/b/../../../../pwned.txt", body: "x"}},
		{{name: "ok.txt", body: "fine"}, {name: "../config.yaml", body: "x"}},
		{{name: "..\\pwned.txt", body: "x"}},
		{{name: "/tmp/svbench-abs-pwned.txt", body: "x"}},
		{{name: "link", body: "..", mode: fs.ModeSymlink | 0o777}, {name: "link/pwned.txt", body: "x"}},
	}
	for i, c := range cases {
		base := t.TempDir()
		archive := filepath.Join(base, "in.zip")
		dest := filepath.Join(base, "ws")
		build(t, archive, c)
		names, err := Restore(archive, dest)
		if s := strays(base, dest, archive); len(s) > 0 {
			t.Errorf("case %d: files written outside dest: %v", i, s)
		}
		if _, statErr := os.Stat("/tmp/svbench-abs-pwned.txt"); statErr == nil {
			os.Remove("/tmp/svbench-abs-pwned.txt")
			t.Errorf("case %d: absolute path written", i)
		}
		if err == nil {
			t.Errorf("case %d: unsafe archive accepted (%v)", i, names)
		}
		if ents, _ := os.ReadDir(dest); err != nil && len(ents) > 0 {
			t.Errorf("case %d: partial restore left %d entries", i, len(ents))
		}
	}
}

func TestGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 12))
	for i := 0; i < 40; i++ {
		var entries []entry
		evil := false
		seen := map[string]bool{}
		for j := 0; j < 1+rng.IntN(6); j++ {
			var parts []string
			for k := 0; k < rng.IntN(4); k++ {
				parts = append(parts, fmt.Sprintf("d%d", rng.IntN(3)))
			}
			parts = append(parts, fmt.Sprintf("f%d.txt", j))
			if rng.IntN(5) == 0 {
				ups := 1 + rng.IntN(3)
				for k := 0; k < ups; k++ {
					parts = append([]string{".."}, parts...)
				}
				evil = true
			}
			name := strings.Join(parts, "/")
			if seen[name] {
				continue
			}
			seen[name] = true
			entries = append(entries, entry{name: name, body: fmt.Sprintf("body %d %d", i, j)})
		}
		base := t.TempDir()
		archive := filepath.Join(base, "in.zip")
		dest := filepath.Join(base, "ws")
		build(t, archive, entries)
		names, err := Restore(archive, dest)
		if s := strays(base, dest, archive); len(s) > 0 {
			t.Fatalf("archive %d: files outside dest: %v", i, s)
		}
		if evil {
			if err == nil {
				t.Fatalf("archive %d with .. entries accepted", i)
			}
			continue
		}
		if err != nil || len(names) != len(entries) {
			t.Fatalf("archive %d: %v, %v", i, names, err)
		}
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dest, filepath.FromSlash(e.name)))
			if err != nil || string(b) != e.body {
				t.Fatalf("%s = %q, %v", e.name, b, err)
			}
		}
	}
}
