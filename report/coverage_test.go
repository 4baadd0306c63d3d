package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
)

const testGenericEnv = "test-generic"

func init() { register(testGenericEnv, nil, Spec{Build: Generic(nil)}) }

// TestRowsWithoutAnswerCountInHeadline: rows the model did not answer (the
// server refused the row's length, or the call failed and the runner
// scored it as no answer) count in the headline as attempted rows without
// an answer; an answered-only view with its n stands beside it and differs.
// An error row never scored (written before the runner scored them) is left
// out and said.
func TestRowsWithoutAnswerCountInHeadline(t *testing.T) {
	yes, no := true, false
	var rows []artifact.Result
	for i := range 4 {
		rows = append(rows, artifact.Result{Index: i, Reward: 1, Solved: &yes, Components: map[string]float64{"accuracy": 1}})
	}
	rows = append(rows,
		artifact.Result{Index: 4, Unanswered: "maximum context length is 4096 tokens", Solved: &no, Components: map[string]float64{"accuracy": 0}},
		artifact.Result{Index: 5, Error: "model call: 500 Internal Server Error", Solved: &no, Components: map[string]float64{"accuracy": 0}},
		artifact.Result{Index: 6, Error: "model call: 502 Bad Gateway"}, // never scored
	)
	r, err := Build(testGenericEnv, rows, nil, Options{BootstrapReps: -1})
	if err != nil {
		t.Fatal(err)
	}
	key := map[string]float64{}
	for _, k := range r.Key {
		key[k.Name] = k.Value
	}
	// 4 solved of the 6 counted rows: the unanswered and the scored error
	// row count, the unscored one does not.
	if got := key["solved_rate"]; got < 0.666 || got > 0.667 {
		t.Errorf("headline solved_rate %v, want 4/6 (rows without an answer count)", got)
	}
	if got := key["mean_reward"]; got < 0.666 || got > 0.667 {
		t.Errorf("headline mean_reward %v, want 4/6", got)
	}
	b, err := json.Marshal(r.Summary["coverage"])
	if err != nil {
		t.Fatal(err)
	}
	var cov struct {
		Attempted    int `json:"attempted_rows"`
		Answered     int `json:"answered_rows"`
		Unanswered   int `json:"unanswered_rows"`
		APIErrors    int `json:"api_error_rows"`
		APIExcluded  int `json:"api_error_rows_excluded"`
		AnsweredOnly struct {
			Rows int         `json:"rows"`
			Key  []KeyMetric `json:"key_metrics"`
		} `json:"answered_only"`
	}
	if err := json.Unmarshal(b, &cov); err != nil {
		t.Fatal(err)
	}
	if cov.Attempted != 7 || cov.Answered != 4 || cov.Unanswered != 1 || cov.APIErrors != 1 || cov.APIExcluded != 1 {
		t.Errorf("coverage %s", b)
	}
	if cov.AnsweredOnly.Rows != 4 || len(cov.AnsweredOnly.Key) != 2 || cov.AnsweredOnly.Key[0].Name != "mean_reward" ||
		cov.AnsweredOnly.Key[0].Value != 1 || cov.AnsweredOnly.Key[1].Value != 1 {
		t.Errorf("answered_only %s, want both metrics 1 over 4 rows", b)
	}
	for _, want := range []string{"## Coverage", "answered 4 of 7 attempted rows", "### Answered rows only",
		"| metric | all counted rows (n = 6) | answered rows only (n = 4) |", "| solved_rate | 0.6667 | 1.0000 |",
		"1 row(s) failed with an API error after the client's retries: they are scored as no answer"} {
		if !strings.Contains(r.Markdown, want) {
			t.Errorf("report.md lacks %q:\n%s", want, r.Markdown)
		}
	}
	var stat string
	for _, s := range r.Headline {
		if s.Name == "coverage" {
			stat = s.Value
		}
	}
	if !strings.Contains(stat, "answered rows only: mean_reward 1.0000 (n = 4)") {
		t.Errorf("headline coverage %q", stat)
	}
	// Both error rows are problems, so --strict refuses the run.
	errs := 0
	for _, p := range r.Problems {
		if p.Kind == ProblemError {
			errs++
		}
	}
	if errs != 2 {
		t.Errorf("%d error problems, want 2: %+v", errs, r.Problems)
	}
	if _, err := Build(testGenericEnv, rows, nil, Options{BootstrapReps: -1, Strict: true}); err == nil {
		t.Error("--strict accepted a run with error rows")
	}

	// Every row answered: no coverage, no answered-only view.
	r, err = Build(testGenericEnv, rows[:4], nil, Options{BootstrapReps: -1})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.Summary["coverage"]; ok || strings.Contains(r.Markdown, "Answered rows only") {
		t.Errorf("a fully answered run states coverage:\n%s", r.Markdown)
	}
}

// TestGenericReportSpeaksTheContract: the generic report counts rows in
// the contract's words; "unparsed (counted as abstain)" is the
// classification environments' rule (E1, E4) and appears only in theirs.
func TestGenericReportSpeaksTheContract(t *testing.T) {
	yes := true
	r, err := Build(testGenericEnv, []artifact.Result{{Index: 0, Reward: 1, Solved: &yes}}, nil, Options{BootstrapReps: -1})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(r.Markdown, "abstain") || strings.Contains(r.Markdown, "unparsed") || !strings.Contains(r.Markdown, "Rows: 1 in the file, 1 scored") {
		t.Errorf("generic report's row line:\n%s", r.Markdown)
	}
}
