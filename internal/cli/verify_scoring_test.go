package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// svbench verify runs the scanners as E2 scores with them
// (suite.ScoringOptions): a wildcard ClusterRole is a kube-linter finding,
// and a Terraform file that does not parse fails the check (exit 3) instead
// of reading as a clean file. Before, verify built kube-linter without E2's
// RBAC checks and trivy without StrictHCL: 0 findings and exit 0 for both.
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
		{"wildcard ClusterRole", []string{"verify", "--tool", "kube-linter", wildcard}, ExitFindings, `"rule_id": "wildcard-in-rules"`, nil},
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
