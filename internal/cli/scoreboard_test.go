package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
)

// The scoreboard ranks only completed runs, keeps the most complete run per
// (env, model, dataset, condition) and keeps conditions apart: once an
// interrupted 4-row run hid a complete 40-row run, a failed 0-row run was
// ranked "best calibrated", and runs differing only in rubric collapsed.
func TestScoreboardRanksCompleteRunsPerCondition(t *testing.T) {
	root := t.TempDir()
	eval := func(extra ...string) string {
		out := t.TempDir()
		args := append([]string{"eval", "--env", "e1", "-m", "builtin:features", "--out", out, "--progress", "none"}, extra...)
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("eval %v: exit %d: %s", extra, code, stderr)
		}
		src := runDirs(t, out)[0]
		dst := filepath.Join(root, filepath.Base(filepath.Dir(src))+"-"+filepath.Base(src))
		if err := os.Rename(src, dst); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	setStatus := func(dir, status string) {
		m, err := artifact.ReadMetadata(dir)
		if err != nil {
			t.Fatal(err)
		}
		m.Status = status
		if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), m); err != nil {
			t.Fatal(err)
		}
	}
	complete := eval("-n", "40", "--run-id", "a-complete")
	fragment := eval("-n", "4", "--run-id", "b-fragment")
	setStatus(fragment, artifact.StatusInterrupted)
	reference := eval("-n", "40", "--rubric", "reference", "--run-id", "c-reference")
	failed := eval("-n", "4", "--run-id", "d-failed")
	if err := os.WriteFile(filepath.Join(failed, artifact.ResultsFile), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(failed, artifact.SummaryFile))
	setStatus(failed, artifact.StatusFailed)

	out := t.TempDir()
	if code, _, stderr := runCLI(t, "scoreboard", "--root", root, "--out", out); code != 0 {
		t.Fatalf("scoreboard: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "scoreboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sb struct {
		Runs []struct {
			Dir    string `json:"dir"`
			N      int    `json:"n"`
			Rubric string `json:"rubric"`
		} `json:"runs"`
		Unranked []struct {
			Dir    string `json:"dir"`
			Status string `json:"status"`
		} `json:"unranked"`
	}
	if err := json.Unmarshal(b, &sb); err != nil {
		t.Fatal(err)
	}
	ranked := map[string]int{}
	for _, r := range sb.Runs {
		ranked[r.Dir] = r.N
	}
	if len(sb.Runs) != 2 || ranked[complete] != 40 || ranked[reference] != 40 {
		t.Fatalf("ranked runs = %+v; want the complete default-rubric and reference-rubric runs", sb.Runs)
	}
	unranked := map[string]string{}
	for _, r := range sb.Unranked {
		unranked[r.Dir] = r.Status
	}
	if unranked[fragment] != artifact.StatusInterrupted || unranked[failed] != artifact.StatusFailed {
		t.Fatalf("unranked = %+v", sb.Unranked)
	}
	md, err := os.ReadFile(filepath.Join(out, "scoreboard.md"))
	if err != nil {
		t.Fatal(err)
	}
	// n and 95% intervals are shown beside the metrics.
	if !strings.Contains(string(md), "| 40 |") || !regexp.MustCompile(`\d\.\d{4} \[\d\.\d{4}, \d\.\d{4}\]`).Match(md) {
		t.Fatalf("scoreboard.md lacks n or CIs:\n%s", md)
	}
}
