package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/base/sharedtest"
)

func TestRunManifests(t *testing.T) {
	run := evalRun(t, "--env", "e2", "-m", "builtin:tool-only", "-n", "3", "-t", "512")
	if code, stdout, stderr := runCLI(t, "manifest", "validate", run); code != 0 || !strings.Contains(stdout, ": ok") {
		t.Fatalf("svbench's own manifest: exit %d: %s %s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(run, artifact.ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"max_tokens": 512`, `"tool_budget": 6`, `"max_turns": 6`, `"environment_id": "sv-env-config-verification"`, `"budget_group": "config-verification-`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("manifest lacks %s:\n%s", want, b)
		}
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	broken := strings.Replace(strings.Replace(string(b), `"trainer": "none"`, `"trainer": "ppo"`, 1), `"run_id"`, `"run"`, 1)
	if err := os.WriteFile(bad, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := runCLI(t, "manifest", "validate", bad)
	if code != 1 || !strings.Contains(stdout, "run_id") || !strings.Contains(stdout, "trainer") {
		t.Fatalf("broken manifest: exit %d: %s", code, stdout)
	}

	// Compatibility both ways with the reference: its schema accepts
	// svbench's manifest, and svbench's schema accepts its fixtures.
	ref := filepath.Join(sharedtest.Dir(t), "reference-data", "reference-bench")
	if _, err := os.Stat(ref); err != nil {
		t.Skipf("reference schemas not found (%v): they are only in the development checkout's ../shared", err)
	}
	if code, stdout, _ := runCLI(t, "manifest", "validate", "--schema", filepath.Join(ref, "schemas", "run_manifest.schema.json"), run); code != 0 {
		t.Fatalf("the reference's schema refuses svbench's manifest: %s", stdout)
	}
	for _, f := range []string{"e1_run_manifest.json", "e2_run_manifest.json"} {
		if code, stdout, _ := runCLI(t, "manifest", "validate", filepath.Join(ref, "fixtures", f)); code != 0 {
			t.Fatalf("svbench's schema refuses the reference's %s: %s", f, stdout)
		}
	}
}
