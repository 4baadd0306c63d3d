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
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/artifact"
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
		{"bar", BarChart("Bars", []string{"a", hostile}, []float64{0.2, 0.9}, true), map[string]int{"rect": 3}},
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

func TestBuildE1(t *testing.T) {
	rows := []artifact.Result{
		e1Row(0, "Malicious", 0.9, `"Malicious"`, map[string]any{"scenario": "a"}), // TP
		e1Row(1, "Benign", 0.8, `"malicious"`, map[string]any{"scenario": "a"}),    // FN
		e1Row(2, "Benign", 0.6, `0`, map[string]any{"scenario": "b"}),              // TN
		e1Row(3, "Malicious", 0.3, `false`, map[string]any{"scenario": "b"}),       // FP
		e1Row(4, "Abstain", 0.5, `1`, nil),                                         // abstain
		e1Row(5, "", 0, `"Benign"`, nil),                                           // unparsed → abstain
		{Index: 6, Rollout: 1, Error: "429 rate limited", Answer: json.RawMessage(`"Benign"`)},
	}
	rep, err := Build("e1", rows, nil, Options{BootstrapReps: 200})
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Summary["metrics"].(E1Metrics)
	cm := m.Confusion
	if cm.TP != 1 || cm.FN != 1 || cm.TN != 1 || cm.FP != 1 || cm.Abstain != 2 {
		t.Errorf("confusion %+v", cm)
	}
	// cost = 10·1 + 1·1 over 4 decided rows → 1 − 11/40.
	if m.Cost.TotalCost != 11 || m.Cost.CostWeightedAccuracy != 1-11.0/40 || m.Abstention.AbstainRate != 2.0/6 {
		t.Errorf("cost %+v abstention %+v", m.Cost, m.Abstention)
	}
	counts := rep.Summary["counts"].(map[string]int)
	if counts["error_rows"] != 1 || counts["unparsed_rows"] != 1 || counts["scored"] != 6 || counts["abstained_explicit"] != 1 {
		t.Errorf("counts %v", counts)
	}
	if len(rep.Problems) != 2 || rep.Problems[0].Kind != ProblemUnparsed || rep.Problems[1].Kind != ProblemError || rep.Problems[1].Row != 6 {
		t.Errorf("problems %+v", rep.Problems)
	}
	bd := rep.Summary["breakdown"].(map[string][]E1Group)
	if g := bd["scenario"]; len(g) != 3 || g[0].N != 2 || g[2].Name != "(none)" {
		t.Errorf("scenario breakdown %+v", g)
	}
	if _, ok := bd["difficulty"]; ok {
		t.Error("breakdown by a field no row has")
	}
	ci := rep.Summary["ci95"].(map[string]metrics.CI)
	if a := ci["accuracy"]; a.Point != 0.5 || a.Lo > a.Point || a.Hi < a.Point {
		t.Errorf("accuracy CI %+v", a)
	}
	if rep.Key[0].Name != "accuracy" || rep.Key[2].HigherIsBetter {
		t.Errorf("key metrics %+v", rep.Key)
	}
	for _, want := range []string{"# E1 network logs", "![Reliability diagram", "reliability.svg", "## By scenario", "counted as an\n  abstention"} {
		if !strings.Contains(rep.Markdown, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if rep.Summary["env"] != EnvNetworkLogs || rep.Summary["n_rows"] != 7 {
		t.Errorf("shared summary fields %v %v", rep.Summary["env"], rep.Summary["n_rows"])
	}

	// Strict refuses and says where.
	_, err = Build("network-logs", rows, nil, Options{Strict: true, BootstrapReps: -1})
	var se *StrictError
	if !errors.As(err, &se) || len(se.Problems) != 2 || !strings.Contains(err.Error(), "row 7 (index 6, rollout 1): error: 429") {
		t.Errorf("strict error %v", err)
	}

	bad := []artifact.Result{e1Row(0, "Benign", 1, `"maybe"`, nil)}
	if _, err := Build("e1", bad, nil, Options{}); err == nil || !strings.Contains(err.Error(), "row 1 (index 0") {
		t.Errorf("bad answer error %v", err)
	}
	if _, err := Build("e9", rows, nil, Options{}); err == nil {
		t.Error("unknown env accepted")
	}
}

func TestBuildE1Empty(t *testing.T) {
	for _, rows := range [][]artifact.Result{nil, {e1Row(0, "Abstain", 0.2, `"Benign"`, nil)}} {
		rep, err := Build("e1", rows, nil, Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(rep.Summary)
		if err != nil || bytes.Contains(b, []byte("NaN")) {
			t.Fatalf("summary not clean JSON: %v", err)
		}
	}
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
	meta := artifact.Metadata{Environment: "sv-env-network-logs", Model: "m1", Dataset: "mini", DatasetRev: "sha256:0123456789abcdef", Seed: 5, Started: time.Unix(1700000000, 0)}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), meta); err != nil {
		t.Fatal(err)
	}
	rep, err := FromRun(dir, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.EnvID != EnvNetworkLogs || !strings.Contains(rep.Markdown, "sha256:0123456789abcdef") {
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
	_, err = FromRun(filepath.Join(dir, artifact.ResultsFile), "e1", Options{Strict: true})
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
		meta := artifact.Metadata{RunID: name, Environment: "network-logs", Model: model, DatasetRev: "sha256:aa", Started: started, Status: artifact.StatusCompleted}
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
	sb, err = CollectScoreboard(root, ScoreboardOptions{All: true, Env: EnvNetworkLogs})
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
	if !strings.Contains(string(md), "## network-logs") || !strings.Contains(string(md), "**accuracy**") || !strings.Contains(string(md), "ece ↓") {
		t.Errorf("scoreboard.md:\n%s", md)
	}
}

func TestResolve(t *testing.T) {
	for _, n := range []string{"e1", "E1", "network-logs", "sv-env-network-logs", "network_logs"} {
		if id, err := Resolve(n); err != nil || id != EnvNetworkLogs {
			t.Errorf("Resolve(%q) = %q, %v", n, id, err)
		}
	}
	if _, err := Resolve("e3"); err == nil {
		t.Error("env without a builder resolved")
	}
}

func FuzzDecodeRow(f *testing.F) {
	f.Add([]byte(`{"index":1,"predicted_label":"Malicious","confidence":0.9,"answer":"Benign"}`))
	f.Add([]byte(`{"final_text":"x","parsed":{"predicted_label":3,"confidence":"high"},"answer":1}`))
	f.Add([]byte(`{"predicted_label":null,"confidence":1e999}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeRow(b)
		if err != nil {
			return
		}
		// Whatever decodes must build or fail cleanly, never panic.
		_, _ = Build("e1", []artifact.Result{r}, nil, Options{BootstrapReps: 3})
	})
}

func BenchmarkBuildE1(b *testing.B) {
	const n = 100_000
	rows := make([]artifact.Result, n)
	labels := []string{"Malicious", "Benign", "Abstain", ""}
	for i := range rows {
		ans := `"Malicious"`
		if i%2 == 0 {
			ans = `"Benign"`
		}
		rows[i] = e1Row(i, labels[i*7%4], float64(i%101)/100, ans, map[string]any{"scenario": fmt.Sprint("s", i%12)})
	}
	for _, reps := range []int{-1, 1000} {
		b.Run(fmt.Sprintf("rows=100k/bootstrap=%d", max(reps, 0)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Build("e1", rows, nil, Options{BootstrapReps: reps}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
