package policy

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/svbench/svbench/verify"
)

func newEngine(t testing.TB, dirs ...string) *Engine {
	t.Helper()
	e, err := New(context.Background(), Options{Dirs: dirs})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func readFile(t testing.TB, path string) verify.File {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return verify.File{Path: filepath.Base(path), Content: b}
}

func ruleIDs(fs []verify.Finding) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range fs {
		if !seen[f.RuleID] {
			seen[f.RuleID] = true
			out = append(out, f.RuleID)
		}
	}
	slices.Sort(out)
	return out
}

func TestKubernetesBundle(t *testing.T) {
	e := newEngine(t)
	tests := []struct {
		file string
		want []string
	}{
		{"testdata/k8s/insecure.yaml", []string{
			"K8S_DANGEROUS_CAPABILITY", "K8S_DOCKER_SOCK", "K8S_HOST_PORT", "K8S_LB_NO_SOURCE_RANGES",
			"K8S_NETPOL_NO_EGRESS", "K8S_PRIVILEGED_ESCALATION", "K8S_RBAC_WILDCARD", "K8S_SA_TOKEN_AUTOMOUNT",
			"K8S_SECRET_IN_ENV", "K8S_SENSITIVE_HOSTPATH", "K8S_UNTRUSTED_REGISTRY",
		}},
		{"testdata/k8s/clean.yaml", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := Kubernetes{e}.Verify(context.Background(), []verify.File{readFile(t, tt.file)})
			if err != nil {
				t.Fatal(err)
			}
			if ids := ruleIDs(got); strings.Join(ids, ",") != strings.Join(tt.want, ",") {
				t.Errorf("rule ids = %v\nwant %v", ids, tt.want)
			}
			for _, f := range got {
				if f.Tool != "opa" || f.Line == 0 || f.Object.Kind == "" || f.Message == "" {
					t.Errorf("incomplete finding %+v", f)
				}
			}
		})
	}
}

func TestKubernetesFindingDetails(t *testing.T) {
	e := newEngine(t)
	got, err := e.VerifyKubernetes(context.Background(), []verify.File{readFile(t, "testdata/k8s/insecure.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		sev  verify.Severity
		line int
		kind string
	}{
		"K8S_DOCKER_SOCK":         {verify.SeverityHigh, 1, "Deployment"},
		"K8S_RBAC_WILDCARD":       {verify.SeverityHigh, 35, "ClusterRole"},
		"K8S_NETPOL_NO_EGRESS":    {verify.SeverityLow, 44, "NetworkPolicy"},
		"K8S_LB_NO_SOURCE_RANGES": {verify.SeverityMed, 52, "Service"},
	}
	for _, f := range got {
		w, ok := want[f.RuleID]
		if !ok {
			continue
		}
		if f.Severity != w.sev || f.Line != w.line || f.Object.Kind != w.kind {
			t.Errorf("%s: got severity %s line %d kind %s, want %s %d %s", f.RuleID, f.Severity, f.Line, f.Object.Kind, w.sev, w.line, w.kind)
		}
		delete(want, f.RuleID)
	}
	for id := range want {
		t.Errorf("missing %s", id)
	}
}

func TestTerraformBundle(t *testing.T) {
	e := newEngine(t)
	tests := []struct {
		file string
		want []string
	}{
		{"testdata/tf/insecure.tf", []string{
			"TF_AZURE_STORAGE_HTTP", "TF_EBS_UNENCRYPTED", "TF_GCS_UNIFORM_ACCESS_OFF", "TF_IAM_WILDCARD_ACTION",
			"TF_RDS_PUBLIC", "TF_RDS_UNENCRYPTED", "TF_S3_NO_LOGGING", "TF_S3_NO_PUBLIC_ACCESS_BLOCK",
			"TF_S3_PUBLIC_ACL", "TF_SG_OPEN_ADMIN",
		}},
		{"testdata/tf/clean.tf", nil},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, err := Terraform{e}.Verify(context.Background(), []verify.File{readFile(t, tt.file)})
			if err != nil {
				t.Fatal(err)
			}
			if ids := ruleIDs(got); strings.Join(ids, ",") != strings.Join(tt.want, ",") {
				t.Errorf("rule ids = %v\nwant %v", ids, tt.want)
			}
			for _, f := range got {
				if f.Resource == "" || f.Line == 0 || f.File != "insecure.tf" {
					t.Errorf("finding without location: %+v", f)
				}
			}
		})
	}
}

func TestTerraformResourceLine(t *testing.T) {
	e := newEngine(t)
	got, err := e.VerifyTerraform(context.Background(), []verify.File{readFile(t, "testdata/tf/insecure.tf")})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got {
		if f.RuleID == "TF_SG_OPEN_ADMIN" {
			if f.Resource != "aws_security_group.admin" || f.Line != 6 || f.Severity != verify.SeverityHigh {
				t.Errorf("TF_SG_OPEN_ADMIN = %+v, want aws_security_group.admin at line 6, high", f)
			}
			return
		}
	}
	t.Error("TF_SG_OPEN_ADMIN not found")
}

func TestUserPolicyDir(t *testing.T) {
	e := newEngine(t, "testdata/userpolicy")
	k, err := e.VerifyKubernetes(context.Background(), []verify.File{readFile(t, "testdata/k8s/clean.yaml")})
	if err != nil {
		t.Fatal(err)
	}
	if ids := ruleIDs(k); len(ids) != 1 || ids[0] != "TEAM_LABEL" {
		t.Errorf("kubernetes user policy: got %v, want [TEAM_LABEL]", ids)
	}
	tf, err := e.VerifyTerraform(context.Background(), []verify.File{readFile(t, "testdata/tf/clean.tf")})
	if err != nil {
		t.Fatal(err)
	}
	if len(tf) != 1 || tf[0].RuleID != "TF_TAGS" || tf[0].Severity != verify.SeverityHigh || tf[0].RawSeverity != "critical" || tf[0].Line != 5 {
		t.Errorf("terraform v0 user policy: got %+v", tf)
	}
}

func TestPolicyErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "conflict.rego"), []byte("package svbench.kubernetes\n\ndeny := 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir, want string
	}{
		{"syntax error names the file", "testdata/badpolicy", "broken.rego"},
		{"missing dir", "testdata/nope", "no such file"},
		{"not a directory", "testdata/tf/clean.tf", "not a directory"},
		{"conflicting rule kinds", dir, "conflict.rego"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(context.Background(), Options{Dirs: []string{tt.dir}})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want mention of %q", err, tt.want)
			}
		})
	}
}

func TestHostileInput(t *testing.T) {
	e := newEngine(t)
	bomb := "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
	for i := 'b'; i <= 'k'; i++ {
		prev := string(i - 1)
		bomb += string(i) + ": &" + string(i) + " [*" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + ", *" + prev + "]\n"
	}
	tests := []struct {
		name    string
		file    verify.File
		wantErr string
	}{
		{"alias bomb", verify.File{Path: "b.yaml", Content: []byte(bomb)}, "alias"},
		{"invalid yaml", verify.File{Path: "x.yaml", Content: []byte("kind: Pod\n  bad: [\n")}, "x.yaml"},
		{"binary junk", verify.File{Path: "x.yaml", Content: []byte{0xff, 0xfe, 0, 1, 2}}, "x.yaml"},
		{"non-kubernetes yaml", verify.File{Path: "c.yaml", Content: []byte("foo: bar\nlist: [1, 2]\n")}, ""},
		{"scalar document", verify.File{Path: "c.yaml", Content: []byte("just a string\n---\n- 1\n")}, ""},
		{"invalid hcl", verify.File{Path: "m.tf", Content: []byte("resource \"a\" {\n  x = \n")}, "m.tf:"},
		{"deep hcl", verify.File{Path: "d.tf", Content: []byte("x = " + strings.Repeat("[", 10000))}, "nested deeper"},
		{"deep hcl conditionals", verify.File{Path: "d.tf", Content: []byte("x = " + strings.Repeat("a ? b : ", 30000) + "c\n")}, "nested deeper than 256 levels"},
		{"deep yaml", verify.File{Path: "d.yaml", Content: []byte("a: " + strings.Repeat("[", 80000) + "\n")}, "nested deeper than 256 levels"},
		{"hcl junk", verify.File{Path: "j.tf", Content: []byte{0x00, 0xff, '{'}}, "j.tf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []verify.Finding
			var err error
			if strings.HasSuffix(tt.file.Path, ".tf") {
				got, err = e.VerifyTerraform(context.Background(), []verify.File{tt.file})
			} else {
				got, err = e.VerifyKubernetes(context.Background(), []verify.File{tt.file})
			}
			if tt.wantErr == "" {
				if err != nil || len(got) != 0 {
					t.Fatalf("got %v, %v; want no findings and no error", got, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want mention of %q", err, tt.wantErr)
			}
		})
	}
}

func TestConcurrentEval(t *testing.T) {
	e := newEngine(t)
	k8s := readFile(t, "testdata/k8s/insecure.yaml")
	tf := readFile(t, "testdata/tf/insecure.tf")
	want, _ := e.VerifyKubernetes(context.Background(), []verify.File{k8s})
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 10; j++ {
				got, err := e.VerifyKubernetes(context.Background(), []verify.File{k8s})
				if err != nil || len(got) != len(want) {
					t.Errorf("concurrent eval: %d findings, %v", len(got), err)
					return
				}
				if _, err := e.VerifyTerraform(context.Background(), []verify.File{tf}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}
