package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
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
