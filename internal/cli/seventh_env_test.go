package cli

import (
	"encoding/json"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "github.com/svbench/svbench/envtest/toyparity" // the seventh environment: one import line
	"github.com/svbench/svbench/web"
)

// TestSeventhEnvironmentEveryCommand is the issue-#21 experiment: an
// environment svbench's own code knows nothing about (one package, one
// blank import) must work in every command.
func TestSeventhEnvironmentEveryCommand(t *testing.T) {
	root := t.TempDir()
	evals := filepath.Join(root, "evals")
	mustRun := func(args ...string) string {
		t.Helper()
		code, stdout, stderr := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d\nstdout %s\nstderr %s", args, code, stdout, stderr)
		}
		if strings.Contains(stderr, "warning") || strings.Contains(stderr, "skipped") {
			t.Errorf("%v: stderr %s", args, stderr)
		}
		return stdout
	}
	if out := mustRun("envs"); !strings.Contains(out, "toy-parity") || !strings.Contains(out, "[e7]") {
		t.Errorf("envs: %s", out)
	}
	mustRun("eval", "--env", "e7", "-m", "builtin:count", "--out", root, "--progress", "none", "--run-id", "count")
	mustRun("eval", "--env", "sv-env-toy-parity", "-m", "builtin:count", "--out", root, "--progress", "none", "--run-id", "count2")
	runs := runDirs(t, root)
	if len(runs) != 2 {
		t.Fatalf("runs %v", runs)
	}
	run := filepath.Join(evals, "toy-parity--builtin-count", "count")
	var summary map[string]any
	b, err := os.ReadFile(filepath.Join(run, "summary.json"))
	if err != nil {
		t.Fatalf("eval wrote no report: %v", err)
	}
	if err := json.Unmarshal(b, &summary); err != nil {
		t.Fatal(err)
	}
	if m, _ := summary["mean_reward"].(float64); math.Abs(m-1.1) > 1e-9 || summary["solved_rate"] != 1.0 {
		t.Errorf("summary %v", summary)
	}
	bd, _ := summary["breakdown"].(map[string]any)
	if len(bd["length"].([]any)) != 2 {
		t.Errorf("breakdown %v", summary["breakdown"])
	}
	mustRun("report", "--input", run)
	mustRun("report", "--input", filepath.Join(run, "results.jsonl"), "--env", "e7", "--out", t.TempDir())
	if out := mustRun("scoreboard", "--root", evals, "--all", "--out", t.TempDir()); !strings.Contains(out, "2 run(s) ranked") {
		t.Errorf("scoreboard: %s", out)
	}
	if out := mustRun("leaderboard", "--root", evals, "--out", t.TempDir()); !strings.Contains(out, "toy-parity") {
		t.Errorf("leaderboard: %s", out)
	}
	mustRun("compare", run, filepath.Join(evals, "toy-parity--builtin-count", "count2"), "--out", t.TempDir())
	mustRun("probe", "--env", "e7", "--out", t.TempDir())
	rows := filepath.Join(t.TempDir(), "rows.jsonl")
	mustRun("data", "generate", "toy-parity", "--n", "20", "--out", rows)
	mustRun("data", "validate", "--env", "e7", rows)
	if code, _, stderr := runCLI(t, "data", "generate", "e7"); code != ExitUsage {
		t.Errorf("data generate e7 without --out: exit %d, want %d (%s)", code, ExitUsage, stderr)
	}

	// score an outside completion
	in := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(in, []byte(`{"completion": "yes", "bits": "1", "answer": "yes"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out := mustRun("score", "--env", "e7", "--input", in); !strings.Contains(out, `"reward":1.1`) {
		t.Errorf("score: %s", out)
	}

	// the dashboard's run page
	srv, err := web.New(evals, web.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv)
	defer ts.Close()
	rel, _ := filepath.Rel(evals, run)
	resp, err := http.Get(ts.URL + "/run?id=" + url.QueryEscape(filepath.ToSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page := new(strings.Builder)
	if _, err := io.Copy(page, resp.Body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || strings.Contains(page.String(), "no report") || !strings.Contains(page.String(), "mean_reward") {
		t.Errorf("view run page: %d\n%s", resp.StatusCode, page.String())
	}
}
