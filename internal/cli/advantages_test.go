package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
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
		// The fixture's advantages are reward minus the group mean.
		if len(rep.Recorded.Reproduces) == 0 || rep.Recorded.Reproduces[0] != "grpo" {
			t.Errorf("recorded advantages reproduced by %v, want grpo", rep.Recorded.Reproduces)
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
