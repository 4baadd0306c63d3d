package report

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/svbench/svbench/artifact"
)

// collectRun writes n rows as a runner does and hands each to a Collector
// from concurrent workers, out of order. prior is lines already in the
// file (a resumed run's) that the Collector never sees.
func collectRun(t *testing.T, n int, prior []string, skip map[int]bool, bad map[int]string) (string, *Collector) {
	t.Helper()
	dir := t.TempDir()
	var file strings.Builder
	for _, p := range prior {
		file.WriteString(p + "\n")
	}
	type written struct {
		line int
		row  []byte
	}
	var ws []written
	for i := range n {
		label, ans := "Malicious", `"Malicious"`
		if i%3 == 0 {
			ans = `"Benign"`
		}
		if i%5 == 0 {
			label = ""
		}
		b, err := json.Marshal(e1Row(i, label, float64(i%10)/10, ans, map[string]any{"difficulty": i % 2}))
		if err != nil {
			t.Fatal(err)
		}
		if s, ok := bad[i+1]; ok {
			b = []byte(s)
		}
		file.Write(append(b, '\n'))
		ws = append(ws, written{i + 1, b})
	}
	writeFile(t, dir, artifact.ResultsFile, file.String())
	meta := artifact.Metadata{Environment: testEnv, Model: "m", Seed: 3}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), meta); err != nil {
		t.Fatal(err)
	}
	rand.New(rand.NewPCG(1, 2)).Shuffle(len(ws), func(i, j int) { ws[i], ws[j] = ws[j], ws[i] })
	c := NewCollector()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for k := w; k < len(ws); k += 4 {
				if !skip[ws[k].line] {
					c.Add(ws[k].line, ws[k].row)
				}
			}
		})
	}
	wg.Wait()
	return dir, c
}

func sameReport(t *testing.T, what string, got, want *Report, gotErr, wantErr error) {
	t.Helper()
	if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
		t.Fatalf("%s: error %v, FromRun's %v", what, gotErr, wantErr)
	}
	if got == nil || want == nil {
		if got != want {
			t.Fatalf("%s: report %v, FromRun's %v", what, got, want)
		}
		return
	}
	g, _ := json.Marshal(got.Summary)
	w, _ := json.Marshal(want.Summary)
	if string(g) != string(w) || got.Markdown != want.Markdown {
		t.Errorf("%s: the collected report differs from the file's:\n got %s\nwant %s", what, g, w)
	}
	if len(got.Problems) != len(want.Problems) {
		t.Fatalf("%s: %d problems, FromRun %d", what, len(got.Problems), len(want.Problems))
	}
	for i := range got.Problems {
		if got.Problems[i].Line != want.Problems[i].Line {
			t.Errorf("%s: problem %d on line %d, FromRun's on %d", what, i, got.Problems[i].Line, want.Problems[i].Line)
		}
	}
}

func TestCollectorReportIsTheFilesReport(t *testing.T) {
	dir, c := collectRun(t, 60, nil, nil, nil)
	if _, _, ok := c.Rows(); !ok {
		t.Fatal("a whole run's rows were not all collected")
	}
	for _, opts := range []Options{{}, {Strict: true}} {
		got, gotErr := c.Report(dir, "", opts)
		want, wantErr := FromRun(dir, "", opts)
		sameReport(t, "strict="+map[bool]string{true: "yes", false: "no"}[opts.Strict], got, want, gotErr, wantErr)
		if opts.Strict && (gotErr == nil || !strings.Contains(gotErr.Error(), "line 1 (index 0")) {
			t.Errorf("strict: the collected report's error should name line 1 as FromRun's does: %v", gotErr)
		}
	}

	// The report is built from the collected rows, not read back: a file
	// rewritten to the same size with other confidences leaves it unchanged.
	path := filepath.Join(dir, artifact.ResultsFile)
	before, _ := c.Report(dir, "", Options{})
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	swapped := regexp.MustCompile(`"confidence":0\.[0-9]`).ReplaceAllString(string(raw), `"confidence":0.0`)
	if len(swapped) != len(raw) {
		t.Fatal("the rewrite changed the size")
	}
	writeFile(t, dir, artifact.ResultsFile, swapped)
	after, _ := c.Report(dir, "", Options{})
	reread, err := FromRun(dir, "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	b1, _ := json.Marshal(before.Summary)
	b2, _ := json.Marshal(after.Summary)
	b3, _ := json.Marshal(reread.Summary)
	if string(b1) != string(b2) {
		t.Error("the collected report read the file back")
	}
	if string(b2) == string(b3) {
		t.Error("the rewrite did not change the file's report: the check above proves nothing")
	}
}

// Whenever the Collector does not hold exactly the file's rows, the report
// is the file's.
func TestCollectorFallsBackToTheFile(t *testing.T) {
	prior, _ := json.Marshal(e1Row(99, "Benign", 0.4, `"Benign"`, nil))
	for _, tc := range []struct {
		name  string
		prior []string
		skip  map[int]bool
		bad   map[int]string
	}{
		{name: "resumed run: the file holds earlier rows", prior: []string{string(prior)}},
		{name: "a row never added", skip: map[int]bool{7: true}},
		{name: "the last row never added", skip: map[int]bool{30: true}},
		{name: "a row that does not decode", bad: map[int]string{4: `{"index": 3, "final_text": [`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, c := collectRun(t, 30, tc.prior, tc.skip, tc.bad)
			got, gotErr := c.Report(dir, "", Options{})
			want, wantErr := FromRun(dir, "", Options{})
			sameReport(t, tc.name, got, want, gotErr, wantErr)
		})
	}
	var nilC *Collector
	dir, _ := collectRun(t, 10, nil, nil, nil)
	got, gotErr := nilC.Report(dir, "", Options{})
	want, wantErr := FromRun(dir, "", Options{})
	sameReport(t, "nil collector", got, want, gotErr, wantErr)
}
