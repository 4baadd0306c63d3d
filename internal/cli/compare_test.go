package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func evalRun(t *testing.T, args ...string) string {
	t.Helper()
	out := t.TempDir()
	full := append([]string{"eval", "--out", out, "--progress", "none", "--no-report"}, args...)
	if code, _, stderr := runCLI(t, full...); code != 0 {
		t.Fatalf("eval %v: exit %d: %s", args, code, stderr)
	}
	return runDirs(t, out)[0]
}

func TestCompareAndGate(t *testing.T) {
	features := evalRun(t, "--env", "e1", "-m", "builtin:features", "-n", "60")
	features2 := evalRun(t, "--env", "e1", "-m", "builtin:features", "-n", "60")
	heuristic := evalRun(t, "--env", "e1", "-m", "builtin:heuristic", "-n", "60")
	reference := evalRun(t, "--env", "e1", "-m", "builtin:heuristic", "-n", "60", "--rubric", "reference")
	shorter := evalRun(t, "--env", "e1", "-m", "builtin:heuristic", "-n", "30")

	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "compare", features, heuristic, "--out", out)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "wrote compare.md and compare.json to "+out) {
		t.Errorf("compare does not say where it wrote: %s", stderr)
	}
	var cmp []struct {
		Pairs      int `json:"pairs"`
		Quantities []struct {
			Name    string    `json:"name"`
			Diff    float64   `json:"diff"`
			Lo      float64   `json:"diff_ci_lo"`
			Hi      float64   `json:"diff_ci_hi"`
			McNemar *struct{} `json:"mcnemar"`
		} `json:"quantities"`
		Slices []struct {
			Field string `json:"field"`
		} `json:"slices"`
	}
	b, _ := os.ReadFile(filepath.Join(out, "compare.json"))
	if err := json.Unmarshal(b, &cmp); err != nil {
		t.Fatal(err)
	}
	if len(cmp) != 1 || cmp[0].Pairs != 60 {
		t.Fatalf("compare.json: %s", b)
	}
	seen := map[string]bool{}
	for _, q := range cmp[0].Quantities {
		seen[q.Name] = true
		if q.Lo > q.Diff || q.Hi < q.Diff {
			t.Errorf("%s: CI [%v, %v] excludes Δ %v", q.Name, q.Lo, q.Hi, q.Diff)
		}
		if (q.Name == "solved" || q.Name == "accuracy") && q.McNemar == nil {
			t.Errorf("%s is pass/fail but has no McNemar test", q.Name)
		}
	}
	for _, n := range []string{"reward", "solved", "accuracy", "calibration"} {
		if !seen[n] {
			t.Errorf("quantity %s missing: %v", n, seen)
		}
	}
	if len(cmp[0].Slices) == 0 || !strings.Contains(stdout, "By slice") {
		t.Errorf("no per-slice breakdown (difficulty, scenario): %s", stdout)
	}

	// Refusals name the difference.
	code, _, stderr = runCLI(t, "compare", heuristic, reference, "--out", t.TempDir())
	if code == 0 || !strings.Contains(stderr, "rubric: default vs reference") {
		t.Fatalf("rubric mismatch: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "compare", heuristic, shorter, "--out", t.TempDir())
	if code == 0 || !strings.Contains(stderr, "not fully paired") {
		t.Fatalf("unpaired: exit %d: %s", code, stderr)
	}
	if code, _, stderr = runCLI(t, "compare", heuristic, shorter, "--allow-unpaired", "--out", t.TempDir()); code != 0 {
		t.Fatalf("--allow-unpaired: exit %d: %s", code, stderr)
	}

	// Gate: the weaker heuristic regresses against features; a rerun does not.
	code, stdout, _ = runCLI(t, "gate", "--baseline", features, "--candidate", heuristic, "--out", t.TempDir())
	if code != ExitFindings || !strings.Contains(stdout, "::error title=svbench gate::regression") || !strings.Contains(stdout, "| accuracy |") {
		t.Fatalf("gate on a regression: exit %d:\n%s", code, stdout)
	}
	code, stdout, stderr = runCLI(t, "gate", "--baseline", features, "--candidate", features2, "--out", t.TempDir())
	if code != 0 || !strings.Contains(stdout, "::notice title=svbench gate::passed") {
		t.Fatalf("gate on identical runs: exit %d:\n%s%s", code, stdout, stderr)
	}
	if code, _, _ = runCLI(t, "gate", "--baseline", features, "--candidate", heuristic, "--max-drop", "2"); code != ExitUsage {
		t.Fatalf("bad --max-drop: exit %d", code)
	}
}
