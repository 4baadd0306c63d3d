package cli

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The fixtures in testdata/trainer are written in the row format of the
// reference's verifiers / prime-rl pipeline (prompt, completion, info and
// metrics as JSON text inside strings, step/problem_id/sample_id/advantage),
// with rewards computed by hand from the reference's documented formulas.

type scoredLine struct {
	Line       int                `json:"line"`
	Reward     float64            `json:"reward"`
	Components map[string]float64 `json:"components"`
	Error      string             `json:"error"`
	Unverify   string             `json:"unverifiable"`
	Trainer    *struct {
		Step       *int64             `json:"step"`
		ProblemID  string             `json:"problem_id"`
		SampleID   string             `json:"sample_id"`
		Advantage  *float64           `json:"advantage"`
		Reward     *float64           `json:"recorded_reward"`
		Components map[string]float64 `json:"recorded_components"`
		Metrics    map[string]float64 `json:"metrics"`
	} `json:"trainer"`
	Agreement *struct {
		Reproduced bool    `json:"reproduced"`
		Delta      float64 `json:"delta"`
	} `json:"agreement"`
}

func readScored(t *testing.T, out string) []scoredLine {
	t.Helper()
	var rows []scoredLine
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r scoredLine
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("output line %q: %v", sc.Text(), err)
		}
		rows = append(rows, r)
	}
	return rows
}

func TestScoreTrainerRowsReproducesRecordedRewards(t *testing.T) {
	tests := []struct {
		env, dir       string
		rows           int
		unverifiable   []int // lines
		wantComponents []string
	}{
		{"e1", "e1", 10, nil, []string{"accuracy", "format", "calibration", "asymmetric_cost"}},
		{"e2", "e2", 5, []int{5}, []string{"config_auditing", "format", "tool_observation"}},
	}
	for _, tc := range tests {
		t.Run(tc.env, func(t *testing.T) {
			in := filepath.Join("testdata", "trainer", tc.dir, "results.jsonl")
			code, stdout, stderr := runCLI(t, "score", "--env", tc.env, "--rubric", "reference", "--input", in)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			rows := readScored(t, stdout)
			if len(rows) != tc.rows {
				t.Fatalf("%d rows scored, want %d", len(rows), tc.rows)
			}
			for _, r := range rows {
				if r.Error != "" {
					t.Fatalf("line %d: %s", r.Line, r.Error)
				}
				if r.Trainer == nil || r.Trainer.Reward == nil || r.Trainer.Step == nil || r.Trainer.Advantage == nil || r.Trainer.ProblemID == "" || r.Trainer.SampleID == "" {
					t.Fatalf("line %d: trainer fields not kept: %+v", r.Line, r.Trainer)
				}
				for _, c := range tc.wantComponents {
					if _, ok := r.Trainer.Components[c]; !ok {
						t.Fatalf("line %d: recorded component %q not mapped from the reference's name: %v", r.Line, c, r.Trainer.Components)
					}
				}
				if _, ok := r.Trainer.Metrics["num_turns"]; !ok {
					t.Fatalf("line %d: num_turns not kept among trainer metrics: %v", r.Line, r.Trainer.Metrics)
				}
				if isIn(r.Line, tc.unverifiable) {
					if r.Unverify == "" || !strings.Contains(r.Unverify, "semgrep") || r.Reward != *r.Trainer.Reward {
						t.Fatalf("line %d: want unverifiable (semgrep) keeping the recorded reward, got reward %v unverifiable %q", r.Line, r.Reward, r.Unverify)
					}
					continue
				}
				if r.Agreement == nil || !r.Agreement.Reproduced || math.Abs(r.Reward-*r.Trainer.Reward) > 1e-6 {
					t.Fatalf("line %d: re-scored %v, trainer recorded %v", r.Line, r.Reward, *r.Trainer.Reward)
				}
				for c, v := range r.Trainer.Components {
					if math.Abs(r.Components[c]-v) > 1e-6 {
						t.Fatalf("line %d: component %s re-scored %v, recorded %v", r.Line, c, r.Components[c], v)
					}
				}
			}
			if !strings.Contains(stderr, "not re-verifiable") {
				t.Fatalf("summary line: %s", stderr)
			}
		})
	}
}

func isIn(x int, xs []int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func TestReportAndScoreboardReadTrainerRunDirectories(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "report", "--input", filepath.Join("testdata", "trainer", "e1"), "--out", filepath.Join(out, "e1"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "10/10 rows reproduce the recorded reward") {
		t.Fatalf("agreement not reported:\n%s", stdout)
	}
	var sum struct {
		Run struct {
			Model, Rubric string
		} `json:"run"`
		Metrics struct {
			Abstention struct {
				AbstainRate float64 `json:"abstain_rate"`
			} `json:"abstention"`
		} `json:"metrics"`
		Agreement struct {
			Reproduced int `json:"reproduced"`
		} `json:"trainer_agreement"`
		ReasoningOnly int `json:"reasoning_only_rows"`
	}
	b, err := os.ReadFile(filepath.Join(out, "e1", "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	// Before the string-encoded completions were decoded every row read as
	// an abstention; one row abstains and two give no valid label. The row
	// whose answer is only in reasoning_content is scored on it, as the
	// trainer's environment saw it (the reference's real E1 exports record
	// such rows with full reward), so no row is left reasoning-only.
	if sum.Metrics.Abstention.AbstainRate > 0.31 || sum.Agreement.Reproduced != 10 || sum.Run.Model != "Qwen/Qwen3-4B" || sum.Run.Rubric != "reference" || sum.ReasoningOnly != 0 {
		t.Fatalf("summary: %s", b)
	}

	code, stdout, stderr = runCLI(t, "report", "--input", filepath.Join("testdata", "trainer", "e2"), "--out", filepath.Join(out, "e2"))
	if code != 0 {
		t.Fatalf("e2 exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "1 cannot be re-verified") || !strings.Contains(stdout, "not re-verifiable") {
		t.Fatalf("e2 report does not name the unverifiable row:\n%s", stdout)
	}

	sbDir := filepath.Join(out, "sb")
	code, stdout, stderr = runCLI(t, "scoreboard", "--root", filepath.Join("testdata", "trainer"), "--out", sbDir)
	if code != 0 {
		t.Fatalf("scoreboard exit %d: %s", code, stderr)
	}
	md, err := os.ReadFile(filepath.Join(sbDir, "scoreboard.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout, "2 run(s) ranked") || !strings.Contains(string(md), "trainer:grpo") || !strings.Contains(string(md), "Qwen/Qwen3-4B") {
		t.Fatalf("scoreboard:\n%s\n%s", stdout, md)
	}
}
