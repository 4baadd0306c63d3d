package cli

import (
	"bytes"
	"context"
	"github.com/svbench/svbench/env"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func runE4Cmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	// E4's pipelines are its registration's (envs/phishing/data.go),
	// reached through the command tree like any environment's.
	full := append([]string{"data", "import", "e4"}, args...)
	if args[0] == "generate" {
		full = append([]string{"data", "generate", "e4"}, args[1:]...)
	}
	cmd := newRootCmd(&stdout, &stderr)
	cmd.SetArgs(full)
	err := cmd.ExecuteContext(context.Background())
	return stdout.String(), stderr.String(), err
}

func TestDataImportE4(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "z.csv")
	if err := os.WriteFile(src, []byte(",Email Text,Email Type\n0,hello bob,Safe Email\n1,verify now,Phishing Email\n2,x,Weird\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out", "e4.jsonl")
	stdout, stderr, err := runE4Cmd(t, "--format", "zefang", src, "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "2 rows (Legitimate 1, Phishing 1), 1 bad rows skipped") || !strings.Contains(stderr, "line 4") {
		t.Errorf("stdout %q stderr %q", stdout, stderr)
	}
	b, _ := os.ReadFile(out)
	if n := bytes.Count(b, []byte("\n")); n != 2 {
		t.Errorf("wrote %d rows", n)
	}

	// Usage errors exit 2; too many bad rows is a plain failure and leaves no file.
	for _, args := range [][]string{{"--format", "pdf", src, "--out", out}, {"--format", "eml", dir, "--out", out}, {"--format", "csv", src}} {
		_, _, err := runE4Cmd(t, args...)
		if !env.IsUsage(err) {
			t.Errorf("%v: want usage error, got %v", args, err)
		}
	}
	bad := filepath.Join(dir, "bad.jsonl")
	_, _, err = runE4Cmd(t, "--format", "zefang", src, "--out", bad, "--max-bad-rows", "0")
	if err == nil || !strings.Contains(err.Error(), "max-bad-rows") {
		t.Errorf("want max-bad-rows failure, got %v", err)
	}
	if _, statErr := os.Stat(bad); statErr == nil {
		t.Error("failed import left an output file")
	}

	gen := filepath.Join(dir, "gen.jsonl")
	if _, _, err := runE4Cmd(t, "generate", "--n", "24", "--seed", "3", "--out", gen); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(gen)
	if n := bytes.Count(b, []byte("\n")); n != 24 {
		t.Errorf("generated %d rows", n)
	}
}

// TestDataImportE4LabelMapping: the default table's decisions ("spam" →
// Phishing) are printed with their counts, --label-map overrides them and
// says so, and --help documents the table.
func TestDataImportE4LabelMapping(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "in.csv")
	os.WriteFile(src, []byte("text,label\nhi,ham\nbuy now,spam\nwin big,SPAM \nreset,phishing\n"), 0o644)
	out := filepath.Join(dir, "out.jsonl")
	stdout, _, err := runE4Cmd(t, "--format", "csv", src, "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`"spam"\s+Phishing\s+default table\s+2\n`),
		regexp.MustCompile(`"ham"\s+Legitimate\s+default table\s+1\n`),
		regexp.MustCompile(`"phishing"\s+Phishing\s+default table\s+1\n`),
		regexp.MustCompile(`--label-map RAW=Label`),
	} {
		if !want.MatchString(stdout) {
			t.Errorf("output lacks %s:\n%s", want, stdout)
		}
	}
	stdout, _, err = runE4Cmd(t, "--format", "csv", "--label-map", "spam=Abstain", src, "--out", out)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`"spam"\s+Abstain\s+--label-map\s+2\n`).MatchString(stdout) || !strings.Contains(stdout, "Abstain 2") {
		t.Errorf("override not reported:\n%s", stdout)
	}
	// Fixed-label formats say where the label came from too.
	mb := filepath.Join(dir, "x.mbox")
	os.WriteFile(mb, []byte("From a@b Mon Jan 1 00:00:00 2024\nFrom: a@b\nSubject: hi\n\nbody\n"), 0o644)
	stdout, _, err = runE4Cmd(t, "--format", "mbox", "--label", "Legitimate", mb, "--out", out)
	if err != nil || !regexp.MustCompile(`\(mbox input has no labels\)\s+Legitimate\s+--label\s+1\n`).MatchString(stdout) {
		t.Errorf("mbox: %v\n%s", err, stdout)
	}
	help, _, _ := runE4Cmd(t, "--help")
	if !regexp.MustCompile(`Phishing\s+"phishing", "phishing email", "phish", "spam"`).MatchString(help) {
		t.Errorf("--help does not document the default table:\n%s", help)
	}
}
