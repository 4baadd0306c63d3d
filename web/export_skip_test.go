package web

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// One bad run (a results file that is a symlink out of the root, a row
// that does not decode) does not abort `svbench view --export`: its pages
// are exported as pages saying why, the run is named, and every other run
// is exported as usual.
func TestExportSkipsBadRunsAndExportsTheRest(t *testing.T) {
	fx := newFixture(t)
	good := filepath.Join(fx.root, filepath.FromSlash(fx.runA))
	meta, err := os.ReadFile(filepath.Join(good, "metadata.json"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := os.ReadFile(filepath.Join(good, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(t.TempDir(), "elsewhere.jsonl")
	if err := os.WriteFile(outside, rows, 0o644); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func(dir string) error{
		"bad-symlink": func(dir string) error { return os.Symlink(outside, filepath.Join(dir, "results.jsonl")) },
		"bad-nan": func(dir string) error {
			return os.WriteFile(filepath.Join(dir, "results.jsonl"), append(append([]byte(nil), rows...), []byte(`{"index": 99, "rollout": 0, "reward": NaN, "final_text": ""}`+"\n")...), 0o644)
		},
	}
	for id, mk := range bad {
		dir := filepath.Join(filepath.Dir(good), id)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		m := strings.Replace(string(meta), `"run_id": "run-0"`, `"run_id": "`+id+`"`, 1)
		if err := os.WriteFile(filepath.Join(dir, "metadata.json"), []byte(m), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := mk(dir); err != nil {
			t.Fatal(err)
		}
	}
	_, res := exportFixture(t, fx.root)
	skippedRuns := map[string]bool{}
	for _, p := range res.SkippedPages {
		if p.Reason == "" || p.URL == "" {
			t.Errorf("skipped page without a URL or reason: %+v", p)
		}
		skippedRuns[p.Run] = true
	}
	for id := range bad {
		found := false
		for r := range skippedRuns {
			if strings.HasSuffix(r, id) {
				found = true
			}
		}
		if !found {
			t.Errorf("run %s not reported as skipped (skipped: %v)", id, res.SkippedPages)
		}
	}
	for r := range skippedRuns {
		if !strings.Contains(r, "bad-") {
			t.Errorf("a good run was skipped: %s", r)
		}
	}
	// The good runs are all there: 40 + 40 + 4 rollout pages and more.
	if res.Pages < 84+3+3 {
		t.Errorf("exported %d pages (%+v)", res.Pages, res)
	}
}
