package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDataGenerateE2(t *testing.T) {
	dir := t.TempDir()
	cmd := newDataGenerateE2Cmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--n", "40", "--seed", "3", "--out", dir})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, s := range []string{"train", "dev", "test"} {
		b, err := os.ReadFile(filepath.Join(dir, s+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		total += strings.Count(string(b), "\n")
	}
	if total != 40 {
		t.Errorf("%d rows written, want 40", total)
	}
	if _, err := os.Stat(filepath.Join(dir, "card.json")); err != nil {
		t.Error(err)
	}
	bad := newDataGenerateE2Cmd()
	bad.SetArgs([]string{"--n", "0", "--out", dir})
	if err := bad.Execute(); err == nil {
		t.Error("--n 0 accepted")
	} else if _, ok := err.(usageError); !ok {
		t.Errorf("want a usage error, got %v", err)
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
	cmd := newDataBuildE2Cmd()
	var buf bytes.Buffer
	cmd.SetOut(&buf)
	cmd.SetErr(&buf)
	cmd.SetArgs([]string{"--k8s-root", k8s, "--tf-root", tf, "--out", out})
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatal(err)
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
		t.Fatalf("%d rows, want 3 (two pods split from a.yaml, dup dropped, one .tf): %s", len(rows), buf.String())
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
