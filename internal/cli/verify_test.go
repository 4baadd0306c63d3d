package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const securePod = `apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: prod
spec:
  automountServiceAccountToken: false
  securityContext:
    runAsNonRoot: true
    runAsUser: 10001
  containers:
  - name: web
    image: registry.k8s.io/nginx:1.27.0
    securityContext:
      allowPrivilegeEscalation: false
      readOnlyRootFilesystem: true
      runAsNonRoot: true
      runAsUser: 10001
      capabilities:
        drop: ["ALL"]
    resources:
      requests: {cpu: 100m, memory: 64Mi}
      limits: {cpu: 500m, memory: 128Mi}
`

func TestVerifyCommand(t *testing.T) {
	dir := t.TempDir()
	insecure := filepath.Join(dir, "bad.yaml")
	os.WriteFile(insecure, []byte(strings.Replace(securePod, "allowPrivilegeEscalation: false", "privileged: true", 1)), 0o644)
	secure := filepath.Join(t.TempDir(), "good.yaml")
	os.WriteFile(secure, []byte(securePod), 0o644)

	code, stdout, stderr := runCLI(t, "verify", "--tool", "kube-linter", insecure)
	if code != 1 {
		t.Fatalf("insecure: exit %d, stderr %s", code, stderr)
	}
	var res []verifyResult
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("json output: %v\n%s", err, stdout)
	}
	found := false
	for _, r := range res {
		for _, f := range r.Findings {
			if f.ID() == "kube-linter/privileged-container" {
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("privileged container not reported: %s", stdout)
	}

	code, stdout, stderr = runCLI(t, "verify", "--tool", "kube-linter", "--format", "table", secure)
	if code != 0 {
		t.Fatalf("secure: exit %d\n%s\n%s", code, stdout, stderr)
	}

	for _, args := range [][]string{
		{"verify"},
		{"verify", "--tool", "semgrep", secure},
		{"verify", "--format", "xml", secure},
	} {
		if code, _, _ := runCLI(t, args...); code != 2 {
			t.Errorf("%v: exit %d, want 2", args, code)
		}
	}
	if code, _, stderr := runCLI(t, "verify", filepath.Join(dir, "missing.yaml")); code != 2 || !strings.Contains(stderr, "missing.yaml") {
		t.Errorf("missing file: exit %d, stderr %q", code, stderr)
	}
}
