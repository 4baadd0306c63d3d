package server

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestPythonSessionAdapters runs the Python adapters' live tests against a
// server with a bearer token, each module driving its trainer's loop as
// the trainer drives it, and ending with the reward /v1/score gives the
// transcript played. Afterwards no session is left open.
//   - test_session_adapters (E2 tools, E5/E6 turns): the OpenRLHF agent,
//     the TRL environment_factory, the verl tools and interaction.
//   - test_verifiers_env (E1, E2 tools, E6 turns): the verifiers v1
//     taskset and env (Env.run over an interaction, then Task.score), one
//     weighted reward per component.
//   - test_openenv_harness (E2 tools): the OpenEnv harness session factory
//     as TRL's harness rollout worker drives it (create, initial_messages,
//     list_tools, call_tool, verify, close), failures and release.
func TestPythonSessionAdapters(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not found: the Python adapter tests need it")
	}
	dir, err := filepath.Abs(filepath.Join("..", "clients", "python"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		module, urlVar string
		envs           []string
	}{
		{"test_session_adapters", "SVBENCH_SESSIONS_URL", []string{"e2", "e5", "e6"}},
		{"test_verifiers_env", "SVBENCH_VERIFIERS_URL", []string{"e1", "e2", "e6"}},
		{"test_openenv_harness", "SVBENCH_HARNESS_URL", []string{"e2", "e1"}},
	} {
		t.Run(tc.module, func(t *testing.T) {
			cfg := Config{Envs: tc.envs, Logger: quietLog, Token: "py-" + tc.module}
			ls := startServer(t, cfg)
			ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, py, "-B", "-m", "unittest", "-v", "tests."+tc.module)
			cmd.Dir = dir
			cmd.Env = append(os.Environ(), tc.urlVar+"="+ls.URL, "SVBENCH_TOKEN="+cfg.Token, "PYTHONDONTWRITEBYTECODE=1")
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("python3 -m unittest tests.%s failed: %v\n%s", tc.module, err, out)
			}
			t.Logf("%s", out)
			for deadline := time.Now().Add(10 * time.Second); ls.sessions.count() != 0; {
				if time.Now().After(deadline) {
					t.Fatalf("%d sessions still open after the episodes", ls.sessions.count())
				}
				time.Sleep(10 * time.Millisecond)
			}
		})
	}
}
