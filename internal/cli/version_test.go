package cli

import (
	"os/exec"
	"strings"
	"testing"
)

// `svbench version` run from inside another project's checkout prints what
// the build recorded — nothing, for a test binary — and never that
// project's commit.
func TestVersionIgnoresTheWorkingDirectorysRepo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "another project"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(cmd.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	cmd := exec.Command("git", "rev-parse", "HEAD")
	cmd.Dir = dir
	head, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	code, stdout, stderr := runCLI(t, "version")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Contains(stdout, strings.TrimSpace(string(head))) {
		t.Fatalf("version printed the working directory's commit:\n%s", stdout)
	}
	if !strings.Contains(stdout, "commit  unknown\n") {
		t.Errorf("an unstamped build should say the commit is unknown:\n%s", stdout)
	}
}
