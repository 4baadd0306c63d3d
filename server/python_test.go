package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestPythonClient runs the Python client's unittest suite against a live
// server with E1 and a bearer token.
func TestPythonClient(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the Python client tests need it")
	}
	cfg := e1Config()
	cfg.Token = "py-test-token"
	ls := startServer(t, cfg)
	dir, err := filepath.Abs(filepath.Join("..", "clients", "python"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, "-B", "-m", "unittest", "-v", "tests.test_svbench_client", "tests.test_adapters", "tests.test_hostile_answers", "tests.test_typing")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "SVBENCH_URL="+ls.URL, "SVBENCH_TOKEN="+cfg.Token, "SVBENCH_TEST_ENV=e1", "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("python3 -m unittest failed: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
