package rewardsagree

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/env/judgeutil"
	_ "github.com/svbench/svbench/envs/netlogs"
)

// ruleJudge is a deterministic test double for a judge model: it says yes
// when the fenced answer's label is the correct label or an abstention (a
// judge lenient on abstaining, so it disagrees with the verifier), and
// fails on answers containing "FAIL".
type ruleJudge struct {
	mu    sync.Mutex
	calls int
}

var (
	goldRe  = regexp.MustCompile(`Correct label: (\w+)`)
	labelRe = regexp.MustCompile(`(?s)<<<ANSWER>>>.*"label":\s*"(\w+)"`)
)

func (j *ruleJudge) Name() string { return "rule-judge" }

func (j *ruleJudge) Chat(_ context.Context, msgs []env.Message) (env.Message, env.Usage, error) {
	reply, u, err := j.answer(msgs[len(msgs)-1].Content)
	return env.Message{Role: env.RoleAssistant, Content: reply}, u, err
}

func (j *ruleJudge) answer(prompt string) (string, env.Usage, error) {
	j.mu.Lock()
	j.calls++
	j.mu.Unlock()
	u := env.Usage{PromptTokens: 100, CompletionTokens: 1, TotalTokens: 101}
	if strings.Contains(prompt, "FAIL") {
		return "", env.Usage{}, errors.New("judge endpoint: 503 Service Unavailable")
	}
	g, l := goldRe.FindStringSubmatch(prompt), labelRe.FindStringSubmatch(prompt)
	if g != nil && l != nil && (l[1] == g[1] || l[1] == "Abstain") {
		return "Yes", u, nil
	}
	return "No", u, nil
}

// ask puts one verdict question to a cache, as the environments do.
func ask(c *Cache, system, prompt string) (string, error) {
	reply, _, err := c.Chat(context.Background(), judgeutil.Question(system, prompt))
	return reply.Content, err
}

type row struct{ gold, text, err string }

// writeRun builds an E1 run directory by hand.
func writeRun(t *testing.T, status string, rows []row) string {
	t.Helper()
	dir := t.TempDir()
	meta := artifact.Metadata{RunID: "r1", Environment: "network-logs", EnvVersion: "1.0.0", Rubric: "default", Model: "m",
		Dataset: "embedded:e1-mini", DatasetRev: "sha256:abc", Rollouts: 1, Status: status}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), meta); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, artifact.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for i, r := range rows {
		res := artifact.Result{Index: i, ExampleID: "ex" + string(rune('a'+i)), Answer: json.RawMessage(`"` + r.gold + `"`),
			Prompt:    []env.Message{{Role: env.RoleSystem, Content: "sys"}, {Role: env.RoleUser, Content: "flow " + string(rune('a'+i))}},
			FinalText: r.text, Error: r.err}
		if r.err == "" {
			res.Completion = []env.Message{{Role: env.RoleAssistant, Content: r.text}}
		}
		if err := enc.Encode(res); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// The constructed run, scored by E1's default rubric (weights accuracy 1,
// format 0.1, calibration 0.2, asymmetric_cost 0.5, abstention 1.0, paid
// only on rows marked ambiguous, which these are not):
//
//	a: Malicious → Malicious, conf 1: 1 + .1 + .2·1 + .5·1        = 1.8  solved, judge yes
//	b: Benign → Benign, conf 1:                                   = 1.8  solved, judge yes
//	c: Malicious → Benign, conf 1: .1 + .2·(1−1²) + .5·(−1)       = −0.4 unsolved, judge no
//	d: Benign → Abstain, conf 0: .1 + .2·(1−0²)                   = 0.3  unsolved, judge yes
//	e: model error: skipped.
var studyRows = []row{
	{"Malicious", `{"label": "Malicious", "confidence": 1.0}`, ""},
	{"Benign", `{"label": "Benign", "confidence": 1.0}`, ""},
	{"Malicious", `{"label": "Benign", "confidence": 1.0}`, ""},
	{"Benign", `{"label": "Abstain", "confidence": 0.0}`, ""},
	{"Benign", "", "endpoint timeout"},
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestStudyByHand(t *testing.T) {
	dir := writeRun(t, artifact.StatusCompleted, studyRows)
	j := &ruleJudge{}
	rep, err := Study(context.Background(), dir, StudyOptions{Judge: j, JudgeModel: "judge-1", Workers: 3, Options: Options{Reps: 200, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Rows != 5 || rep.ModelErrors != 1 || rep.Scored != 4 || rep.JudgeFailures != 0 {
		t.Fatalf("counts: %+v", rep)
	}
	want := map[string][2]float64{ // mean reward, pass rate
		"executable": {(1.8 + 1.8 - 0.4 + 0.3) / 4, 0.5},
		"llm_judge":  {0.75, 0.75},
		"hybrid":     {(2.8 + 2.8 - 0.4 + 1.3) / 4, 0.5},
	}
	for _, s := range rep.Sources {
		if w := want[s.Source]; !near(s.Reward.Point, w[0]) || !near(s.PassRate.Point, w[1]) {
			t.Errorf("%s: reward %v pass %v, want %v", s.Source, s.Reward.Point, s.PassRate.Point, w)
		}
	}
	// exec x = [1.8 1.8 −.4 .3], judge y = [1 1 0 1]: deviations from the
	// means (.875, .75) are [.925 .925 −1.275 −.575] and [.25 .25 −.75 .25];
	// Σxy = 1.275, Σx² = 3.6675, Σy² = .75, r = 1.275/√(3.6675·.75) = .76877.
	// Ranks [3.5 3.5 1 2] vs [3 3 1 3] give Spearman √(2/3) = .81650.
	// Scaled exec [1 1 0 .31818] vs judge [1 1 0 1]: one row differs by
	// .68182 > .1, agreement 3/4. Hybrid [2.8 2.8 −.4 1.3] scales to
	// [1 1 0 .53125], .21307 from exec's .31818: agreement 3/4.
	wantPairs := []struct {
		pearson, spearman, agreement, mad float64
	}{
		{0.7687665737984287, math.Sqrt(2.0 / 3), 0.75, 0.6818181818181819 / 4},
		{0.9777394263799098, 1, 0.75, 0.21306818181818182 / 4},
		{0.8858412651484621, math.Sqrt(2.0 / 3), 0.75, 0.46875 / 4},
	}
	for i, p := range rep.Pairs {
		w := wantPairs[i]
		if p.Pearson == nil || p.Spearman == nil || !near(*p.Pearson, w.pearson) || !near(*p.Spearman, w.spearman) || !near(p.Agreement, w.agreement) || !near(p.MeanAbsDiff, w.mad) {
			t.Errorf("%s vs %s: %v %v %v %v, want %+v", p.A, p.B, *p.Pearson, *p.Spearman, p.Agreement, p.MeanAbsDiff, w)
		}
	}
	// Confusion: 2 both, 0 verifier-only, 1 judge-only, 1 neither.
	// po = .75; pv = .5, pj = .75, pe = .5·.75 + .5·.25 = .5; κ = .25/.5 = .5.
	c := rep.Solved
	if c.BothPass != 2 || c.VerifierOnly != 0 || c.JudgeOnly != 1 || c.Neither != 1 || !near(c.Agreement, 0.75) || c.Kappa == nil || !near(*c.Kappa, 0.5) {
		t.Errorf("confusion %+v", c)
	}
	// Reward quality against solved: the judge pays a, b (solved) and d
	// (unsolved): TP 2, FP 1 (exd), TN 1; hybrid needs solved, so TP 2, TN 2.
	wantQ := []struct {
		source, prec, rec string
		fps               string
	}{
		{"llm_judge", "0.667 [0.208, 0.939] (2/3)", "1.000 [0.342, 1.000] (2/2)", "exd/r0"},
		{"hybrid", "1.000 [0.342, 1.000] (2/2)", "1.000 [0.342, 1.000] (2/2)", ""},
	}
	if len(rep.Quality) != len(wantQ) {
		t.Fatalf("quality %+v", rep.Quality)
	}
	for i, w := range wantQ {
		q := rep.Quality[i]
		if q.Source != w.source || q.Precision.String() != w.prec || q.Recall.String() != w.rec || strings.Join(q.FalsePositives, ",") != w.fps {
			t.Errorf("quality %s: precision %s recall %s fps %v, want %+v", q.Source, q.Precision, q.Recall, q.FalsePositives, w)
		}
	}
	if len(rep.Labels) != 4 {
		t.Fatalf("labels: %+v", rep.Labels)
	}
	for _, l := range rep.Labels {
		if l.Gold == "Benign" && l.Predicted == "Abstain" && (l.N != 1 || l.Solved != 0 || l.JudgeYes != 1 || !near(l.Executable, 0.3) || !near(l.Hybrid, 1.3)) {
			t.Errorf("Benign/Abstain cell: %+v", l)
		}
	}
	// One disagreement, written out for reading.
	lines := readLines(t, filepath.Join(dir, DisagreementsFile))
	if rep.Disagreements != 1 || len(lines) != 1 {
		t.Fatalf("disagreements: %d, file %q", rep.Disagreements, lines)
	}
	var d Disagreement
	if err := json.Unmarshal([]byte(lines[0]), &d); err != nil || d.Kind != JudgeYesVerifierNo || d.ExampleID != "exd" || d.Predicted != "Abstain" || d.Gold != "Benign" || *d.Judge.Judge != 1 {
		t.Errorf("disagreement %+v %v", d, err)
	}
	// Cost: four distinct questions sent; the hybrid source's four answered
	// from the cache.
	if rep.Cost.Calls != 4 || rep.Cost.Hits != 4 || rep.Cost.Usage.PromptTokens != 400 || j.calls != 4 {
		t.Errorf("cost %+v, judge called %d times", rep.Cost, j.calls)
	}
	for _, f := range []string{ReportJSON, ReportMarkdown, CacheFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportMarkdown))
	for _, s := range []string{"| solved | 2 | 0 |", "| not solved | 1 | 1 |", "κ 0.500", "executable vs llm_judge | 0.769 | 0.816 | 0.750",
		"| llm_judge | the judge said yes (judge component ≥ 1) | 2 | 1 | 0 | 1 | 0.667 [0.208, 0.939] (2/3) | 1.000 [0.342, 1.000] (2/2) | exd/r0 |"} {
		if !strings.Contains(string(md), s) {
			t.Errorf("markdown lacks %q:\n%s", s, md)
		}
	}

	// Re-running costs nothing: every answer comes from the cache file.
	j2 := &ruleJudge{}
	rep2, err := Study(context.Background(), dir, StudyOptions{Judge: j2, JudgeModel: "judge-1", Options: Options{Reps: 200, Seed: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if j2.calls != 0 || rep2.Cost.Calls != 0 || rep2.Cost.Hits != 8 || rep2.Cost.Loaded != 4 || rep2.Solved.JudgeOnly != rep.Solved.JudgeOnly || rep2.Disagreements != 1 {
		t.Errorf("re-run: judge called %d times, cost %+v", j2.calls, rep2.Cost)
	}
	// Another judge model does not reuse the first one's answers.
	j3 := &ruleJudge{}
	if _, err := Study(context.Background(), dir, StudyOptions{Judge: j3, JudgeModel: "judge-2", Options: Options{Reps: 10}}); err != nil || j3.calls != 4 {
		t.Errorf("judge-2: %d calls, %v", j3.calls, err)
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		out = append(out, sc.Text())
	}
	return out
}

func TestJudgeFailuresAreCountedApart(t *testing.T) {
	rows := append([]row(nil), studyRows[:4]...)
	rows = append(rows, row{"Malicious", `{"label": "Malicious", "confidence": 0.9, "rationale": "FAIL"}`, ""})
	dir := writeRun(t, artifact.StatusCompleted, rows)
	rep, err := Study(context.Background(), dir, StudyOptions{Judge: &ruleJudge{}, JudgeModel: "j", Options: Options{Reps: 10}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.JudgeFailures != 1 || rep.Scored != 4 || rep.ScoreErrors["llm_judge"] != 1 || rep.ScoreErrors["hybrid"] != 1 || rep.ScoreErrors["executable"] != 0 {
		t.Errorf("judge failure not counted apart: %+v", rep)
	}
	// The failing row is not among the "no" verdicts: the confusion matrix
	// is the four-row one.
	if c := rep.Solved; c.BothPass+c.VerifierOnly+c.JudgeOnly+c.Neither != 4 {
		t.Errorf("confusion counts the failed row: %+v", c)
	}
	// Failed calls are not cached: both sources retried, both failed.
	if rep.Cost.Errors != 2 {
		t.Errorf("cost %+v", rep.Cost)
	}
	md, _ := os.ReadFile(filepath.Join(dir, ReportMarkdown))
	if !strings.Contains(string(md), "1 rows where the judge gave no verdict") {
		t.Errorf("markdown does not flag the judge failure:\n%s", md)
	}
}

func TestStudyBadInput(t *testing.T) {
	ctx := context.Background()
	j := &ruleJudge{}
	if _, err := Study(ctx, filepath.Join(t.TempDir(), "nope"), StudyOptions{Judge: j, JudgeModel: "j"}); err == nil || !strings.Contains(err.Error(), "nope") {
		t.Errorf("missing run: %v", err)
	}
	running := writeRun(t, artifact.StatusInterrupted, studyRows)
	if _, err := Study(ctx, running, StudyOptions{Judge: j, JudgeModel: "j"}); err == nil || !strings.Contains(err.Error(), "--allow-incomplete") {
		t.Errorf("incomplete run: %v", err)
	}
	if rep, err := Study(ctx, running, StudyOptions{Judge: j, JudgeModel: "j", AllowIncomplete: true, Options: Options{Reps: 10}}); err != nil || rep.RunStatus != artifact.StatusInterrupted {
		t.Errorf("incomplete run allowed: %v", err)
	}
	done := writeRun(t, artifact.StatusCompleted, studyRows)
	if _, err := Study(ctx, done, StudyOptions{}); err == nil || !strings.Contains(err.Error(), "--judge-model") {
		t.Errorf("no judge: %v", err)
	}
	// An environment without judge sources is refused by name.
	reg := env.NewRegistry()
	reg.Register(env.Spec{ID: "network-logs", New: func(env.Options) (env.Environment, error) { return nil, errors.New("unused") }})
	if _, err := Study(ctx, done, StudyOptions{Registry: reg, Judge: j, JudgeModel: "j"}); !errors.Is(err, ErrNoJudgeSource) {
		t.Errorf("env without judge source: %v", err)
	}
	// A damaged cache file is refused, not overwritten.
	if err := os.WriteFile(filepath.Join(done, CacheFile), []byte("not json\n{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Study(ctx, done, StudyOptions{Judge: j, JudgeModel: "j"}); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("damaged cache: %v", err)
	}
}

func TestCacheTornTailAndConcurrency(t *testing.T) {
	path := filepath.Join(t.TempDir(), CacheFile)
	j := &ruleJudge{}
	c, err := OpenCache(path, "m", j)
	if err != nil {
		t.Fatal(err)
	}
	prompt := "Correct label: Benign\n<<<ANSWER>>>\n{\"label\": \"Benign\"}\n<<<END ANSWER>>>"
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r, err := ask(c, "s", prompt); err != nil || r != "Yes" {
				t.Errorf("%q %v", r, err)
			}
		}()
	}
	wg.Wait()
	if st := c.Stats(); j.calls != 1 || st.Calls != 1 || st.Hits != 7 {
		t.Errorf("identical questions in flight asked %d times: %+v", j.calls, st)
	}
	c.Close()
	// A killed writer's partial line is ignored and later appends stay
	// line-aligned.
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"key": "tor`)
	f.Close()
	c, err = OpenCache(path, "m", j)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ask(c, "s", "other"); err != nil {
		t.Fatal(err)
	}
	c.Close()
	c, err = OpenCache(path, "m", j)
	if err != nil || c.Stats().Loaded != 2 {
		t.Fatalf("after torn tail: loaded %d, %v", c.Stats().Loaded, err)
	}
	c.Close()
}

// replyJudge answers every question with reply.
type replyJudge struct {
	mu    sync.Mutex
	reply string
	calls int
}

func (j *replyJudge) Name() string { return "reply-judge" }

func (j *replyJudge) Chat(context.Context, []env.Message) (env.Message, env.Usage, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.calls++
	return env.Message{Role: env.RoleAssistant, Content: j.reply}, env.Usage{}, nil
}

// TestCacheKeepsOnlyVerdicts: a misconfigured judge's non-answers are not
// replayed once it is fixed (issue #24, item 5: the re-run sent no call
// and reported the same 100 "no verdict" rows).
func TestCacheKeepsOnlyVerdicts(t *testing.T) {
	path := filepath.Join(t.TempDir(), CacheFile)
	j := &replyJudge{reply: ""} // e.g. a reasoning parser that swallowed the answer
	c, err := OpenCache(path, "m", j)
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := ask(c, "s", "q"); r != "" {
		t.Fatalf("reply %q", r)
	}
	c.Close()
	j.reply = "Yes" // the judge is fixed
	c, err = OpenCache(path, "m", j)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if r, _ := ask(c, "s", "q"); r != "Yes" || j.calls != 2 {
		t.Errorf("after fixing the judge: reply %q after %d calls; the non-answer was replayed from the cache", r, j.calls)
	}
	if r, _ := ask(c, "s", "q"); r != "Yes" || j.calls != 2 {
		t.Errorf("a verdict was not cached: %q, %d calls", r, j.calls)
	}
	// A cache file an older svbench wrote with a non-answer in it.
	old := filepath.Join(t.TempDir(), CacheFile)
	line, _ := json.Marshal(cacheEntry{Key: Key("m", "s", "q"), Model: "m", Reply: "I cannot judge this."})
	if err := os.WriteFile(old, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	c2, err := OpenCache(old, "m", j)
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if r, _ := ask(c2, "s", "q"); r != "Yes" {
		t.Errorf("an old cached non-answer was replayed: %q", r)
	}
	// A verdict an older svbench cached (keyed on system and prompt, when
	// judges were asked a question rather than sent a conversation) still
	// answers without a call.
	verdicts := filepath.Join(t.TempDir(), CacheFile)
	line, _ = json.Marshal(cacheEntry{Key: Key("m", "sys", "question"), Model: "m", Reply: "No"})
	if err := os.WriteFile(verdicts, append(line, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	c3, err := OpenCache(verdicts, "m", j)
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	before := j.calls
	if r, _ := ask(c3, "sys", "question"); r != "No" || j.calls != before {
		t.Errorf("an old cached verdict did not answer: %q after %d new calls", r, j.calls-before)
	}
}

// TestBudgetSaysServerDefault: "max_tokens not sent" is stored in the
// manifest as 2147483647; rewards_agree.md says what it means (issue #24,
// item 4).
func TestBudgetSaysServerDefault(t *testing.T) {
	b := budget(&Run{Manifest: &artifact.Manifest{MaxTokens: artifact.UnboundedTokens}})
	if got := b.Fields["max_tokens"]; got != "server default" {
		t.Errorf("max_tokens shown as %q", got)
	}
	if got := budget(&Run{Manifest: &artifact.Manifest{MaxTokens: 1024}}).Fields["max_tokens"]; got != "1024" {
		t.Errorf("max_tokens 1024 shown as %q", got)
	}
}

// TestQualityAllNegative: a judge that never says yes has no positives, so
// its precision is undefined (n/a), not 0, and its recall is 0.
func TestQualityAllNegative(t *testing.T) {
	no, yes := 0.0, 1.0
	mk := func(id string, solved bool, judge *float64) Row {
		return Row{ExampleID: id, Sources: map[string]*Verdict{
			judgeutil.SourceExecutable: {Solved: solved, Reward: b2f(solved)},
			judgeutil.SourceJudge:      {Judge: judge, Reward: *judge},
			judgeutil.SourceHybrid:     {Solved: solved, Judge: judge, Reward: b2f(solved) + *judge},
		}}
	}
	rep := Analyse(nil, []Row{mk("a", true, &no), mk("b", false, &no), mk("c", true, &no)}, 0, Options{Reps: 10})
	for _, q := range rep.Quality {
		if q.Precision.Value != nil || q.Precision.String() != "n/a (0/0)" || q.Recall.String() != "0.000 [0.000, 0.658] (0/2)" || q.FN != 2 || q.TN != 1 {
			t.Errorf("%s: precision %s recall %s %+v", q.Source, q.Precision, q.Recall, q)
		}
	}
	rep = Analyse(nil, []Row{mk("a", false, &yes), mk("b", false, &no)}, 0, Options{Reps: 10})
	if q := rep.Quality[0]; q.Recall.String() != "n/a (0/0)" || q.Precision.String() != "0.000 [0.000, 0.793] (0/1)" || strings.Join(q.FalsePositives, ",") != "a/r0" {
		t.Errorf("nothing solved: %+v", q)
	}
	md := Markdown(rep)
	if !strings.Contains(md, "n/a (0/0)") {
		t.Errorf("markdown does not show n/a:\n%s", md)
	}
}
