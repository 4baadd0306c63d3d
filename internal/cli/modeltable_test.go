package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestModelTableInScoreboardAndLeaderboard: scoreboard.md and
// leaderboard.md end with one row per model across environments, each
// header with the reward range the run's rubric declared (recorded in
// metadata.json by eval), a model without a run in an environment shown —.
func TestModelTableInScoreboardAndLeaderboard(t *testing.T) {
	root := t.TempDir()
	for _, a := range [][]string{{"--env", "e1", "-m", "builtin:features"}, {"--env", "e7", "-m", "builtin:count"}} {
		args := append([]string{"eval", "-n", "6", "--out", root, "--progress", "none"}, a...)
		if code, _, stderr := runCLI(t, args...); code != 0 {
			t.Fatalf("eval %v: exit %d: %s", a, code, stderr)
		}
	}
	wants := []string{"## Models across environments", "network-logs: accuracy (reward ∈ [-0.5, 2.8])", "toy-parity: mean_reward (reward ∈ [0, 1.1])",
		// E1's main metric is accuracy over every row: builtin:features
		// abstains on one of the 6 (its accuracy_decided is 1.0000).
		"| builtin:count | — | 1.1000 [1.1000, 1.1000]", "| builtin:features | 0.8333 [0.5000, 1.0000]"}
	for _, cmd := range []string{"scoreboard", "leaderboard"} {
		out := t.TempDir()
		if code, _, stderr := runCLI(t, cmd, "--root", root, "--out", out); code != 0 {
			t.Fatalf("%s: exit %d: %s", cmd, code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(out, cmd+".md"))
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range wants {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s.md lacks %q:\n%s", cmd, w, b)
			}
		}
		if j, _ := os.ReadFile(filepath.Join(out, cmd+".json")); !strings.Contains(string(j), `"models_by_env"`) {
			t.Errorf("%s.json has no models_by_env", cmd)
		}
	}
}
