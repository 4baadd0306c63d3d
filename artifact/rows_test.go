package artifact

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func row(i int) string {
	b, _ := json.Marshal(Result{Index: i, FinalText: "x", Reward: float64(i)})
	return string(b)
}

// TestEachRowPolicy pins the one policy every results reader shares.
func TestEachRowPolicy(t *testing.T) {
	big := `{"index":9,"final_text":"` + strings.Repeat("a", 2048) + `"}`
	// many spans several of EachRow's decoding batches (256 rows): line i
	// holds row i-1, except the lines replaced in the cases below.
	many := func(n int, replace map[int]string) (string, []int) {
		var b strings.Builder
		var lines []int
		for line := 1; line <= n; line++ {
			if r, ok := replace[line]; ok {
				b.WriteString(r + "\n")
				continue
			}
			b.WriteString(row(line-1) + "\n")
			lines = append(lines, line)
		}
		return b.String(), lines
	}
	manyIn, manyLines := many(700, nil)
	badIn, badLines := many(700, map[int]string{300: "{oops", 513: "{oops"})
	largeIn, largeLines := many(600, map[int]string{257: big, 600: big})
	errIn, _ := many(600, map[int]string{520: "{oops"})
	for _, tc := range []struct {
		name      string
		in        string
		opts      ReadOptions
		wantLines []int
		wantErr   string
		tooLarge  []int
		bad       []int
	}{
		{name: "terminated", in: row(0) + "\n" + row(1) + "\n", wantLines: []int{1, 2}},
		{name: "complete unterminated tail kept", in: row(0) + "\n" + row(1), wantLines: []int{1, 2}},
		{name: "torn tail dropped", in: row(0) + "\n" + row(1)[:10], wantLines: []int{1}},
		{name: "BOM and CRLF", in: "\xef\xbb\xbf" + row(0) + "\r\n" + row(1) + "\r\n", wantLines: []int{1, 2}},
		{name: "blank lines", in: "\n" + row(0) + "\n  \n" + row(1) + "\n", wantLines: []int{2, 4}},
		{name: "bad middle row is an error", in: row(0) + "\n{oops\n" + row(1) + "\n", wantErr: "r.jsonl: line 2:"},
		{name: "bad middle row to BadRow", in: row(0) + "\n{oops\n" + row(1) + "\n", opts: ReadOptions{BadRow: func(int, error) error { return nil }}, wantLines: []int{1, 3}, bad: []int{2}},
		{name: "oversized row is an error", in: row(0) + "\n" + big + "\n", opts: ReadOptions{MaxRowBytes: 1024}, wantErr: "r.jsonl: line 2: row longer than"},
		{name: "oversized torn tail dropped", in: row(0) + "\n" + big, opts: ReadOptions{MaxRowBytes: 1024, TooLarge: func(int, int64) {}}, wantLines: []int{1}},
		{name: "white space, BOM and CR on any line", in: " \t\n\t" + row(0) + " \r\n" + "\xef\xbb\xbf" + row(1) + "\r", wantLines: []int{2, 3}},
		{name: "oversized row skipped", in: row(0) + "\n" + big + "\n" + row(1) + "\n", opts: ReadOptions{MaxRowBytes: 1024, TooLarge: func(int, int64) {}}, wantLines: []int{1, 3}, tooLarge: []int{2}},
		{name: "rows across batches in order", in: manyIn, wantLines: manyLines},
		{name: "bad rows across batches to BadRow", in: badIn, opts: ReadOptions{BadRow: func(int, error) error { return nil }}, wantLines: badLines, bad: []int{300, 513}},
		{name: "oversized rows across batches skipped", in: largeIn, opts: ReadOptions{MaxRowBytes: 1024, TooLarge: func(int, int64) {}}, wantLines: largeLines, tooLarge: []int{257, 600}},
		{name: "bad row in a later batch names its line", in: errIn, wantErr: "r.jsonl: line 520:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var tooLarge, bad []int
			if tc.opts.TooLarge != nil {
				tc.opts.TooLarge = func(line int, _ int64) { tooLarge = append(tooLarge, line) }
			}
			if tc.opts.BadRow != nil {
				tc.opts.BadRow = func(line int, _ error) error { bad = append(bad, line); return nil }
			}
			rows, lines, err := DecodeResults(strings.NewReader(tc.in), "r.jsonl", tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(lines, tc.wantLines) || !slices.Equal(tooLarge, tc.tooLarge) || !slices.Equal(bad, tc.bad) {
				t.Errorf("lines %v tooLarge %v bad %v; want %v %v %v", lines, tooLarge, bad, tc.wantLines, tc.tooLarge, tc.bad)
			}
			for i, r := range rows {
				// many's rows carry their line's number less one.
				if len(rows) > 256 && r.Index != lines[i]-1 {
					t.Fatalf("row %d (line %d) holds index %d: rows out of order", i, lines[i], r.Index)
				}
			}
		})
	}
}

// TestEachResultAgreesWithLoadResults: the streaming and the loading
// readers count the same rows (the issue: 6 rows in report, 5 in compare).
func TestEachResultAgreesWithLoadResults(t *testing.T) {
	p := filepath.Join(t.TempDir(), ResultsFile)
	var lines []string
	for i := range 6 {
		lines = append(lines, row(i))
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := EachResult(p, func(*Result) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	rows, _, err := LoadResults(p)
	if err != nil || n != 6 || len(rows) != 6 {
		t.Errorf("EachResult %d, LoadResults %d (%v); want 6", n, len(rows), err)
	}
}

func FuzzDecodeResult(f *testing.F) {
	f.Add([]byte(`{"index":1,"predicted_label":"Malicious","confidence":0.9,"answer":"Benign"}`))
	f.Add([]byte(row(3)))
	f.Add([]byte(`{"index":2,"prompt":[{"role":"user","content":"flow"}],"final_text":"{}","reward":1}`))
	f.Add([]byte(`{"index":2,"prompt":5,"final_text":"{}"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		whole, err := DecodeResult(b)
		slim, slimErr := DecodeResultWithoutPrompt(b)
		if err != nil {
			// Only the prompt goes unchecked: a row DecodeResult refuses
			// for its prompt alone may pass, nothing else may.
			return
		}
		// A row that decodes whole decodes without its prompt to the same
		// row less the prompt.
		whole.Prompt = nil
		if slimErr != nil || !reflect.DeepEqual(whole, slim) {
			t.Fatalf("DecodeResultWithoutPrompt(%q) = %+v, %v; DecodeResult less the prompt = %+v", b, slim, slimErr, whole)
		}
	})
}

// TestDecodeResultWithoutPrompt: the prompt is neither kept nor
// type-checked; every other field, and the reference's row format, is as
// DecodeResult reads it.
func TestDecodeResultWithoutPrompt(t *testing.T) {
	for _, c := range []struct {
		name, row string
		ok        bool
	}{
		{"own row", `{"index":4,"rollout":1,"prompt":[{"role":"user","content":"flow"}],"completion":[{"role":"assistant","content":"a"}],"final_text":"a","reward":0.5,"components":{"f":1}}`, true},
		{"prompt of another type", `{"index":4,"prompt":"not messages","final_text":"a"}`, true},
		{"reference row", `{"index":1,"predicted_label":"Malicious","confidence":0.9,"answer":"Benign","prompt":[{"role":"user","content":"x"}]}`, true},
		{"not an object", `[1]`, false},
		{"bad reward", `{"index":4,"final_text":"a","reward":"high"}`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := DecodeResultWithoutPrompt([]byte(c.row))
			if (err == nil) != c.ok {
				t.Fatalf("err = %v, want ok %v", err, c.ok)
			}
			if !c.ok {
				return
			}
			if got.Prompt != nil {
				t.Fatalf("kept the prompt: %+v", got.Prompt)
			}
			want, err := DecodeResult([]byte(c.row))
			if err != nil {
				if c.name == "prompt of another type" {
					return
				}
				t.Fatal(err)
			}
			want.Prompt = nil
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

// TestPeekRowReadsWhatResultWrites: PeekRow reads back the fields of a
// marshalled Result (its names come from Result's tags, so a renamed field
// fails here, not silently in the dashboard's index).
func TestPeekRowReadsWhatResultWrites(t *testing.T) {
	solved, rec := false, 0.25
	for _, r := range []Result{
		{Index: 7, Rollout: 2, Reward: 1.5, Solved: &solved, Error: "boom", ScoreError: "bad", Trainer: &Trainer{Reward: &rec}},
		{Index: 1, Reward: -0.5},
	} {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		p, ok := PeekRow(b)
		if !ok || p.Index != r.Index || p.Rollout != r.Rollout || p.Reward != r.Reward || p.Failed != (r.Error != "") || p.ScoreError != (r.ScoreError != "") ||
			(p.Solved == nil) != (r.Solved == nil) || (p.Recorded == nil) != (r.Trainer == nil) {
			t.Fatalf("PeekRow(%s) = %+v", b, p)
		}
		if r.Trainer != nil && *p.Recorded != *r.Trainer.Reward || r.Solved != nil && *p.Solved != *r.Solved {
			t.Fatalf("PeekRow(%s) = %+v", b, p)
		}
	}
	for _, bad := range []string{"", "[1]", `{"index": `, "null"} {
		if _, ok := PeekRow([]byte(bad)); ok {
			t.Errorf("PeekRow(%q) accepted a line that is not a JSON object", bad)
		}
	}
}
