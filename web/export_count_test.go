package web

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestExportCountsWhatItWrites: the file count view --export prints is the
// number of files in the folder (two URLs of one page, such as the same
// query keys in another order, are one file), and no link is left pointing
// at a server that a copy opened from disk does not have.
func TestExportCountsWhatItWrites(t *testing.T) {
	fx := newFixture(t)
	dir, res := exportFixture(t, fx.root)
	files, pages := 0, 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		if strings.HasSuffix(p, ".html") {
			pages++
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if strings.Contains(string(b), `href="/`) {
				t.Errorf("%s: a link to the server: %s", p, string(b)[strings.Index(string(b), `href="/`):][:60])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != files || res.Pages != pages {
		t.Errorf("reported %d files (%d pages), wrote %d (%d pages)", res.Files, res.Pages, files, pages)
	}
}
