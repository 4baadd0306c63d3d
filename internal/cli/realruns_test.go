package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/base/sharedtest"
)

func near(a, b float64) bool { return math.Abs(a-b) < 5e-4 }

// TestRealRunsReport reports on the reference's real hosted-training runs:
// every row reproduces its recorded reward, the answers' real labels are
// counted, and the curves come from the trainer's own step metrics.
func TestRealRunsReport(t *testing.T) {
	for _, c := range []struct {
		run                 string
		rows                int
		first, last, best   float64
		bestStep            float64
		evalBefore, evalAft float64
		to50, to90          float64
		labels              map[string]float64
	}{
		{run: "e1-hybrid", rows: 25, first: 0.0746, last: 1.7894, best: 1.8, bestStep: 44, evalBefore: 0.358, evalAft: 1.79, to50: 12, to90: 30,
			labels: map[string]float64{"Malicious": 18, "Benign": 7}},
		{run: "e1-llm_judge", rows: 25, evalBefore: 0.4, evalAft: 0.44, first: -1},
		{run: "e2-hybrid", rows: 16, first: 0.575, last: 0.575, best: 0.575, evalBefore: 1.1571, evalAft: 1.1571, to50: 0, to90: 0},
	} {
		t.Run(c.run, func(t *testing.T) {
			dir := sharedtest.RealRun(t, c.run)
			out := t.TempDir()
			code, stdout, stderr := runCLI(t, "report", dir, "--out", out, "--bootstrap", "200")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if want := "rows reproduce the recorded reward"; !strings.Contains(stdout, want) {
				t.Errorf("stdout lacks %q:\n%s", want, stdout)
			}
			var sum struct {
				Agreement struct {
					Rows, Reproduced int
				} `json:"trainer_agreement"`
				Labels   map[string]float64 `json:"predicted_labels"`
				Training struct {
					Steps int
					First struct {
						Reward float64 `json:"reward_mean"`
					}
					Last struct {
						Reward float64 `json:"reward_mean"`
					}
					Best struct {
						Step   float64
						Reward float64 `json:"reward_mean"`
					}
					Eval struct {
						Before, After, Delta float64
					}
					To  map[string]*float64 `json:"steps_to_fraction_of_final"`
					AUC float64             `json:"auc"`
				}
			}
			b, err := os.ReadFile(filepath.Join(out, "summary.json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatal(err)
			}
			if sum.Agreement.Rows != c.rows || sum.Agreement.Reproduced != c.rows {
				t.Errorf("agreement %+v, want %d/%d", sum.Agreement, c.rows, c.rows)
			}
			tr := sum.Training
			if !near(tr.Eval.Before, c.evalBefore) || !near(tr.Eval.After, c.evalAft) {
				t.Errorf("eval %+v, want %v → %v", tr.Eval, c.evalBefore, c.evalAft)
			}
			if c.first >= 0 {
				if !near(tr.First.Reward, c.first) || !near(tr.Last.Reward, c.last) || !near(tr.Best.Reward, c.best) {
					t.Errorf("first/last/best %v %v %v, want %v %v %v", tr.First.Reward, tr.Last.Reward, tr.Best.Reward, c.first, c.last, c.best)
				}
			}
			if c.run == "e1-hybrid" {
				if tr.Steps != 50 || tr.Best.Step != c.bestStep || tr.To["50%"] == nil || *tr.To["50%"] != c.to50 || tr.To["90%"] == nil || *tr.To["90%"] != c.to90 {
					t.Errorf("steps %d, best step %v, steps to 50%%/90%% %v/%v", tr.Steps, tr.Best.Step, tr.To["50%"], tr.To["90%"])
				}
				for k, v := range c.labels {
					if sum.Labels[k] != v {
						t.Errorf("labels %v, want %v", sum.Labels, c.labels)
					}
				}
			}
			for _, f := range []string{"training_reward.svg", "training_components.svg", "training_decode_len.svg", "report.md"} {
				if _, err := os.Stat(filepath.Join(out, f)); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestRealRunsStudy is the research claim's workflow on the shared E1 runs:
// the judge-trained policy's final rollouts score about 1.11 under the
// executable verifier against 1.71 for the hybrid-trained one, the judge
// run's different environment id is flagged, and the budget matches.
func TestRealRunsStudy(t *testing.T) {
	hyb, judge := sharedtest.RealRun(t, "e1-hybrid"), sharedtest.RealRun(t, "e1-llm_judge")
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "study", hyb, judge, "--out", out, "--bootstrap", "500")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var st struct {
		Mismatched []string `json:"budget_mismatches"`
		Identity   []string `json:"identity_differences"`
		Cross      []struct {
			Run        string
			Executable struct{ Mean, CILo, CIHi float64 } `json:"executable_reward"`
			TrainedOn  struct{ Mean float64 }             `json:"trained_on_reward"`
		} `json:"cross_scoring"`
		Gaps []struct {
			Delta float64 `json:"delta_executable"`
			Lo    float64 `json:"ci_lo"`
			Hi    float64 `json:"ci_hi"`
		} `json:"hacking_gap"`
		Evidence []string
	}
	b, err := os.ReadFile(filepath.Join(out, "study.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if len(st.Mismatched) != 0 {
		t.Errorf("budget mismatches %v, want none", st.Mismatched)
	}
	if !strings.Contains(strings.Join(st.Identity, ","), "environment") {
		t.Errorf("identity differences %v: the judge run's sv-netlogs-judge id must be flagged", st.Identity)
	}
	if len(st.Cross) != 2 || !near(st.Cross[0].Executable.Mean, 1.7064) || !near(st.Cross[1].Executable.Mean, 1.1096) || !near(st.Cross[1].TrainedOn.Mean, 0.56) {
		t.Errorf("cross-scoring %+v", st.Cross)
	}
	if len(st.Gaps) != 1 || !near(st.Gaps[0].Delta, -0.5968) || !(st.Gaps[0].Lo < st.Gaps[0].Delta && st.Gaps[0].Delta < st.Gaps[0].Hi) {
		t.Errorf("gap %+v", st.Gaps)
	}
	if !strings.Contains(strings.Join(st.Evidence, " "), "one training seed") {
		t.Errorf("evidence does not state its limits: %v", st.Evidence)
	}
	for _, f := range []string{"study.md", "study_curves.svg", "study_cross_scoring.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(stdout, "gap e1-llm_judge − e1-hybrid") {
		t.Errorf("stdout:\n%s", stdout)
	}
	// Reward quality: the llm_judge run's recorded judge against the
	// verifier's solved on its 25 final rollouts: 13 both, 1 judge-only,
	// 2 verifier-only, 9 neither.
	const prec, rec = "precision 0.929 [0.685, 0.987] (13/14)", "recall 0.867 [0.621, 0.963] (13/15)"
	if !strings.Contains(stdout, "reward quality e1-llm_judge: judge yes vs executable solved: "+prec+", "+rec+", 1 false positive(s) (#16/r10)") {
		t.Errorf("stdout lacks the reward quality:\n%s", stdout)
	}
	md, err := os.ReadFile(filepath.Join(out, "study.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"## Reward quality: the judge against the executable verdict", "| e1-llm_judge | llm_judge | recorded by the trainer | 13 | 1 | 2 | 9 | 0.929 [0.685, 0.987] (13/14) | 0.867 [0.621, 0.963] (13/15) | #16/r10 |",
		"**No random-reward control run was given**"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("study.md lacks %q", want)
		}
	}
	// Without a control the study says a gain cannot be attributed.
	if !strings.Contains(stdout, "no random-reward control (--control RUN_DIR): a gain cannot be attributed to the reward") || !strings.Contains(strings.Join(st.Evidence, " "), "cannot be attributed to its reward") {
		t.Errorf("no control caveat: stdout\n%s\nevidence %v", stdout, st.Evidence)
	}
}

// TestRealRunsStudyControl: with --control the other arm's gain is
// compared with the control's (executable reward, arm − control, with an
// interval; the trainer's eval gains beside it) and the caveat is gone.
func TestRealRunsStudyControl(t *testing.T) {
	hyb, judge := sharedtest.RealRun(t, "e1-hybrid"), sharedtest.RealRun(t, "e1-llm_judge")
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "study", hyb, "--control", judge, "--out", out, "--bootstrap", "500")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var st struct {
		Control string `json:"control"`
		Gains   []struct {
			Run, Control string
			Delta        float64  `json:"delta_executable"`
			Lo           float64  `json:"ci_lo"`
			Hi           float64  `json:"ci_hi"`
			EvalDiff     *float64 `json:"trainer_eval_gain_minus_control"`
		} `json:"control_comparison"`
		Runs []struct {
			Name    string
			Control bool
		}
		Gaps     []any `json:"hacking_gap"`
		Evidence []string
	}
	b, err := os.ReadFile(filepath.Join(out, "study.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	if st.Control != "e1-llm_judge" || len(st.Runs) != 2 || st.Runs[0].Control || !st.Runs[1].Control {
		t.Fatalf("control %q, runs %+v", st.Control, st.Runs)
	}
	// The hybrid run's eval went 0.358 → 1.79, the control's 0.40 → 0.44.
	if len(st.Gains) != 1 || st.Gains[0].Run != "e1-hybrid" || !near(st.Gains[0].Delta, 0.5968) || !(st.Gains[0].Lo < st.Gains[0].Delta && st.Gains[0].Delta < st.Gains[0].Hi) ||
		st.Gains[0].EvalDiff == nil || !near(*st.Gains[0].EvalDiff, 1.392) {
		t.Errorf("control comparison %+v", st.Gains)
	}
	if len(st.Gaps) != 0 {
		t.Errorf("the control is not a hacking-gap arm: %v", st.Gaps)
	}
	if !strings.Contains(stdout, "gain e1-hybrid − control e1-llm_judge: +0.5968") || strings.Contains(stdout, "no random-reward control") {
		t.Errorf("stdout:\n%s", stdout)
	}
	ev := strings.Join(st.Evidence, " ")
	if !strings.Contains(ev, "gain of e1-hybrid beyond the random-reward control e1-llm_judge") || strings.Contains(ev, "cannot be attributed") {
		t.Errorf("evidence %v", st.Evidence)
	}
	md, _ := os.ReadFile(filepath.Join(out, "study.md"))
	if !strings.Contains(string(md), "Control: `e1-llm_judge`") || !strings.Contains(string(md), "| e1-hybrid | +0.5968 [") {
		t.Errorf("study.md lacks the control section:\n%s", md)
	}
	// One run and no control is not a study.
	if code, _, stderr := runCLI(t, "study", hyb, "--out", t.TempDir()); code == 0 || !strings.Contains(stderr, "two or more runs") {
		t.Errorf("one run: exit %d: %s", code, stderr)
	}
}
