package policypack

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyPack copies an embedded pack to a temporary directory and applies
// edits: file name → new content ("" deletes the file).
func copyPack(t *testing.T, id string, edits map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	sub, err := fs.Sub(packsFS, "packs/"+id)
	if err != nil {
		t.Fatal(err)
	}
	err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(p)), 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, p), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, content := range edits {
		p := filepath.Join(dir, name)
		if content == "" {
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func readEmbedded(t *testing.T, id, name string) string {
	t.Helper()
	b, err := packsFS.ReadFile("packs/" + id + "/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLoadDirReportsProblems(t *testing.T) {
	const id = "payments-k8s"
	md, js, rego := readEmbedded(t, id, "policy.md"), readEmbedded(t, id, "pack.json"), readEmbedded(t, id, "policy.rego")
	gen := readEmbedded(t, id, "generator.json")
	extraClause := md + "8. [PAY-EXTRA] Every workload must be reviewed.\n"
	extraMeta := strings.Replace(js, `{"id": "PAY-NO-ESCALATION"`, `{"id": "PAY-EXTRA", "type": "requirement", "severity": "low"},
    {"id": "PAY-NO-ESCALATION"`, 1)
	extraMetaOrdered := strings.Replace(js, `"scanner_ids": ["kube-linter/privilege-escalation-container"]}`, `"scanner_ids": ["kube-linter/privilege-escalation-container"]},
    {"id": "PAY-EXTRA", "type": "requirement", "severity": "low"}`, 1)
	tests := []struct {
		name  string
		edits map[string]string
		want  []string
	}{
		{"rego syntax error names file and line", map[string]string{"policy.rego": rego + "\nviolations contains x if {\n\tx := \n}\n"}, []string{"policy.rego:", "rego_parse_error"}},
		{"rego compile error names file and line", map[string]string{"policy.rego": rego + "\nviolations contains v(\"PAY-LABELS\", \"x\") if {\n\tno_such_rule[_]\n}\n"}, []string{"policy.rego:", "rego_unsafe_var_error", "Rego does not compile"}},
		{"clause without rule", map[string]string{"policy.md": extraClause, "pack.json": extraMetaOrdered}, []string{"clause PAY-EXTRA", "has no rule"}},
		{"rule without clause", map[string]string{"policy.rego": rego + "\nviolations contains v(\"PAY-GHOST\", \"x\") if input.kind == \"Secret\"\n"}, []string{"policy.rego:", "produces clause PAY-GHOST", "does not define"}},
		{"clause missing from pack.json", map[string]string{"policy.md": extraClause}, []string{"disagree", "PAY-EXTRA", "missing from"}},
		{"clause missing from policy.md", map[string]string{"pack.json": extraMetaOrdered}, []string{"disagree", "PAY-EXTRA", "is not in"}},
		{"clause order differs", map[string]string{"policy.md": extraClause, "pack.json": extraMeta}, []string{"different order"}},
		{"duplicate clause id in policy.md", map[string]string{"policy.md": strings.Replace(md, "[PAY-REGISTRY]", "[PAY-DIGEST]", 1)}, []string{"duplicate clause id PAY-DIGEST"}},
		{"duplicate clause id in pack.json", map[string]string{"pack.json": strings.Replace(js, `"id": "PAY-REGISTRY"`, `"id": "PAY-DIGEST"`, 1)}, []string{"duplicate clause id PAY-DIGEST"}},
		{"bad fixture type", map[string]string{"pack.json": strings.Replace(js, `"fixture_type": "k8s"`, `"fixture_type": "helm"`, 1)}, []string{`fixture_type "helm"`}},
		{"bad clause type", map[string]string{"pack.json": strings.Replace(js, `"type": "requirement"`, `"type": "advice"`, 1)}, []string{`type "advice"`}},
		{"exception without scanner ids", map[string]string{"pack.json": strings.Replace(js, `"type": "exception", "severity": "med", "scanner_ids": ["kube-linter/no-read-only-root-fs"]`, `"type": "exception", "severity": "med"`, 1)}, []string{"needs the scanner ids"}},
		{"unknown pack.json field", map[string]string{"pack.json": strings.Replace(js, `"title"`, `"titel": "x", "title"`, 1)}, []string{"unknown field"}},
		{"title mismatch", map[string]string{"policy.md": strings.Replace(md, "# Payments platform workload policy", "# Payments policy", 1)}, []string{"title"}},
		{"oversized rego", map[string]string{"policy.rego": rego + "\n# " + strings.Repeat("x", MaxRegoFileBytes) + "\n"}, []string{"byte limit for a Rego file"}},
		{"no policy.md", map[string]string{"policy.md": ""}, []string{"no policy.md"}},
		{"no rego", map[string]string{"policy.rego": "", "policy_test.rego": ""}, []string{"no .rego files"}},
		{"no violations rule", map[string]string{"policy.rego": "package svbench.policypack\n\nimport rego.v1\n\ndeny contains \"PAY-DIGEST PAY-REGISTRY PAY-LABELS PAY-NONROOT PAY-SECRET-ENV PAY-READONLY-FS PAY-NO-ESCALATION\" if false\n", "policy_test.rego": "", "generator.json": ""}, []string{"no rule violations"}},
		{"violations is not a set", map[string]string{"policy.rego": strings.Replace(rego, "package svbench.policypack\n", "package svbench.policypack\n\nviolations := {}\n", 1)}, []string{"rego_type_error"}},
		{"failing rego test", map[string]string{"policy_test.rego": readEmbedded(t, id, "policy_test.rego") + "\ntest_wrong if count(clauses(deployment(\"payments\", pinned, true))) == 1\n"}, []string{"Rego tests fail", "policy_test.rego:", "test_wrong"}},
		{"mutation declares the wrong clauses", map[string]string{"generator.json": strings.Replace(gen, `"breaks": ["PAY-REGISTRY"]`, `"breaks": ["PAY-DIGEST"]`, 1)}, []string{"docker-hub-image", "the Rego reports [PAY-REGISTRY]", "declares [PAY-DIGEST]"}},
		{"base not compliant", map[string]string{"bases/service.yaml": strings.Replace(readEmbedded(t, id, "bases/service.yaml"), "runAsUser: 10001\n        runAsGroup: 10001\n        seccompProfile:\n          type: RuntimeDefault\n      containers:\n        - name: {{app}}", "runAsUser: 0\n        runAsGroup: 10001\n        seccompProfile:\n          type: RuntimeDefault\n      containers:\n        - name: {{app}}", 1)}, []string{"base service", "is not compliant", "PAY-NONROOT"}},
		{"clause never broken by the generator", map[string]string{"generator.json": removeMutation(t, gen, "escalation-unset")}, []string{"no mutation violates clause PAY-NO-ESCALATION"}},
		{"fix edits that leave the violation", map[string]string{"generator.json": strings.Replace(gen, `"replace": "            readOnlyRootFilesystem: true`, `"replace": "            readOnlyRootFilesystem: false`, 1)}, []string{"job-renamed", "its fix edits leave", "PAY-READONLY-FS"}},
		{"fix edit that finds nothing", map[string]string{"generator.json": strings.Replace(gen, `"fix": [{"find": "            readOnlyRootFilesystem: false`, `"fix": [{"find": "            readOnlyRootFilesystem: maybe`, 1)}, []string{"job-renamed", "fix[0]", "not in the file"}},
		{"unknown placeholder", map[string]string{"generator.json": strings.Replace(gen, "deploy/payments/{{app}}.yaml", "deploy/{{region}}/{{app}}.yaml", 1)}, []string{"{{region}}", "not in vars"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadDir(copyPack(t, id, tc.edits))
			if err == nil {
				t.Fatal("loaded without error")
			}
			t.Log(err)
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not mention %q", err, w)
				}
			}
		})
	}
}

// removeMutation drops one mutation object from generator.json text.
func removeMutation(t *testing.T, gen, name string) string {
	t.Helper()
	start := strings.Index(gen, `{"name": "`+name+`"`)
	if start < 0 {
		t.Fatalf("mutation %s not found", name)
	}
	end := strings.Index(gen[start:], "]}")
	if end < 0 {
		t.Fatal("mutation end not found")
	}
	out := gen[:start] + gen[start+end+2:]
	// Drop the comma that separated it from its predecessor.
	out = strings.Replace(out, "},\n    \n  ]", "}\n  ]", 1)
	return strings.Replace(out, ",\n    \n", "\n", 1)
}

func TestLoadDirAcceptsACopy(t *testing.T) {
	for _, p := range Embedded() {
		q, err := LoadDir(copyPack(t, p.ID(), nil))
		if err != nil {
			t.Fatalf("%s: %v", p.ID(), err)
		}
		if q.ID() != p.ID() || q.Document() != p.Document() || len(q.Clauses()) != len(p.Clauses()) {
			t.Errorf("%s: copy differs", p.ID())
		}
	}
	if _, err := LoadDir(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing directory loaded")
	}
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadDir(f); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("a file loaded as a pack: %v", err)
	}
}
