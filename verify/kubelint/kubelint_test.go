package kubelint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/yamlsafe"
)

func files(t testing.TB, names ...string) []verify.File {
	t.Helper()
	var out []verify.File
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, verify.File{Path: n, Content: b})
	}
	return out
}

func ids(fs []verify.Finding) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.RuleID)
	}
	slices.Sort(out)
	return out
}

func has(fs []verify.Finding, id string) bool {
	for _, f := range fs {
		if f.RuleID == id {
			return true
		}
	}
	return false
}

func TestKnownFindings(t *testing.T) {
	l, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		files  []string
		want   []string // rule ids that must be reported
		absent []string // rule ids that must not be
	}{
		{"privileged latest root pod", []string{"insecure-pod.yaml"},
			[]string{"privileged-container", "latest-tag", "run-as-non-root", "no-read-only-root-fs", "privilege-escalation-container", "unset-cpu-requirements", "unset-memory-requirements"}, nil},
		{"hardened deployment", []string{"deployment.yaml"}, nil,
			[]string{"privileged-container", "latest-tag", "run-as-non-root", "no-read-only-root-fs", "unset-cpu-requirements", "unset-memory-requirements", "drop-net-raw-capability"}},
		{"service alone is dangling", []string{"service.yaml"}, []string{"dangling-service"}, nil},
		{"service with its deployment in one context", []string{"service.yaml", "deployment.yaml"}, nil, []string{"dangling-service"}},
		{"multi-document file", []string{"multi.yaml"}, []string{"host-network", "latest-tag"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.Verify(context.Background(), files(t, tt.files...))
			if err != nil {
				t.Fatal(err)
			}
			for _, id := range tt.want {
				if !has(got, id) {
					t.Errorf("missing %s in %v", id, ids(got))
				}
			}
			for _, id := range tt.absent {
				if has(got, id) {
					t.Errorf("unexpected %s in %v", id, ids(got))
				}
			}
			for _, f := range got {
				if f.Tool != "kube-linter" || f.Severity != verify.SeverityMed || f.Object.Kind == "" || f.Object.Name == "" || f.Line == 0 || f.Remediation == "" {
					t.Errorf("incomplete finding %+v", f)
				}
			}
		})
	}
}

func TestFindingLocation(t *testing.T) {
	l, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := l.Verify(context.Background(), files(t, "multi.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got {
		if f.RuleID == "host-network" {
			if f.Line != 10 || f.Object != (verify.Object{Kind: "Pod", Name: "debug"}) || f.File != "multi.yaml" || f.ID() != "kube-linter/host-network" {
				t.Errorf("host-network finding = %+v, want Pod/debug at multi.yaml:10", f)
			}
			return
		}
	}
	t.Fatal("host-network not reported")
}

func TestOptions(t *testing.T) {
	pod := files(t, "insecure-pod.yaml")
	all, err := New(Options{AllChecks: true})
	if err != nil {
		t.Fatal(err)
	}
	if contains(all.Checks(), "schema-validation") {
		t.Error("AllChecks enabled schema-validation, which needs the network")
	}
	def, _ := New(Options{})
	if len(all.Checks()) <= len(def.Checks()) {
		t.Errorf("AllChecks has %d checks, defaults %d", len(all.Checks()), len(def.Checks()))
	}
	got, err := all.Verify(context.Background(), pod)
	if err != nil {
		t.Fatal(err)
	}
	if !has(got, "required-label-owner") {
		t.Errorf("AllChecks should report required-label-owner, got %v", ids(got))
	}
	ex, err := New(Options{Exclude: []string{"latest-tag"}, Include: []string{"privileged-ports"}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ = ex.Verify(context.Background(), pod)
	if has(got, "latest-tag") {
		t.Error("excluded check still reported")
	}
	if _, err := New(Options{Include: []string{"no-such-check"}}); err == nil || !strings.Contains(err.Error(), "no-such-check") {
		t.Errorf("unknown check: err = %v", err)
	}
}

func TestHostileInput(t *testing.T) {
	l, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	bomb := "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n"
	prev := "a"
	for _, n := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		bomb += n + ": &" + n + " [" + strings.Repeat("*"+prev+",", 8) + "*" + prev + "]\n"
		prev = n
	}
	big := "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  blob: \"" + strings.Repeat("x", 20<<20) + "\"\n"
	tests := []struct {
		name    string
		content string
		limit   bool   // want a yamlsafe limit error
		errSub  string // want an error mentioning this
		empty   bool   // want no findings and no error
	}{
		{name: "alias bomb", content: bomb, limit: true},
		{name: "20 MB manifest", content: big, limit: true},
		{name: "invalid yaml", content: "apiVersion: v1\nkind: Pod\nmetadata: {name: [\n", errSub: "x.yaml:"},
		{name: "binary junk", content: "\x00\x01\xff\xfe garbage", errSub: "binary"},
		{name: "non-kubernetes yaml", content: "name: my-app\nversion: 3\ndeps: [a, b]\n", empty: true},
		{name: "comment only", content: "# nothing here\n---\n# still nothing\n", empty: true},
		{name: "kind without apiVersion", content: "kind: Pod\nmetadata: {name: x}\n", empty: true},
		{name: "wrong field types", content: "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: 5}\n", empty: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := l.Verify(context.Background(), []verify.File{{Path: "x.yaml", Content: []byte(tt.content)}})
			switch {
			case tt.limit:
				if !errors.Is(err, yamlsafe.ErrLimit) {
					t.Fatalf("err = %v, want a limit error", err)
				}
			case tt.errSub != "":
				if err == nil || !strings.Contains(err.Error(), tt.errSub) {
					t.Fatalf("err = %v, want mention of %q", err, tt.errSub)
				}
			case tt.empty:
				if err != nil || len(got) != 0 {
					t.Fatalf("got %v, %v; want nothing", ids(got), err)
				}
			}
		})
	}
}

func TestInvalidReported(t *testing.T) {
	l, _ := New(Options{})
	res, err := l.Lint(context.Background(), []verify.File{{Path: "c.yaml", Content: []byte("a: 1\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: prod}\n")}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Objects != 1 || len(res.Invalid) != 1 || res.Invalid[0].Line != 1 {
		t.Fatalf("objects %d invalid %+v", res.Objects, res.Invalid)
	}
}
