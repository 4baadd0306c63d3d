package web

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
)

// artifactLines reads a results file with artifact's reader under the
// dashboard's options (its bound on a row; too-large and unreadable rows
// set aside, as the run page's report sets them aside): the lines of the
// rows, of the too-large rows and of the unreadable ones.
func artifactLines(t *testing.T, path string, maxRow int64) (rows []artifact.Result, lines, tooLarge, bad []int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	opts := artifact.ReadOptions{
		MaxRowBytes: maxRow,
		TooLarge:    func(line int, _ int64) { tooLarge = append(tooLarge, line) },
		BadRow:      func(line int, _ error) error { bad = append(bad, line); return nil },
	}
	err = artifact.EachRow(f, path, opts, artifact.DecodeResult, func(line int, r artifact.Result) error {
		rows, lines = append(rows, r), append(lines, line)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return rows, lines, tooLarge, bad
}

// TestIndexFollowsArtifactPolicy: the dashboard's index of results.jsonl
// (run page and run list counts, transcript list, rollout pages) has the
// rows artifact's reader has, at every stage of a file being written,
// whether it is read whole or only its appended tail.
func TestIndexFollowsArtifactPolicy(t *testing.T) {
	const maxRow = 4096
	row := func(i int) string {
		b, _ := json.Marshal(artifact.Result{Index: i, Rollout: 0, FinalText: "answer", Reward: float64(i) / 10})
		return string(b)
	}
	r0, r1, r2 := row(0), row(1), row(2)
	big := `{"index":7,"final_text":"` + strings.Repeat("a", 2*maxRow) + `"}`
	const bom = "\xef\xbb\xbf"
	cases := []struct {
		name   string
		status string
		// stages are appended to results.jsonl one after the other; the
		// index is checked after each.
		stages []string
	}{
		{"terminated last line", artifact.StatusCompleted, []string{r0 + "\n" + r1 + "\n"}},
		{"finished run, unterminated last line", artifact.StatusCompleted, []string{r0 + "\n" + r1}},
		{"finished run, unterminated only line", artifact.StatusCompleted, []string{r0}},
		{"interrupted run, torn last line", artifact.StatusInterrupted, []string{r0 + "\n" + r1[:10]}},
		{"running run, torn last line then completed", artifact.StatusRunning, []string{r0 + "\n" + r1[:10], r1[10:] + "\n" + r2 + "\n"}},
		{"running run, row before its newline", artifact.StatusRunning, []string{r0 + "\n" + r1, "\n", r2 + "\n"}},
		{"unterminated row continued on its line", artifact.StatusRunning, []string{r0 + "\n" + r1, r2 + "\n"}},
		{"BOM on the first line", artifact.StatusCompleted, []string{bom + r0 + "\n" + r1 + "\n"}},
		{"BOM on an unterminated only line", artifact.StatusCompleted, []string{bom + r0}},
		{"CRLF", artifact.StatusCompleted, []string{r0 + "\r\n" + r1 + "\r\n"}},
		{"CRLF, unterminated last line", artifact.StatusCompleted, []string{r0 + "\r\n" + r1 + "\r"}},
		{"blank and white-space lines", artifact.StatusCompleted, []string{"\n" + r0 + "\n \t\n\t" + r1 + " \n\n"}},
		{"oversized line", artifact.StatusCompleted, []string{r0 + "\n" + big + "\n" + r1 + "\n"}},
		{"oversized unterminated last line", artifact.StatusCompleted, []string{r0 + "\n" + big}},
		{"running run, oversized line then completed", artifact.StatusRunning, []string{r0 + "\n" + big[:maxRow+100], big[maxRow+100:] + "\n" + r1}},
		{"unreadable middle line", artifact.StatusCompleted, []string{r0 + "\n{oops\n" + r1 + "\n"}},
		{"reference harness rows", artifact.StatusCompleted, []string{`{"index":0,"predicted_label":"Benign","answer":"Benign"}` + "\n" + `{"index":1,"completion":"x","reward":1}`}},
	}
	root := t.TempDir()
	s, err := New(root, Options{MaxRowBytes: maxRow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rel := filepath.Join("evals", "policy", string(rune('a'+i)))
			dir := filepath.Join(root, rel)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			meta := artifact.Metadata{RunID: filepath.Base(rel), Environment: "network-logs", Model: "m", Status: tc.status}
			if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), &meta); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, artifact.ResultsFile)
			f, err := os.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			live := s.index(runRef{dir: dir, rel: rel})
			var prev, prevCopy []rowInfo
			for stage, chunk := range tc.stages {
				if _, err := f.WriteString(chunk); err != nil {
					t.Fatal(err)
				}
				got, err := live.update()
				if err != nil {
					t.Fatal(err)
				}
				// A snapshot handed out is never written to.
				if !slices.Equal(prev, prevCopy) {
					t.Fatalf("stage %d: the previous snapshot changed", stage)
				}
				prev, prevCopy = got, slices.Clone(got)
				// The same file indexed whole, as a fresh dashboard does.
				whole, err := (&fileIndex{name: path, open: func() (*os.File, error) { return os.Open(path) }, maxRow: maxRow}).update()
				if err != nil {
					t.Fatal(err)
				}
				rows, lines, tooLarge, bad := artifactLines(t, path, maxRow)
				want := slices.Sorted(slices.Values(slices.Concat(lines, tooLarge, bad)))
				var gotLines, gotTooLarge, gotBad []int
				nRows := 0
				for _, ri := range got {
					gotLines = append(gotLines, int(ri.line))
					switch {
					case ri.flags&flagTooLarge != 0:
						gotTooLarge = append(gotTooLarge, int(ri.line))
					case ri.flags&flagUnreadable != 0:
						gotBad = append(gotBad, int(ri.line))
					default:
						nRows++
					}
				}
				if len(got) != len(want) || nRows != len(rows) || !slices.Equal(gotLines, want) ||
					!slices.Equal(gotTooLarge, tooLarge) || !slices.Equal(gotBad, bad) {
					t.Fatalf("stage %d: index has %d entries (%d rows) at lines %v, too large %v, unreadable %v; artifact reads %d rows at lines %v, too large %v, unreadable %v",
						stage, len(got), nRows, gotLines, gotTooLarge, gotBad, len(rows), lines, tooLarge, bad)
				}
				if !slices.Equal(got, whole) {
					t.Fatalf("stage %d: the tail-read index %+v differs from the file indexed whole %+v", stage, got, whole)
				}
				// With nothing set aside and no line near a bound, the count is
				// the one svbench report (artifact's default policy) gives.
				if st, _ := f.Stat(); len(tooLarge) == 0 && len(bad) == 0 && st.Size() <= maxRow {
					all, err := artifact.ReadResults(path)
					if err != nil || len(all) != len(got) {
						t.Fatalf("stage %d: index has %d rows, artifact.ReadResults %d (%v)", stage, len(got), len(all), err)
					}
				}
				// Each row reads back as artifact decodes it.
				k := 0
				for _, ri := range got {
					if ri.flags&(flagTooLarge|flagUnreadable) != 0 {
						continue
					}
					r, err := live.readRow(ri)
					if err != nil {
						t.Fatalf("stage %d: line %d: %v", stage, ri.line, err)
					}
					if r.Index != rows[k].Index || r.FinalText != rows[k].FinalText || int(ri.index) != rows[k].Index {
						t.Errorf("stage %d: line %d reads as index %d (indexed %d), artifact has %d", stage, ri.line, r.Index, ri.index, rows[k].Index)
					}
					k++
				}
			}
		})
	}
	// The run list counts a running run's rows from the index.
	ts := newTestServer(t, root)
	_, body, _ := get(t, ts, "/api/runs")
	for i, tc := range cases {
		if tc.status != artifact.StatusRunning {
			continue
		}
		rel := filepath.ToSlash(filepath.Join("evals", "policy", string(rune('a'+i))))
		path := filepath.Join(root, filepath.FromSlash(rel), artifact.ResultsFile)
		rows, _, tooLarge, bad := artifactLines(t, path, DefaultMaxRowBytes)
		want := len(rows) + len(tooLarge) + len(bad)
		if !strings.Contains(body, `"id":"`+rel+`","status":"running","rows":`+strconv.Itoa(want)+`,`) {
			t.Errorf("api/runs: %s: want %d rows in %s", rel, want, body)
		}
	}
}
