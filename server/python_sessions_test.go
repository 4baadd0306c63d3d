package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestPythonSessionAdapters runs clients/python/test_session_adapters.py
// against a live server serving E2 (tools), E5 and E6 (multi-turn) with a
// bearer token: the OpenRLHF agent, the TRL environment_factory and the
// verl tools and interaction, each driven as its trainer's loop drives it,
// end with the reward /v1/score gives the transcript played. Afterwards no
// session is left open.
func TestPythonSessionAdapters(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the Python adapter tests need it")
	}
	cfg := Config{Envs: []string{"e2", "e5", "e6"}, Logger: quietLog, Token: "py-session-token"}
	ls := startServer(t, cfg)
	dir, err := filepath.Abs(filepath.Join("..", "clients", "python"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-B", "-m", "unittest", "-v", "test_session_adapters")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SVBENCH_SESSIONS_URL="+ls.URL, "SVBENCH_TOKEN="+cfg.Token, "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest test_session_adapters failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
	for deadline := time.Now().Add(10 * time.Second); ls.sessions.count() != 0; {
		if time.Now().After(deadline) {
			t.Fatalf("%d sessions still open after the adapters' episodes", ls.sessions.count())
		}
		time.Sleep(10 * time.Millisecond)
	}
}
