package web

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
)

// TestRunsWithNoRowAreHidden: a run whose every model call failed (a wrong
// model name) is kept out of the run list and compare's picker unless
// ?all=1 (or its status) asks for it.
func TestRunsWithNoRowAreHidden(t *testing.T) {
	root := t.TempDir()
	writeRun(t, filepath.Join(root, "good-run"))
	typo := filepath.Join(root, "typo-run")
	writeRun(t, typo)
	m, err := artifact.ReadMetadata(typo)
	if err != nil {
		t.Fatal(err)
	}
	m.Status, m.Errors = artifact.StatusEarlyStop, 3
	if err := artifact.WriteJSONAtomic(filepath.Join(typo, artifact.MetadataFile), m); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, root)
	for _, tc := range []struct {
		path       string
		want, good bool
	}{
		{"/", false, true},
		{"/?all=1", true, true},
		{"/?status=" + artifact.StatusEarlyStop, true, false},
		{"/compare", false, true},
		{"/compare?all=1", true, true},
	} {
		code, body, _ := get(t, ts, tc.path)
		if code != 200 || strings.Contains(body, `value="good-run"`) != tc.good {
			t.Fatalf("%s: %d, the good run is not listed", tc.path, code)
		}
		if got := strings.Contains(body, `value="typo-run"`); got != tc.want {
			t.Errorf("%s: run with no row listed = %v, want %v", tc.path, got, tc.want)
		}
	}
}
