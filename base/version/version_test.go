package version

import (
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
)

func TestCommitOf(t *testing.T) {
	const rev = "0123456789abcdef0123456789abcdef01234567"
	info := func(kv ...string) *debug.BuildInfo {
		bi := &debug.BuildInfo{}
		for i := 0; i+1 < len(kv); i += 2 {
			bi.Settings = append(bi.Settings, debug.BuildSetting{Key: kv[i], Value: kv[i+1]})
		}
		return bi
	}
	for _, tc := range []struct {
		name  string
		stamp string
		bi    *debug.BuildInfo
		want  string
	}{
		{"no build info", "", nil, ""},
		{"no vcs stamp", "", info("-buildmode", "exe"), ""},
		{"vcs stamp", "", info("vcs.revision", rev, "vcs.modified", "false"), rev},
		{"vcs stamp of a dirty tree", "", info("vcs.revision", rev, "vcs.modified", "true"), rev + "-dirty"},
		{"modified without a revision", "", info("vcs.modified", "true"), ""},
		{"ldflags stamp wins", "feedface", info("vcs.revision", rev), "feedface"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := commitOf(tc.stamp, tc.bi); got != tc.want {
				t.Errorf("commitOf(%q, …) = %q, want %q", tc.stamp, got, tc.want)
			}
		})
	}
}

// A binary without a VCS or -ldflags stamp, run from inside someone else's
// repository, must not report that repository's commit as svbench's. A test
// binary carries no VCS stamp, so it stands in for a `go install` build.
func TestGitCommitIgnoresWorkingDirectoryRepo(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(cmd.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q")
	git("commit", "-q", "--allow-empty", "-m", "someone else's project")
	head := git("rev-parse", "HEAD")

	saved := Commit
	Commit = ""
	t.Cleanup(func() { Commit = saved })
	t.Chdir(dir)

	got := GitCommit()
	if got == head || strings.HasPrefix(got, head) {
		t.Fatalf("GitCommit() = %q: the working directory's repository commit, not svbench's", got)
	}
	bi, _ := debug.ReadBuildInfo()
	if want := commitOf("", bi); got != want {
		t.Errorf("GitCommit() = %q, want the build's own stamp %q", got, want)
	}
	if c := CommitOrUnknown(); got == "" && c != Unknown {
		t.Errorf("CommitOrUnknown() = %q with no stamp, want %q", c, Unknown)
	}
}
