package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/dataset/integrity"
)

// TestCountsAgree: the numbers a run summary and data validate print
// name the same things the tables beside them do (issue #24, item 4).
func TestCountsAgree(t *testing.T) {
	var b bytes.Buffer
	printRunSummary(&b, "dir", &artifact.Metadata{Status: artifact.StatusInterrupted, Errors: 3,
		UsageByModel: []artifact.ModelUsage{{Role: artifact.RolePolicy, Model: "m", Errors: 33}}}, nil)
	out := b.String()
	for _, want := range []string{"mean reward —", "3 row(s) with a model error", "33 call(s) failed"} {
		if !strings.Contains(out, want) {
			t.Errorf("run summary lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "0.0000") {
		t.Errorf("a run with no completed row shows a mean reward of 0:\n%s", out)
	}

	b.Reset()
	printValidation(&b, &integrity.Report{Warnings: []integrity.Finding{
		{Kind: "near-duplicate", File: "a"}, {Kind: "near-duplicate", File: "a"}, {Kind: "short", File: "a"},
		{Kind: "near-leakage", File: "b"}, {Kind: "near-leakage", File: "b"}, {Kind: "near-leakage", File: "b"},
	}}, "")
	out = b.String()
	if !strings.Contains(out, "WARNINGS (3;") || !strings.Contains(out, "3 warning(s) under WARNINGS and 3 near-leakage warning(s)") {
		t.Errorf("validate's counts disagree:\n%s", out)
	}
}

// TestScoreChecksVfRowsRecordedReward: vf-eval writes the reward its
// environment gave beside the completion. svbench compares it with its own
// score, as for a trainer's rows, instead of dropping it unsaid (issue #24,
// item 6).
func TestScoreChecksVfRowsRecordedReward(t *testing.T) {
	rows := `{"prompt": [{"role": "user", "content": "flow"}], "completion": [{"role": "assistant", "content": "{\"label\": \"Malicious\", \"confidence\": 0.9}"}], "answer": "Malicious", "reward": 0.25}` + "\n"
	p := filepath.Join(t.TempDir(), "vf.jsonl")
	if err := os.WriteFile(p, []byte(rows), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "score", "--env", "e1", "--input", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, `"agreement":{"recorded_reward":0.25`) || !strings.Contains(stdout, `"reproduced":false`) {
		t.Errorf("the recorded reward 0.25 was not checked:\n%s", stdout)
	}
}
