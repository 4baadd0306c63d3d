package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestAdvantagesCommand(t *testing.T) {
	t.Run("trainer rows: weights fitted, recorded GRPO advantages recognised", func(t *testing.T) {
		out := t.TempDir()
		code, stdout, stderr := runCLI(t, "advantages", filepath.Join("testdata", "trainer", "e1"), "--out", out)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		var rep struct {
			Weights  []float64 `json:"weights"`
			Names    []string  `json:"components"`
			Recorded struct {
				Reproduces []string `json:"reproduced_by"`
			} `json:"recorded"`
		}
		b, err := os.ReadFile(filepath.Join(out, "advantages.json"))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		want := map[string]float64{"accuracy": 1, "asymmetric_cost": 0.5, "calibration": 0.2, "format": 0.1}
		for i, n := range rep.Names {
			if rep.Weights[i] != want[n] {
				t.Errorf("fitted weight %s = %v, want %v", n, rep.Weights[i], want[n])
			}
		}
		// The fixture's advantages are reward minus the group mean: every
		// trainer's plain mean-centring (no singleton, no unscored reward).
		if want := []string{"grpo@trl", "grpo@verl", "grpo@openrlhf"}; !slices.Equal(rep.Recorded.Reproduces, want) {
			t.Errorf("recorded advantages reproduced by %v, want %v", rep.Recorded.Reproduces, want)
		}
		if !strings.Contains(stdout, "Collapsed groups") || !strings.Contains(stdout, "fitted") {
			t.Errorf("markdown:\n%s", stdout)
		}
	})
	t.Run("svbench run with rollouts: weights from the rows", func(t *testing.T) {
		runs := t.TempDir()
		if code, _, stderr := runCLI(t, "eval", "--env", "e1", "-m", "builtin:features", "-n", "6", "-r", "3", "--out", runs, "--progress", "none", "--no-report"); code != 0 {
			t.Fatalf("eval: %s", stderr)
		}
		dir := runDirs(t, runs)[0]
		code, stdout, stderr := runCLI(t, "advantages", dir)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		// A deterministic baseline gives identical rollouts: every group
		// collapses under every scheme.
		if !strings.Contains(stdout, "Weights (rows)") || !strings.Contains(stdout, "| grpo | 100.0% |") {
			t.Fatalf("markdown:\n%s", stdout)
		}
	})
	t.Run("bad input", func(t *testing.T) {
		if code, _, _ := runCLI(t, "advantages", filepath.Join(t.TempDir(), "missing")); code != ExitUsage {
			t.Fatalf("missing run: exit %d", code)
		}
		if code, _, _ := runCLI(t, "advantages", filepath.Join("testdata", "trainer", "e1"), "--weights", "accuracy=x"); code != ExitUsage {
			t.Fatalf("bad weights: exit %d", code)
		}
	})
}

// TestAdvantagesStream: --stream writes the same advantages.json as the
// in-memory analysis of the same rows and weights.
func TestAdvantagesStream(t *testing.T) {
	w := "accuracy=1,asymmetric_cost=0.5,calibration=0.2,format=0.1"
	memOut, streamOut := t.TempDir(), t.TempDir()
	in := filepath.Join("testdata", "trainer", "e1")
	if code, _, stderr := runCLI(t, "advantages", in, "--weights", w, "--out", memOut); code != 0 {
		t.Fatalf("in memory: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "advantages", in, "--weights", w, "--stream", "--out", streamOut); code != 0 {
		t.Fatalf("stream: exit %d: %s", code, stderr)
	}
	a, _ := os.ReadFile(filepath.Join(memOut, "advantages.json"))
	b, _ := os.ReadFile(filepath.Join(streamOut, "advantages.json"))
	if len(a) == 0 || string(a) != string(b) {
		t.Errorf("streamed report differs:\n%s\n---\n%s", b, a)
	}
	if code, _, stderr := runCLI(t, "advantages", in, "--stream", "--out", t.TempDir()); code == 0 || !strings.Contains(stderr, "--weights") {
		t.Errorf("stream without weights: exit %d %s", code, stderr)
	}
}

// TestAdvantagesConventions: trainer rows whose advantages were computed by
// hand from each trainer's documented formula (analysis/advantage's
// convention_test.go shows the arithmetic), components accuracy and format
// weighted 1 and 0.5; `advantages` must name the setting that made them.
func TestAdvantagesConventions(t *testing.T) {
	type row struct {
		problem       int
		acc, fmt, adv float64
		unscored      bool
	}
	// Group 0: the fourth rollout is unscored (reward null); group 1 full;
	// group 2 a single rollout.
	trl := []row{{0, 1, 1, 0.999800039992, false}, {0, 0, 1, -0.999800039992, false}, {0, 1, 0, 0, false}, {0, 0, 0, 0, true},
		{1, 1, 1, 0.833222237035, false}, {1, 1, 1, 0.833222237035, false}, {1, 0, 0, -1.166511131849, false}, {1, 0, 1, -0.499933342221, false},
		{2, 1, 1, 0, false}}
	verl := []row{{1, 1, 1, 0.833332222224, false}, {1, 1, 1, 0.833332222224, false}, {1, 0, 0, -1.166665111113, false}, {1, 0, 1, -0.499999333334, false},
		{4, 0, 0, -1.161893203865, false}, {4, 1, 0, 0.387297734622, false}, {4, 1, 1, 1.161893203865, false}, {4, 0, 1, -0.387297734622, false},
		{2, 1, 1, 1.499998500002, false}}
	openrlhf := []row{{5, 0.01, 0, -1.024695016596, false}, {5, 0.02, 0, -0.439155007113, false}, {5, 0.03, 0, 0.146385002371, false}, {5, 0.05, 0, 1.317465021338, false},
		{6, 0.04, 0, 1.414213462373, false}, {6, 0.01, 0, -0.707106731187, false}, {6, 0.01, 0, -0.707106731187, false}, {6, 0.02, 0, 0, false}}
	tests := []struct {
		name string
		rows []row
		want string
	}{
		{"trl", trl, "grpo_std@trl"},
		{"verl", verl, "grpo_std@verl"},
		{"openrlhf", openrlhf, "grpo_std@openrlhf"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var b strings.Builder
			for i, r := range tc.rows {
				m := map[string]any{"step": 3, "problem_id": r.problem, "sample_id": i, "advantage": r.adv,
					"reward": r.acc + 0.5*r.fmt, "metrics": map[string]any{"reward_accuracy": r.acc, "format_reward": r.fmt}}
				if r.unscored {
					m["reward"], m["metrics"] = nil, map[string]any{"reward_accuracy": nil, "format_reward": nil}
				}
				line, err := json.Marshal(m)
				if err != nil {
					t.Fatal(err)
				}
				b.Write(append(line, '\n'))
			}
			if err := os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := runCLI(t, "advantages", dir, "--weights", "accuracy=1,format=0.5", "--out", dir)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var rep struct {
				Unscored int `json:"unscored_rollouts"`
				Recorded struct {
					Reproduces []string `json:"reproduced_by"`
				} `json:"recorded"`
			}
			raw, err := os.ReadFile(filepath.Join(dir, "advantages.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(raw, &rep); err != nil {
				t.Fatal(err)
			}
			// The row with a null reward stays in its group, unscored.
			if wantUnscored := map[string]int{"trl": 1}[tc.name]; rep.Unscored != wantUnscored {
				t.Errorf("unscored rollouts %d, want %d", rep.Unscored, wantUnscored)
			}
			if !slices.Equal(rep.Recorded.Reproduces, []string{tc.want}) {
				t.Errorf("reproduced by %v, want only %s\n%s", rep.Recorded.Reproduces, tc.want, stdout)
			}
			if !strings.Contains(stdout, "by "+tc.want+".") || !strings.Contains(stdout, "Zero-variance groups") || !strings.Contains(stdout, "GDPO") {
				t.Errorf("markdown does not name %s or the zero-variance figures:\n%s", tc.want, stdout)
			}
		})
	}
}
