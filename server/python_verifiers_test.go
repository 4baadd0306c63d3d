package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestPythonVerifiersEnv runs clients/python/test_verifiers_env.py against a
// live server serving E1, E2 (tools) and E6 (multi-turn) with a bearer token:
// the verifiers v1 taskset and env (svbench.verifiers_env), driven as
// verifiers v1 drives them (Env.run over an interaction, then Task.score),
// end with a trace reward equal to /v1/score of the transcript played, one
// weighted reward per component. Afterwards no session is left open.
func TestPythonVerifiersEnv(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the Python adapter tests need it")
	}
	cfg := Config{Envs: []string{"e1", "e2", "e6"}, Logger: quietLog, Token: "py-verifiers-token"}
	ls := startServer(t, cfg)
	dir, err := filepath.Abs(filepath.Join("..", "clients", "python"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-B", "-m", "unittest", "-v", "test_verifiers_env")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SVBENCH_VERIFIERS_URL="+ls.URL, "SVBENCH_TOKEN="+cfg.Token, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest test_verifiers_env failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	for deadline := time.Now().Add(10 * time.Second); ls.sessions.count() != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still open after the episodes", ls.sessions.count())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
