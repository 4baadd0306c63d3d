package dataset

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// TestParseLinesIsEachLine: the batched, concurrent reader emits what
// EachLine hands over, in the same order, and fails with the same error
// on the same line.
func TestParseLinesIsEachLine(t *testing.T) {
	rows := func(n int, edit func(i int) string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			if s := edit(i); s != "" {
				b.WriteString(s + "\n")
				continue
			}
			fmt.Fprintf(&b, `{"n": %d}`+"\n", i)
		}
		return b.String()
	}
	plain := func(int) string { return "" }
	parse := func(line int, raw []byte) (int, error) {
		s := string(raw)
		switch {
		case strings.Contains(s, `"field"`):
			return 0, FieldError("n", "must be a number, not %s", s)
		case strings.Contains(s, `"boom"`):
			return 0, errors.New("boom")
		}
		return strconv.Atoi(strings.Trim(s[strings.Index(s, ":")+1:], " }"))
	}
	for _, tc := range []struct {
		name, in string
		stopAt   int // emit fails here
	}{
		{name: "rows across batches", in: rows(2000, plain)},
		{name: "blank lines, a BOM and white space", in: "\xef\xbb\xbf" + `{"n": 1}` + "\n\n  " + `{"n": 2}` + "  \r\n\n"},
		{name: "not JSON in a later batch", in: rows(2000, func(i int) string { return map[bool]string{true: "{oops"}[i == 1500] })},
		{name: "the earliest of two bad rows in one batch", in: rows(1000, func(i int) string {
			return map[int]string{700: `{"boom": 1}`, 600: `{"field": 1}`}[i]
		})},
		{name: "a RowError is placed", in: rows(10, func(i int) string { return map[bool]string{true: `{"field": 1}`}[i == 3] })},
		{name: "emit's error stops the read", in: rows(1200, plain), stopAt: 777},
		{name: "nothing", in: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var want, got []string
			emitTo := func(out *[]string) func(int, int) error {
				return func(line, v int) error {
					if line == tc.stopAt {
						return errors.New("stop")
					}
					*out = append(*out, fmt.Sprintf("%d:%d", line, v))
					return nil
				}
			}
			wantEmit := emitTo(&want)
			wantErr := EachLine(strings.NewReader(tc.in), "f.jsonl", func(line int, raw []byte) error {
				v, err := parse(line, raw)
				if err != nil {
					return err
				}
				return wantEmit(line, v)
			})
			gotErr := ParseLines(strings.NewReader(tc.in), "f.jsonl", parse, emitTo(&got))
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("error %v, EachLine's %v", gotErr, wantErr)
			}
			var re *RowError
			if errors.As(wantErr, &re) != errors.As(gotErr, &re) {
				t.Errorf("RowError %v, EachLine's %v", gotErr, wantErr)
			}
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("emitted %d values, EachLine %d (first difference somewhere in %.80s…)", len(got), len(want), strings.Join(got, ","))
			}
			if tc.name == "rows across batches" && len(got) != 2000 {
				t.Errorf("%d rows", len(got))
			}
		})
	}
}
