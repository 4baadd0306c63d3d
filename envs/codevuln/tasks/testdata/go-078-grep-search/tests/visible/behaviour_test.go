package search

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

func repo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "pkg"), 0o755)
	os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "pkg", "util.go"), []byte("package pkg\n\n// hello helper\nfunc Hello() {}\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "README.md"), []byte("say hello\n"), 0o644)
	return dir
}

func TestSearch(t *testing.T) {
	dir := repo(t)
	got, err := Search(context.Background(), dir, "hello", "")
	if err != nil {
		t.Fatal(err)
	}
	want := []Match{{"README.md", 1, "say hello"}, {"main.go", 4, "\tprintln(\"hello\")"}, {"pkg/util.go", 3, "// hello helper"}}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("match %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestGlobAndNoMatch(t *testing.T) {
	dir := repo(t)
	got, err := Search(context.Background(), dir, "hello", "*.md")
	if err != nil || len(got) != 1 || got[0].File != "README.md" {
		t.Fatalf("glob: %+v %v", got, err)
	}
	got, err = Search(context.Background(), dir, "absent-word", "")
	if err != nil || len(got) != 0 {
		t.Fatalf("no match: %+v %v", got, err)
	}
	if _, err := Search(context.Background(), dir, "", ""); err == nil {
		t.Fatal("empty pattern accepted")
	}
}
