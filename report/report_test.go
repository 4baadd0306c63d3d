package report

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/metrics"
)

// e1Row builds a svbench E1 row.
func e1Row(i int, label string, conf float64, answer string, meta map[string]any) artifact.Result {
	return artifact.Result{
		Index: i, Answer: json.RawMessage(answer), Meta: meta, Reward: 1, FinalText: "x",
		Components: map[string]float64{"accuracy": 1, "format": 0.5},
		Parsed:     map[string]any{"predicted_label": label, "confidence": conf},
	}
}

// svgElements decodes an SVG fully and counts its element names.
func svgElements(t *testing.T, b []byte) map[string]int {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	seen := map[string]int{}
	depth := 0
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("malformed SVG: %v\n%s", err, b)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if depth == 0 && (e.Name.Local != "svg" || e.Name.Space != "http://www.w3.org/2000/svg") {
				t.Fatalf("root element %v", e.Name)
			}
			depth++
			seen[e.Name.Local]++
		case xml.EndElement:
			depth--
		}
	}
	if depth != 0 || seen["svg"] != 1 {
		t.Fatalf("unbalanced SVG (depth %d)", depth)
	}
	return seen
}

func TestCharts(t *testing.T) {
	var cal metrics.Calibration
	var rc metrics.RiskCoverage
	for i := range 50 {
		c := float64(i%11) / 10
		cal.Add(c, i%3 != 0)
		rc.Add(c*0.9, i%3 != 0)
	}
	hostile := `<script>alert("x")</script> & ]]>`
	tests := []struct {
		name string
		svg  []byte
		want map[string]int // minimum counts
	}{
		{"reliability", ReliabilityDiagram("Reliability "+hostile, cal.Bins()), map[string]int{"rect": 10, "line": 20, "text": 12, "title": 1}},
		{"reliability empty", ReliabilityDiagram("empty", (&metrics.Calibration{}).Bins()), map[string]int{"line": 20}},
		{"risk coverage", RiskCoverageChart("RC", rc.Curve()), map[string]int{"polyline": 1, "path": 1, "circle": 2}},
		{"risk coverage empty", RiskCoverageChart("RC", (&metrics.RiskCoverage{}).Curve()), map[string]int{"text": 13}},
		{"confusion", ConfusionHeatmap("CM", []string{"Malicious", hostile}, []string{"M", "B", "Abstain"}, [][]int{{3, 1, 0}, {2, 9, 1}}), map[string]int{"rect": 7, "text": 14}},
		{"bar", BarChart("Bars", "share "+hostile, []string{"a", hostile}, []float64{0.2, 0.9}, []int{4, 7}, true), map[string]int{"rect": 3, "line": 7}},
		{"subtitled", WithSubtitle(BarChart("Bars", "x", []string{"a"}, []float64{0.5}, nil, true), "model "+hostile+" · e1"), map[string]int{"rect": 2, "title": 1}},
		{"line chart", LineChart("Curve "+hostile, "step", "reward", []float64{0, 10, 20}, []Series{{Name: hostile, Mean: []float64{0.1, 0.5, 0.7}, Lo: []float64{0, 0.3, 0.6}, Hi: []float64{0.2, 0.7, 0.8}}}, false), map[string]int{"polyline": 1, "polygon": 1, "text": 10}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			seen := svgElements(t, tc.svg)
			for el, n := range tc.want {
				if seen[el] < n {
					t.Errorf("%d <%s>, want at least %d", seen[el], el, n)
				}
			}
			if seen["script"] != 0 || bytes.Contains(tc.svg, []byte("<script")) {
				t.Error("label text injected markup")
			}
		})
	}
	// Counts appear on the reliability diagram.
	if b := ReliabilityDiagram("r", cal.Bins()); !bytes.Contains(b, []byte(fmt.Sprintf("n=%d", cal.Bins()[0].Count))) {
		t.Error("bin count label missing")
	}
}

func TestTable(t *testing.T) {
	got := Table([]string{"a", "b"}, [][]string{{"x|y", "line\nbreak"}, {"only"}})
	want := "| a | b |\n|---|---|\n| x\\|y | line break |\n| only |  |\n"
	if got != want {
		t.Errorf("Table =\n%q\nwant\n%q", got, want)
	}
}

// A row over the bound is skipped and reported when the reader asks for
// it, an error otherwise; the rows around it are read either way.
func TestDecodeResultsTooLarge(t *testing.T) {
	sv, _ := json.Marshal(e1Row(0, "Benign", 0.7, `"Benign"`, nil))
	long := `{"index":1,"final_text":"` + strings.Repeat("A", 4096) + `"}` + "\n"
	data := string(sv) + "\n" + long + string(sv) + "\n" + long[:2000]
	var skipped []string
	rows, lines, err := DecodeResults(strings.NewReader(data), "r.jsonl", LoadOptions{MaxRowBytes: 1024,
		TooLarge: func(line int, size int64) { skipped = append(skipped, fmt.Sprintf("%d:%d", line, size)) }})
	if err != nil || len(rows) != 2 || fmt.Sprint(lines) != "[1 3]" {
		t.Fatalf("%d rows at %v, %v", len(rows), lines, err)
	}
	// The partial last line is a writer mid-row, not a row too large.
	if want := fmt.Sprintf("[2:%d]", len(long)); fmt.Sprint(skipped) != want {
		t.Fatalf("skipped %v, want %s", skipped, want)
	}
	if _, _, err := DecodeResults(strings.NewReader(data), "r.jsonl", LoadOptions{MaxRowBytes: 1024}); err == nil || !strings.Contains(err.Error(), "r.jsonl: line 2: row longer than") {
		t.Fatalf("without TooLarge: %v", err)
	}
}

func TestLoadResults(t *testing.T) {
	dir := t.TempDir()
	sv, _ := json.Marshal(e1Row(0, "Benign", 0.7, `"Benign"`, nil))
	tests := []struct {
		name    string
		data    string
		rows    int
		lines   []int
		errLine string
	}{
		{"both formats", string(sv) + "\n\n" + `{"index":1,"predicted_label":"Malicious","confidence":0.9,"answer":1}` + "\n", 2, []int{1, 3}, ""},
		{"complete unterminated tail kept", string(sv) + "\n" + string(sv), 2, []int{1, 2}, ""},
		{"partial tail dropped", string(sv) + "\n" + `{"index":1,"pred`, 1, []int{1}, ""},
		{"malformed middle line", string(sv) + "\n{oops\n" + string(sv) + "\n", 0, nil, "line 2"},
		{"bad field type", `{"index":"seven","predicted_label":"Benign"}` + "\n", 0, nil, `line 1: field "index"`},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, fmt.Sprintf("r%d.jsonl", i))
			if err := os.WriteFile(p, []byte(tc.data), 0o644); err != nil {
				t.Fatal(err)
			}
			rows, lines, err := LoadResults(p)
			if tc.errLine != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errLine) {
					t.Fatalf("error %v, want one naming %q", err, tc.errLine)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(rows) != tc.rows || fmt.Sprint(lines) != fmt.Sprint(tc.lines) {
				t.Fatalf("%d rows at lines %v, want %d at %v", len(rows), lines, tc.rows, tc.lines)
			}
		})
	}
	rows, _, _ := LoadResults(writeFile(t, dir, "ref.jsonl",
		`{"index":4,"predicted_label":"Malicious","confidence":0.9,"answer":"Benign","completion_error":"timeout","meta":{"scenario":"s"}}`+"\n"))
	r := rows[0]
	if r.Index != 4 || r.Error != "timeout" || r.Parsed["predicted_label"] != "Malicious" || r.Meta["scenario"] != "s" || string(r.Answer) != `"Benign"` {
		t.Errorf("reference row mapped to %+v", r)
	}
}

func writeFile(t *testing.T, dir, name, data string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFromRunWriteDir(t *testing.T) {
	dir := t.TempDir()
	var buf bytes.Buffer
	for i := range 40 {
		label, ans := "Malicious", `"Malicious"`
		if i%3 == 0 {
			ans = `"Benign"`
		}
		if i%7 == 0 {
			label = ""
		}
		b, _ := json.Marshal(e1Row(i, label, float64(i%10)/10, ans, map[string]any{"difficulty": i % 2}))
		buf.Write(append(b, '\n'))
	}
	writeFile(t, dir, artifact.ResultsFile, buf.String())
	meta := artifact.Metadata{Environment: "sv-env-" + testEnv, Model: "m1", Dataset: "mini", DatasetRev: "sha256:0123456789abcdef", Seed: 5, Started: time.Unix(1700000000, 0)}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), meta); err != nil {
		t.Fatal(err)
	}
	rep, err := FromRun(dir, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.EnvID != testEnv || !strings.Contains(rep.Markdown, "sha256:0123456789abcdef") {
		t.Errorf("env %s; metadata not in report", rep.EnvID)
	}
	out := filepath.Join(dir, "out")
	if err := WriteDir(out, rep); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"summary.json", "report.md", "reliability.svg", "risk_coverage.svg", "confusion.svg"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
	_, err = FromRun(filepath.Join(dir, artifact.ResultsFile), testAlias, Options{Strict: true})
	var se *StrictError
	if !errors.As(err, &se) || se.Problems[0].Line != 1 || !strings.Contains(err.Error(), "line 8 (index 7") {
		t.Errorf("strict error should name file lines: %v", err)
	}
	// Same seed, same CIs: a report is reproducible from its artifacts.
	again, _ := FromRun(dir, "", Options{})
	if fmt.Sprint(again.Summary["ci95"]) != fmt.Sprint(rep.Summary["ci95"]) {
		t.Error("bootstrap not reproducible")
	}
}

func TestScoreboard(t *testing.T) {
	root := t.TempDir()
	mk := func(name, model string, started time.Time, correct int, writeSummary bool) {
		dir := filepath.Join(root, name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		for i := range 10 {
			label := "Benign"
			if i < correct {
				label = "Malicious"
			}
			b, _ := json.Marshal(e1Row(i, label, 0.8, `"Malicious"`, nil))
			buf.Write(append(b, '\n'))
		}
		writeFile(t, dir, artifact.ResultsFile, buf.String())
		meta := artifact.Metadata{RunID: name, Environment: testEnv, Model: model, DatasetRev: "sha256:aa", Started: started, Status: artifact.StatusCompleted}
		if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), meta); err != nil {
			t.Fatal(err)
		}
		if writeSummary {
			rep, err := FromRun(dir, "", Options{BootstrapReps: -1})
			if err != nil {
				t.Fatal(err)
			}
			if err := WriteDir(dir, rep); err != nil {
				t.Fatal(err)
			}
		}
	}
	t0 := time.Unix(1700000000, 0)
	mk("a-old", "model-a", t0, 9, true)
	mk("a-new", "model-a", t0.Add(time.Hour), 3, false)
	mk("b", "model-b", t0, 6, true)
	if err := os.MkdirAll(filepath.Join(root, "broken"), 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, root, "broken/metadata.json", "{")
	sb, err := CollectScoreboard(root, ScoreboardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(sb.Runs) != 2 || sb.Runs[0].Model != "model-b" || sb.Runs[1].RunID != "a-new" || sb.Runs[1].Metrics["accuracy"] != 0.3 {
		t.Fatalf("latest-only scoreboard %+v", sb.Runs)
	}
	if sb.Runs[1].SummaryNote == "" || len(sb.Skipped) != 1 {
		t.Errorf("computed note %q, skipped %v", sb.Runs[1].SummaryNote, sb.Skipped)
	}
	sb, err = CollectScoreboard(root, ScoreboardOptions{All: true, Env: testEnv})
	if err != nil {
		t.Fatal(err)
	}
	if len(sb.Runs) != 3 || sb.Runs[0].RunID != "a-old" {
		t.Fatalf("all-runs scoreboard %+v", sb.Runs)
	}
	if err := WriteScoreboard(root, sb); err != nil {
		t.Fatal(err)
	}
	md, _ := os.ReadFile(filepath.Join(root, "scoreboard.md"))
	if !strings.Contains(string(md), "## "+testEnv) || !strings.Contains(string(md), "**accuracy**") || !strings.Contains(string(md), "ece ↓") {
		t.Errorf("scoreboard.md:\n%s", md)
	}
}

func TestResolve(t *testing.T) {
	for _, n := range []string{testAlias, "T1", testEnv, "sv-env-" + testEnv, " Test_Detect "} {
		if id, err := Resolve(n); err != nil || id != testEnv {
			t.Errorf("Resolve(%q) = %q, %v", n, id, err)
		}
	}
	if _, err := Resolve("e3"); err == nil || !strings.Contains(err.Error(), testEnv) {
		t.Errorf("env without a builder: %v (the error should list the builders)", err)
	}
}

func TestRegisterRefusesClashes(t *testing.T) {
	build := func([]artifact.Result, *artifact.Metadata, Options) (*Report, error) { return &Report{}, nil }
	newEnv := func(env.Options) (env.Environment, error) { return nil, nil }
	tests := []struct {
		name string
		reg  func()
	}{
		{"no id", func() { Register(Spec{Build: build}) }},
		{"no builder", func() { Register(Spec{Env: env.Spec{ID: "x-no-builder", New: newEnv}}) }},
		{"same id", func() { register(testEnv, nil, Spec{Build: build}) }},
		{"alias taken", func() { register("x-other", []string{"T1"}, Spec{Build: build}) }},
		{"alias is another id", func() { register("x-other2", []string{"sv-env-" + testEnv}, Spec{Build: build}) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: registered", tc.name)
				}
			}()
			tc.reg()
		})
	}
	for _, n := range []string{"x-other", "x-no-builder"} {
		if _, err := Resolve(n); err == nil {
			t.Errorf("a refused spec left the name %s behind", n)
		}
	}
}

func FuzzDecodeRow(f *testing.F) {
	f.Add([]byte(`{"index":1,"predicted_label":"Malicious","confidence":0.9,"answer":"Benign"}`))
	f.Add([]byte(`{"final_text":"x","parsed":{"predicted_label":3,"confidence":"high"},"answer":1}`))
	f.Add([]byte(`{"predicted_label":null,"confidence":1e999}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := artifact.DecodeResult(b)
		if err != nil {
			return
		}
		// Whatever decodes must build or fail cleanly, never panic.
		_, _ = Build(testEnv, []artifact.Result{r}, nil, Options{BootstrapReps: 3})
	})
}

// TestIntervalsResampleExamples: a deterministic policy run with -r 4 has
// four identical answers per example, which carry no more evidence than
// one, so its intervals must be those of the -r 1 run (issue #24, item 1;
// the row bootstrap made them about half as wide).
func TestIntervalsResampleExamples(t *testing.T) {
	var r1, r4 []artifact.Result
	for k := range 4 {
		for i := range 40 {
			label := "Benign"
			if i%5 < 3 {
				label = "Malicious"
			}
			row := e1Row(i, label, 0.8, `"Malicious"`, nil)
			row.Rollout = k
			if k == 0 {
				r1 = append(r1, row)
			}
			r4 = append(r4, row)
		}
	}
	build := func(rows []artifact.Result) (metrics.CI, map[string]any) {
		t.Helper()
		rep, err := Build(testEnv, rows, &artifact.Metadata{Seed: 42}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		return rep.Summary["ci95"].(map[string]metrics.CI)["accuracy"], rep.Summary["bootstrap"].(map[string]any)
	}
	c1, boot := build(r1)
	c4, _ := build(r4)
	if c1 != c4 {
		t.Errorf("accuracy interval with -r 4 %+v (width %.4f), with -r 1 %+v (width %.4f): identical rollouts must not narrow it",
			c4, c4.Hi-c4.Lo, c1, c1.Hi-c1.Lo)
	}
	if m, _ := boot["method"].(string); !strings.Contains(m, "cluster bootstrap over examples") {
		t.Errorf("bootstrap method %q does not say it resamples examples", m)
	}
}

// TestScoreboardDropsRowBootstrapIntervals: a summary.json written by the
// row bootstrap keeps its numbers on the scoreboard but not its intervals.
func TestScoreboardDropsRowBootstrapIntervals(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "old")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, artifact.ResultsFile, "")
	meta := artifact.Metadata{RunID: "old", Environment: testEnv, Model: "m", Status: artifact.StatusCompleted}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), meta); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		method string
		ci     bool
	}{{"percentile, resampling scored rows", false}, {BootstrapMethod, true}} {
		writeFile(t, dir, artifact.SummaryFile, `{"n_rows": 10, "key_metrics": [{"name": "accuracy", "value": 0.6, "higher_is_better": true, "ci_lo": 0.5, "ci_hi": 0.7}],
			"bootstrap": {"method": "`+tc.method+`"}}`)
		sb, err := CollectScoreboard(root, ScoreboardOptions{})
		if err != nil || len(sb.Runs) != 1 {
			t.Fatalf("%v %+v", err, sb)
		}
		if got := sb.Runs[0].CI != nil; got != tc.ci || sb.Runs[0].Metrics["accuracy"] != 0.6 {
			t.Errorf("method %q: CI %v, metrics %v", tc.method, sb.Runs[0].CI, sb.Runs[0].Metrics)
		}
	}
}

// TestNoIntervalWithoutResamples: a report built with the bootstrap off
// (the dashboard, a scoreboard of runs without summary.json) carries no
// interval, since its CIs are the point three times (issue #24, item 2).
func TestNoIntervalWithoutResamples(t *testing.T) {
	var rows []artifact.Result
	for i := range 10 {
		label := "Benign"
		if i < 6 {
			label = "Malicious"
		}
		rows = append(rows, e1Row(i, label, 0.8, `"Malicious"`, nil))
	}
	rep, err := Build(testEnv, rows, nil, Options{BootstrapReps: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range rep.Key {
		if k.Lo != nil || k.Hi != nil {
			t.Errorf("key metric %s has an interval [%v, %v] though nothing was resampled", k.Name, *k.Lo, *k.Hi)
		}
	}
	if got := FCI(metrics.CI{Point: 0.5, Lo: 0.5, Hi: 0.5}, 0); got != "0.5000" {
		t.Errorf("FCI without resamples = %q", got)
	}
}

// TestRegisterIsOneRegistration: one Register call joins the environment
// (its names resolve in the env registry) with its report, key-metrics
// version and condition labels.
func TestRegisterIsOneRegistration(t *testing.T) {
	build := func([]artifact.Result, *artifact.Metadata, Options) (*Report, error) {
		return &Report{EnvID: "x-joined"}, nil
	}
	Register(Spec{
		Env:               env.Spec{ID: "x-joined", Aliases: []string{"xj"}, New: func(env.Options) (env.Environment, error) { return nil, nil }},
		Build:             build,
		KeyMetricsVersion: 3,
		Labels: func(c map[string]string) []string {
			if c["mode"] == "sim" {
				return []string{"simulated"}
			}
			return nil
		},
	})
	if id, err := env.Default.Resolve("XJ"); err != nil || id != "x-joined" {
		t.Fatalf("env registry: %q, %v", id, err)
	}
	if id, err := Resolve("sv-env-xj"); err != nil || id != "x-joined" {
		t.Fatalf("report registry: %q, %v", id, err)
	}
	if v := KeyMetricsVersion("xj"); v != 3 {
		t.Errorf("key metrics version %d, want 3", v)
	}
	if rep, err := builderFor("x-joined")(nil, nil, Options{}); err != nil || rep.EnvID != "x-joined" {
		t.Errorf("builder: %+v, %v", rep, err)
	}
	meta := &artifact.Metadata{Environment: "xj", Config: env.ConfigValues{"mode": json.RawMessage(`"sim"`)}}
	if got := ConditionLabels(meta); !slices.Equal(got, []string{"simulated"}) {
		t.Errorf("labels %v, want [simulated]", got)
	}
	meta.Config["mode"] = json.RawMessage(`"live"`)
	if got := ConditionLabels(meta); got != nil {
		t.Errorf("labels %v, want none", got)
	}
}
