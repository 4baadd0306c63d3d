package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// svbench verify runs trivy as E2 scores with it (suite.ScoringOptions): a
// Terraform file that does not parse fails the check (exit 3) instead of
// reading as a clean file. kube-linter runs its own default checks, as its
// CLI does (issue #41: adding E2's RBAC checks by default made 3 of 255 real
// manifests differ from the kube-linter CLI); --checks e2 adds them, so a
// wildcard ClusterRole is a finding there, and --checks all (or
// --all-checks) runs every offline check.
func TestVerifyJudgesAsE2Scores(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	wildcard := write("role.yaml", `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: everything
rules:
- apiGroups: ["*"]
  resources: ["*"]
  verbs: ["*"]
`)
	broken := write("broken.tf", "resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"logs\"\n  acl = \"public-read\"\n")
	for _, tc := range []struct {
		name     string
		args     []string
		code     int
		inStdout string
		inStderr []string
	}{
		{"wildcard ClusterRole, kube-linter's defaults", []string{"verify", "--tool", "kube-linter", wildcard}, 0, "[]", nil},
		{"wildcard ClusterRole, E2's checks", []string{"verify", "--tool", "kube-linter", "--checks", "e2", wildcard}, ExitFindings, `"rule_id": "wildcard-in-rules"`, nil},
		{"wildcard ClusterRole, every check", []string{"verify", "--tool", "kube-linter", "--checks", "all", wildcard}, ExitFindings, `"rule_id": "wildcard-in-rules"`, nil},
		{"wildcard ClusterRole, --all-checks", []string{"verify", "--tool", "kube-linter", "--all-checks", wildcard}, ExitFindings, `"rule_id": "wildcard-in-rules"`, nil},
		{"an unknown check set", []string{"verify", "--checks", "strict", wildcard}, ExitUsage, "", []string{"--checks", "default, e2 or all"}},
		{"--all-checks beside another set", []string{"verify", "--all-checks", "--checks", "e2", wildcard}, ExitUsage, "", []string{"disagree"}},
		{"broken Terraform", []string{"verify", "--tool", "trivy", broken}, ExitCheckFailed, "", []string{"broken.tf", "invalid HCL"}},
		{"broken Terraform, all tools", []string{"verify", broken}, ExitCheckFailed, "", []string{"broken.tf"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout %s\nstderr %s", code, tc.code, stdout, stderr)
			}
			if !strings.Contains(stdout, tc.inStdout) {
				t.Errorf("stdout does not name %q:\n%s", tc.inStdout, stdout)
			}
			for _, w := range tc.inStderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q:\n%s", w, stderr)
				}
			}
		})
	}
}
