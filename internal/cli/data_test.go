package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svbench/svbench/dataset"
)

func runData(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Execute(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// writeConnLog writes a small IoT-23 conn.log.labeled in the published
// layout (runs of spaces before the label columns).
func writeConnLog(t *testing.T, path string, rows int) {
	t.Helper()
	var b strings.Builder
	b.WriteString("#separator \\x09\n#fields\tts\tuid\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\tproto\tservice\tduration\torig_bytes\tresp_bytes\tconn_state\tlocal_orig\tlocal_resp\tmissed_bytes\thistory\torig_pkts\torig_ip_bytes\tresp_pkts\tresp_ip_bytes\ttunnel_parents   label   detailed-label\n")
	for i := 0; i < rows; i++ {
		label, detail := "Benign", "-"
		if i%2 == 0 {
			label, detail = "Malicious", "C&C-HeartBeat"
		}
		fmt.Fprintf(&b, "%d.5\tC%d\t192.168.1.%d\t%d\t10.0.0.%d\t%d\ttcp\t-\t1.25\t%d\t0\tS0\t-\t-\t0\tS\t1\t60\t0\t0\t-   %s   %s\n",
			1545000000+i, i, i%250, 40000+i, i%200, 1000+i, i*7, label, detail)
	}
	b.WriteString("#close\t2019\n")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDataImportValidateCommit(t *testing.T) {
	dir := t.TempDir()
	writeConnLog(t, filepath.Join(dir, "in", "CTU-IoT-Malware-Capture-7-1", "conn.log.labeled"), 400)
	out := filepath.Join(dir, "out")
	code, stdout, stderr := runData(t, "data", "import", "e1", "--format", "iot23", filepath.Join(dir, "in"), "--out", out, "--n", "200", "--seed", "9")
	if code != 0 {
		t.Fatalf("import exit %d: %s %s", code, stdout, stderr)
	}
	if !strings.Contains(stdout, "train 140, dev 30, test 30") {
		t.Errorf("import output %q", stdout)
	}
	for _, f := range []string{"train.jsonl", "dev.jsonl", "test.jsonl", "card.json", "README.md"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	code, stdout, _ = runData(t, "data", "validate", out, "--env", "e1")
	if code != 0 || !strings.Contains(stdout, "schema: network-logs") && !strings.Contains(stdout, "ok") {
		t.Fatalf("validate exit %d: %s", code, stdout)
	}

	// The commitment printed matches the card's.
	var card dataset.Card
	b, _ := os.ReadFile(filepath.Join(out, "card.json"))
	if err := json.Unmarshal(b, &card); err != nil {
		t.Fatal(err)
	}
	hashes := filepath.Join(dir, "hashes.txt")
	code, stdout, _ = runData(t, "data", "commit", filepath.Join(out, "test.jsonl"), "--hashes", hashes)
	if code != 0 || !strings.HasPrefix(stdout, card.Files["test"].Commitment+"  ") || !strings.HasSuffix(stdout, " 30 rows\n") {
		t.Errorf("commit: exit %d %q, card %s", code, stdout, card.Files["test"].Commitment)
	}
	if hb, _ := os.ReadFile(hashes); strings.Count(string(hb), "\n") != 30 {
		t.Errorf("hashes file has %d lines", strings.Count(string(hb), "\n"))
	}

	// Copy a test row into train: validate must fail with exit 1.
	test, _ := os.ReadFile(filepath.Join(out, "test.jsonl"))
	first := strings.SplitN(string(test), "\n", 2)[0]
	f, _ := os.OpenFile(filepath.Join(out, "train.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(first + "\n")
	f.Close()
	code, stdout, _ = runData(t, "data", "validate", out) // env taken from card.json
	if code != ExitFindings || !strings.Contains(stdout, "leakage") {
		t.Errorf("leaky splits: exit %d, output %s", code, stdout)
	}

	code, stdout, _ = runData(t, "data", "overlap", filepath.Join(out, "train.jsonl"), filepath.Join(out, "test.jsonl"), "--json")
	var ov struct {
		Exact int `json:"exact_b_in_a"`
	}
	if code != 0 || json.Unmarshal([]byte(stdout), &ov) != nil || ov.Exact != 1 {
		t.Errorf("overlap: exit %d %s", code, stdout)
	}
}

func TestDataImportUsage(t *testing.T) {
	cases := [][]string{
		{"data", "import", "e1", "--out", "x", "f"},
		{"data", "import", "e1", "--format", "pcap", "--out", "x", "f"},
		{"data", "import", "e1", "--format", "iot23", "f"},
		{"data", "import", "e1", "--format", "iot23", "--out", "x", "--balance", "2", "f"},
		{"data", "import", "e1", "--format", "iot23", "--out", "x", "--render", "fancy", "f"},
		{"data", "validate", "x", "--env", "nope"},
	}
	for _, args := range cases {
		if code, _, stderr := runData(t, args...); code != ExitUsage {
			t.Errorf("%v: exit %d (%s), want %d", args, code, stderr, ExitUsage)
		}
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "semi.csv")
	os.WriteFile(bad, []byte("a;b;c\n1;2;3\n"), 0o644)
	code, _, stderr := runData(t, "data", "import", "e1", "--format", "netflow-v2", bad, "--out", filepath.Join(dir, "o"))
	if code != ExitError || !strings.Contains(stderr, "wrong delimiter") {
		t.Errorf("wrong delimiter: exit %d %s", code, stderr)
	}
}

// readmeDataCommands returns the `svbench data …` lines of docs/data.md,
// comments stripped.
func readmeDataCommands(t *testing.T) [][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "data.md"))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for _, l := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(l, "svbench data ") {
			continue
		}
		l, _, _ = strings.Cut(l, "#")
		out = append(out, strings.Fields(l)[1:])
	}
	return out
}

// TestREADMEDataCommands runs docs/data.md's data commands that need no
// downloaded corpus or user files (build e1, generate e2, validate) as
// written, with data/… paths under a temporary directory, and validates
// both generated sets: svbench must accept what it makes. The E2 command
// scans 2,000 rows with kube-linter/trivy/OPA (~15 s on 2 cores); with -short
// or -race it runs with --n 200 instead.
func TestREADMEDataCommands(t *testing.T) {
	cmds := readmeDataCommands(t)
	dir := t.TempDir()
	want := map[string]bool{"build e1": false, "generate e2": false, "validate": false}
	var outs []string
	for _, args := range cmds {
		verb := args[1]
		if verb == "build" || verb == "generate" {
			verb += " " + args[2]
		}
		if _, ok := want[verb]; !ok {
			continue // imports and user-data builds need files the test does not have
		}
		want[verb] = true
		args = slices.Clone(args)
		for i, a := range args {
			if strings.HasPrefix(a, "data/") {
				args[i] = filepath.Join(dir, a)
			}
			if verb == "generate e2" && a == "--n" && (testing.Short() || raceEnabled) {
				args[i+1] = "200"
			}
		}
		if verb != "validate" {
			for i, a := range args {
				if a == "--out" {
					outs = append(outs, args[i+1])
				}
			}
		}
		code, stdout, stderr := runData(t, args...)
		if code != 0 {
			t.Fatalf("svbench %s: exit %d\n%s%s", strings.Join(args, " "), code, stdout, stderr)
		}
	}
	for verb, seen := range want {
		if !seen {
			t.Errorf("docs/data.md has no `svbench data %s` command", verb)
		}
	}
	for _, out := range outs {
		code, stdout, _ := runData(t, "data", "validate", out)
		if code != 0 || !strings.Contains(stdout, "result: ok") {
			t.Errorf("validate %s: exit %d\n%s", out, code, stdout)
		}
	}
}

// TestDataValidateReadable: validate prints aligned tables, abbreviates
// long labels (E2's answer object used to fill 32k-character lines as a Go
// map) and explains near leakage instead of ending in a bare "ok".
func TestDataValidateReadable(t *testing.T) {
	e2 := filepath.Join(t.TempDir(), "e2")
	if code, out, errOut := runData(t, "data", "generate", "e2", "--n", "60", "--seed", "5", "--out", e2); code != 0 {
		t.Fatalf("generate: %s %s", out, errOut)
	}
	check := func(name, out string) {
		t.Helper()
		for i, l := range strings.Split(out, "\n") {
			// Paths (temporary directories here) are printed whole; labels
			// and details are cut.
			if len(l) > 320 {
				t.Errorf("%s: line %d is %d characters: %.80s…", name, i+1, len(l), l)
			}
		}
		if strings.Contains(out, "map[") {
			t.Errorf("%s: a Go map is printed:\n%s", name, out)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if last := lines[len(lines)-1]; strings.TrimSpace(last) == "ok" {
			t.Errorf("%s: ends in a bare ok", name)
		}
	}
	code, out, _ := runData(t, "data", "validate", e2)
	check("e2", out)
	for _, want := range []string{"LABEL BALANCE", "{fixture_type: k8s, mutations: 1, oracle: 1}", "LEAKAGE: none", "result: ok, no problems and no warnings"} {
		if !strings.Contains(out, want) {
			t.Errorf("e2 output lacks %q:\n%s", want, out)
		}
	}
	if code != 0 {
		t.Errorf("e2: exit %d", code)
	}

	// A leaked row: the problem is a table row and the verdict says FAILED.
	test, _ := os.ReadFile(filepath.Join(e2, "test.jsonl"))
	f, _ := os.OpenFile(filepath.Join(e2, "train.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(strings.SplitN(string(test), "\n", 2)[0] + "\n")
	f.Close()
	code, out, _ = runData(t, "data", "validate", e2)
	check("e2 leaked", out)
	if code != ExitFindings || !strings.Contains(out, "problem: exact leakage") || !strings.Contains(out, "result: FAILED") {
		t.Errorf("leaked e2: exit %d\n%s", code, out)
	}

	// E1: templated flows have near twins across splits; the report says
	// what that means and that only exact leakage fails.
	e1 := filepath.Join(t.TempDir(), "e1")
	if code, out, errOut := runData(t, "data", "build", "e1", "--n", "2000", "--seed", "7", "--difficulty", "hard", "--out", e1); code != 0 {
		t.Fatalf("build e1: %s %s", out, errOut)
	}
	code, out, _ = runData(t, "data", "validate", e1)
	check("e1", out)
	for _, want := range []string{"warning: near only", "templated prompts", "no prompt is shared exactly, which is what fails"} {
		if !strings.Contains(out, want) {
			t.Errorf("e1 output lacks %q:\n%s", want, out)
		}
	}
	if code != 0 {
		t.Errorf("e1: exit %d", code)
	}
}
