package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A rollout count whose product with the examples overflows, or passes the
// cap on one run's plan, is refused before any run starts, naming the flag
// or the eval-set key it came from; it used to print "-150 episodes" and
// grow until the OOM killer ended it.
func TestOversizedPlanIsRefusedNamingFlagOrKey(t *testing.T) {
	dir := t.TempDir()
	set := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		args []string
		want []string
	}{
		{"flag overflows", []string{"eval", "--env", "e1", "-m", "builtin:features", "-r", "9223372036854775807"},
			[]string{"-r/--rollouts 9223372036854775807", "more than the 1000000 episodes", "--shard i/n"}},
		{"Inspect's --epochs", []string{"eval", "--env", "e1", "-m", "builtin:features", "--epochs", "600000"},
			[]string{"-r/--rollouts 600000", "more than the 1000000 episodes"}},
		{"eval-set key", []string{"eval", "--config", set("huge.toml", "[[eval]]\nenv = \"e1\"\nmodel = \"builtin:features\"\nrollouts_per_example = 9223372036854775807\n")},
			[]string{"entry 1", "rollouts_per_example = 9223372036854775807", "more than the 1000000 episodes"}},
		{"eval-set n × r", []string{"eval", "--config", set("nr.toml", "[[eval]]\nenv = \"e1\"\nmodel = \"builtin:features\"\nn = 2000\nr = 1000\n")},
			[]string{"entry 1", "r = 1000", "2000 examples × 1000 rollouts"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			code, _, stderr := runCLI(t, append(tc.args, "--out", out, "--progress", "none")...)
			if code != ExitUsage {
				t.Errorf("exit %d, want %d (usage)", code, ExitUsage)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
			if strings.Contains(stderr, " = -") {
				t.Errorf("a negative episode count was printed:\n%s", stderr)
			}
			if _, err := os.Stat(filepath.Join(out, "evals")); !os.IsNotExist(err) {
				t.Errorf("a refused plan left a run directory (%v)", err)
			}
		})
	}
}
