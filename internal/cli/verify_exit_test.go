package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestVerifyExitCodesAndContexts(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A Deployment whose ServiceAccount is defined in a sibling file: clean
	// when the folder is linted together (the default for a directory),
	// "non-existent-service-account" when each file is linted alone.
	write("app/sa.yaml", "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: app\n  namespace: web\n")
	write("app/deploy.yaml", `apiVersion: apps/v1
kind: Deployment
metadata:
  name: app
  namespace: web
spec:
  replicas: 2
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      serviceAccountName: app
      containers:
      - name: app
        image: registry.example/app:1.2.3
`)
	big := write("big.yaml", strings.Repeat("# x\n", (maxVerifyFileBytes/4)+1))

	code, out, _ := runCLI(t, "verify", "--tool", "kube-linter", filepath.Join(dir, "app"))
	if strings.Contains(out, "non-existent-service-account") {
		t.Fatalf("a directory was not linted as one context (exit %d):\n%s", code, out)
	}
	_, out, _ = runCLI(t, "verify", "--tool", "kube-linter", "--context", "file", filepath.Join(dir, "app"))
	if !strings.Contains(out, "non-existent-service-account") {
		t.Fatalf("--context file should lint each file alone:\n%s", out)
	}
	if code, _, _ := runCLI(t, "verify", "--tool", "kube-linter", "--context", "file", filepath.Join(dir, "app")); code != ExitFindings {
		t.Fatalf("findings: exit %d, want %d", code, ExitFindings)
	}
	code, _, stderr := runCLI(t, "verify", "--tool", "trivy", filepath.Join(dir, "app"))
	if code != ExitUsage || !strings.Contains(stderr, "Terraform") {
		t.Fatalf("trivy on YAML: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "verify", big)
	if code != ExitCheckFailed {
		t.Fatalf("unverifiable file: exit %d, want %d: %s", code, ExitCheckFailed, stderr)
	}
}
