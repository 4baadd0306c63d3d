// Package sharedtest locates the development checkout's ../shared folder
// (parity vectors computed by the reference, reference data) for tests. Users
// who clone svbench do not have it, so tests that need it skip.
package sharedtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns ../shared beside the module root, or skips the test with a
// message saying why.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("../shared not found: parity vectors are only available in the development checkout")
		}
		dir = parent
	}
	shared := filepath.Join(dir, "..", "shared")
	if st, err := os.Stat(shared); err != nil || !st.IsDir() {
		t.Skip("../shared not found: parity vectors are only available in the development checkout")
	}
	return shared
}

// RealRun returns the folder of one of the reference's real training runs
// (../shared/reference-data/real-runs/<name>: e1-hybrid, e1-llm_judge,
// e2-hybrid), or skips the test saying it is absent.
func RealRun(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(Dir(t), "reference-data", "real-runs", name)
	if st, err := os.Stat(filepath.Join(dir, "results.jsonl")); err != nil || st.IsDir() {
		t.Skipf("real run %s not found (%s): the reference's training runs are only available in the development checkout", name, dir)
	}
	return dir
}
