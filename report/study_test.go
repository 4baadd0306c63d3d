package report

import (
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
)

// studyRows builds one rollout per problem: exec is the executable reward,
// solved the verifier's verdict, judge the recorded judge component (nil:
// none recorded).
func studyRows(exec []float64, solved []bool, judge []*float64) []artifact.Result {
	rows := make([]artifact.Result, len(exec))
	for i := range exec {
		tr := &artifact.Trainer{Reward: &exec[i], Executable: &exec[i]}
		if judge != nil && judge[i] != nil {
			tr.Components = map[string]float64{"judge": *judge[i]}
		}
		rows[i] = artifact.Result{Index: i, ExampleID: "p" + string(rune('a'+i)), Solved: &solved[i], Trainer: tr}
	}
	return rows
}

func TestStudyQualityAndControl(t *testing.T) {
	yes, no := 1.0, 0.0
	// Judge arm: yes on a, b (solved), c (unsolved); no on d (solved), e.
	judgeArm := StudyRun{Name: "judge", RewardSource: "llm_judge", Rows: studyRows([]float64{1, 1, 0, 1, 0}, []bool{true, true, false, true, false}, []*float64{&yes, &yes, &yes, &no, &no})}
	// A judge that never says yes: precision undefined.
	silent := StudyRun{Name: "silent", RewardSource: "llm_judge", Rows: studyRows([]float64{1, 0}, []bool{true, false}, []*float64{&no, &no})}
	random := StudyRun{Name: "random", RewardSource: RandomSource, Control: true, Rows: studyRows([]float64{0, 0, 1, 0, 0}, make([]bool, 5), nil)}

	st, _, md := BuildStudy([]StudyRun{judgeArm, silent}, 200, 1)
	if len(st.Quality) != 2 {
		t.Fatalf("quality %+v", st.Quality)
	}
	q := st.Quality[0]
	if q.TP != 2 || q.FP != 1 || q.FN != 1 || q.TN != 1 || q.Precision.String() != "0.667 [0.208, 0.939] (2/3)" || q.Recall.String() != "0.667 [0.208, 0.939] (2/3)" ||
		strings.Join(q.FalsePositives, ",") != "pc/r0" || q.JudgeSource != "recorded by the trainer" {
		t.Errorf("judge arm quality %+v", q)
	}
	if q := st.Quality[1]; q.Precision.Value != nil || !strings.Contains(md, "| silent | llm_judge | recorded by the trainer | 0 | 0 | 1 | 1 | n/a (0/0) | 0.000 [0.000, 0.793] (0/1) | — |") {
		t.Errorf("all-negative judge: %+v\n%s", q, md)
	}
	if st.Control != "" || len(st.ControlGains) != 0 || !strings.Contains(md, "**No random-reward control run was given**") ||
		!strings.Contains(strings.Join(st.Evidence, " "), "cannot be attributed to its reward") {
		t.Errorf("no control: %q %+v\n%v", st.Control, st.ControlGains, st.Evidence)
	}

	st, _, md = BuildStudy([]StudyRun{judgeArm, random}, 200, 1)
	// Judge arm executable mean 0.6, control 0.2: +0.4.
	if st.Control != "random" || len(st.ControlGains) != 1 || st.ControlGains[0].Run != "judge" || st.ControlGains[0].Delta < 0.4-1e-9 || st.ControlGains[0].Delta > 0.4+1e-9 ||
		!(st.ControlGains[0].Lo <= 0.4 && 0.4 <= st.ControlGains[0].Hi) {
		t.Errorf("control comparison %+v", st.ControlGains)
	}
	if strings.Contains(md, "No random-reward control") || !strings.Contains(md, "| judge | +0.4000 [") || len(st.Quality) != 1 {
		t.Errorf("control markdown:\n%s", md)
	}
}
