package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/envs/configaudit"
)

func readE2Rows(t *testing.T, dir string) map[string][]configaudit.Row {
	t.Helper()
	out := map[string][]configaudit.Row{}
	for _, s := range []string{"train", "dev", "test"} {
		b, err := os.ReadFile(filepath.Join(dir, s+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l == "" {
				continue
			}
			var r configaudit.Row
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			out[s] = append(out[s], r)
		}
	}
	return out
}

func TestDataGenerateE2(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runData(t, "data", "generate", "e2", "--n", "40", "--seed", "3", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, stdout, stderr)
	}
	total := 0
	groupSplit := map[string]string{}
	for s, rows := range readE2Rows(t, dir) {
		total += len(rows)
		for _, r := range rows {
			g := r.GroupKey()
			if prev, ok := groupSplit[g]; ok && prev != s {
				t.Errorf("group %s is in %s and %s", g, prev, s)
			}
			groupSplit[g] = s
		}
	}
	if total != 40 {
		t.Errorf("%d rows written, want 40", total)
	}
	if !strings.Contains(stdout, "40 verified") {
		t.Errorf("output does not say the rows were verified: %s", stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "card.json")); err != nil {
		t.Error(err)
	}
	// svbench's own checks accept what svbench generated.
	if code, stdout, _ := runData(t, "data", "validate", dir); code != 0 || !strings.Contains(stdout, "result: ok, no problems and no warnings") {
		t.Errorf("validate: exit %d\n%s", code, stdout)
	}
}

// TestDataGenerateE2Shares: --tf-share 0 means Kubernetes only (it used to
// become 0.45) and 1 Terraform only (it used to be refused).
func TestDataGenerateE2Shares(t *testing.T) {
	for _, tc := range []struct {
		share  string
		wantTF int
	}{{"0", 0}, {"1", 8}} {
		dir := t.TempDir()
		code, stdout, stderr := runData(t, "data", "generate", "e2", "--n", "8", "--tf-share", tc.share, "--out", dir)
		if code != 0 {
			t.Fatalf("--tf-share %s: exit %d: %s %s", tc.share, code, stdout, stderr)
		}
		tf := 0
		for _, rows := range readE2Rows(t, dir) {
			for _, r := range rows {
				if r.FixtureType == configaudit.FixtureTF {
					tf++
				}
			}
		}
		if tf != tc.wantTF {
			t.Errorf("--tf-share %s: %d Terraform rows of 8, want %d", tc.share, tf, tc.wantTF)
		}
	}
}

func TestDataGenerateE2Usage(t *testing.T) {
	capa, err := configaudit.Capacity(configaudit.DefaultGenOptions(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--n", "0"}, "--n must be positive"},
		{[]string{"--tf-share", "-0.1"}, "--tf-share must be in [0, 1]"},
		{[]string{"--tf-share", "1.5"}, "--tf-share must be in [0, 1]"},
		{[]string{"--tf-share", "NaN"}, "--tf-share must be in [0, 1]"},
		{[]string{"--clean-share", "1.01"}, "--clean-share must be in [0, 1]"},
		{[]string{"--max-mutations", "0"}, "--max-mutations must be in [1, 5]"},
		{[]string{"--max-mutations", "6"}, "--max-mutations must be in [1, 5]"},
		// More rows than can be distinct: refused up front, naming the maximum.
		{[]string{"--n", fmt.Sprint(capa.MaxN + 1)}, fmt.Sprintf("at most %d distinct rows", capa.MaxN)},
	}
	for _, tc := range cases {
		args := append([]string{"data", "generate", "e2", "--out", t.TempDir()}, tc.args...)
		code, _, stderr := runData(t, args...)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, stderr, ExitUsage, tc.want)
		}
	}
}

func TestDataBuildE2(t *testing.T) {
	root := t.TempDir()
	k8s := filepath.Join(root, "k8s")
	tf := filepath.Join(root, "tf")
	for _, d := range []string{k8s, tf} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	pod := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n    - name: web\n      image: nginx:latest\n"
	multi := pod + "---\n" + strings.Replace(pod, "name: web\nspec", "name: api\nspec", 1)
	files := map[string]string{
		filepath.Join(k8s, "a.yaml"):    multi,
		filepath.Join(k8s, "dup.yaml"):  pod, // same content as a.yaml's first document
		filepath.Join(k8s, "notes.txt"): "ignored",
		filepath.Join(tf, "main.tf"):    "resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"x\"\n}\n",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(root, "out")
	code, stdout, stderr := runCLI(t, "data", "build", "e2", "--k8s-root", k8s, "--tf-root", tf, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var rows []map[string]any
	for _, s := range []string{"train", "dev", "test"} {
		b, _ := os.ReadFile(filepath.Join(out, s+".jsonl"))
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			if l == "" {
				continue
			}
			var r map[string]any
			if err := json.Unmarshal([]byte(l), &r); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, r)
		}
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3 (two pods split from a.yaml, dup dropped, one .tf): %s%s", len(rows), stdout, stderr)
	}
	labelled := false
	for _, r := range rows {
		exp := r["labels"].(map[string]any)["expected"].([]any)
		for _, e := range exp {
			if e.(map[string]any)["id"] == "kube-linter/latest-tag" {
				labelled = true
			}
		}
	}
	if !labelled {
		t.Error("pods were not labelled by kube-linter")
	}
}
