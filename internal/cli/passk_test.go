package cli

import (
	"math"
	"path/filepath"
	"testing"

	"github.com/svbench/svbench/artifact"
)

// pass@k counts the environment's own verdict. E2 once counted any rollout
// with a positive component as solved, so copying the scanners' ids without
// fixing anything had pass@1 ≈ 1.
func TestPassAtKUsesEnvironmentsSolvedDefinition(t *testing.T) {
	passAt1 := map[string]float64{}
	for _, policy := range []string{"tool-only", "tool-autofix"} {
		out := t.TempDir()
		code, _, stderr := runCLI(t, "eval", "--env", "e2", "--model", "builtin:"+policy, "-n", "30", "-r", "2", "--out", out, "--progress", "none", "--no-report")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", policy, code, stderr)
		}
		dirs := runDirs(t, out)
		meta, err := artifact.ReadMetadata(dirs[0])
		if err != nil {
			t.Fatal(err)
		}
		rows, err := artifact.ReadResults(filepath.Join(dirs[0], artifact.ResultsFile))
		if err != nil {
			t.Fatal(err)
		}
		solved := 0
		for _, r := range rows {
			if r.Solved == nil {
				t.Fatalf("%s: row %d has no solved verdict", policy, r.Index)
			}
			if *r.Solved {
				solved++
				if r.Components["config_auditing"] <= 0 {
					t.Fatalf("%s: solved row %d earned no auditing reward", policy, r.Index)
				}
			}
		}
		// Built-in policies are deterministic, so pass@1 is the solved share.
		want := float64(solved) / float64(len(rows))
		if got := meta.PassAtK["pass@1"]; math.Abs(got-want) > 1e-9 {
			t.Fatalf("%s: pass@1 %v, solved share %v", policy, got, want)
		}
		if meta.SolvedWhen == "" {
			t.Fatalf("%s: metadata does not state what solved means", policy)
		}
		passAt1[policy] = want
	}
	if passAt1["tool-only"] > 0.2 {
		t.Errorf("copying scanner ids without patching solves %.2f of E2; only clean files should count", passAt1["tool-only"])
	}
	if passAt1["tool-autofix"] <= passAt1["tool-only"] {
		t.Errorf("pass@1: autofix %.2f not above tool-only %.2f", passAt1["tool-autofix"], passAt1["tool-only"])
	}
}
