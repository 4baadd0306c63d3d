package web

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestExportIsSelfContained: `svbench view --export DIR` writes a folder
// whose every local link resolves to a file inside it, with model output
// escaped as on the live dashboard.
func TestExportIsSelfContained(t *testing.T) {
	fx := newFixture(t)
	s, err := New(fx.root, Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir := filepath.Join(t.TempDir(), "site")
	res, err := s.Export(dir)
	if err != nil {
		t.Fatal(err)
	}
	// 3 runs: 40 + 40 + 4 rollouts, each its own page.
	if res.Pages < 84+3+3 {
		t.Errorf("exported %d pages (%+v)", res.Pages, res)
	}
	attr := regexp.MustCompile(`(?:href|src)="([^"]*)"`)
	checked := 0
	err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "<script>alert") {
			t.Errorf("%s: model output unescaped", p)
		}
		for _, m := range attr.FindAllStringSubmatch(string(b), -1) {
			link := strings.ReplaceAll(m[1], "&amp;", "&")
			if strings.HasPrefix(link, "/") && !strings.HasPrefix(link, "/compare") {
				t.Errorf("%s: link %q still points at a server", p, link)
				continue
			}
			if strings.HasPrefix(link, "/") || strings.HasPrefix(link, "#") || strings.Contains(link, "://") {
				continue
			}
			target := filepath.Join(filepath.Dir(p), filepath.FromSlash(strings.SplitN(link, "#", 2)[0]))
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: link %q: %v", p, link, err)
			}
			checked++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 200 {
		t.Errorf("only %d relative links checked", checked)
	}
	index, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil || !strings.Contains(string(index), `href="static/style.css"`) || !strings.Contains(string(index), "builtin:heuristic") {
		t.Errorf("index.html: %v\n%.400s", err, index)
	}
	if _, err := s.Export(dir); err == nil {
		t.Error("export into a non-empty directory was not refused")
	}
}

// exportFixture serves root and exports it into a fresh folder, as
// `svbench view --export` does; an export that aborts fails the test.
func exportFixture(t *testing.T, root string) (string, ExportResult) {
	t.Helper()
	s, err := New(root, Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	dir := filepath.Join(t.TempDir(), "site")
	res, err := s.Export(dir)
	if err != nil {
		t.Fatalf("export aborted: %v", err)
	}
	return dir, res
}
