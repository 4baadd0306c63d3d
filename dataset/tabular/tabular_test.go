package tabular

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"
)

func readAll(t *testing.T, r io.Reader) ([]string, error) {
	t.Helper()
	dr, closeFn, err := Decompress(r)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	l := NewLines(dr, "in")
	var out []string
	for {
		line, err := l.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			if errors.Is(err, ErrLineTooLong) {
				out = append(out, "<long>")
				continue
			}
			return out, err
		}
		out = append(out, string(line))
	}
}

func gz(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

func TestLinesPlainAndGzip(t *testing.T) {
	in := "a,b\r\nc,d\n\nlast"
	for name, r := range map[string]io.Reader{"plain": strings.NewReader(in), "gzip": bytes.NewReader(gz(in))} {
		got, err := readAll(t, r)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := []string{"a,b", "c,d", "", "last"}; strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("%s: %q, want %q", name, got, want)
		}
	}
}

func TestLinesTruncatedGzip(t *testing.T) {
	z := gz(strings.Repeat("row,1,2,3\n", 10000))
	_, err := readAll(t, bytes.NewReader(z[:len(z)/2]))
	var le *LineError
	if !errors.As(err, &le) || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("truncated gzip: err = %v, want a LineError saying truncated", err)
	}
	if _, err := readAll(t, bytes.NewReader([]byte{0x1f, 0x8b, 1})); err == nil {
		t.Error("damaged gzip header accepted")
	}
}

func TestLinesTooLong(t *testing.T) {
	in := "ok\n" + strings.Repeat("x", MaxLine+10) + "\nafter\n"
	got, err := readAll(t, strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, "|") != "ok|<long>|after" {
		t.Errorf("got %q", got)
	}
}

func TestSplit(t *testing.T) {
	cases := []struct {
		line  string
		delim byte
		want  []string
		ok    bool
	}{
		{"a,b,,c", ',', []string{"a", "b", "", "c"}, true},
		{`"x,y",2,"say ""hi"""`, ',', []string{"x,y", "2", `say "hi"`}, true},
		{`"open,2`, ',', nil, false},
		{"a\tb", '\t', []string{"a", "b"}, true},
		{"", ',', []string{""}, true},
	}
	for _, c := range cases {
		got, ok := Split(nil, []byte(c.line), c.delim)
		if ok != c.ok {
			t.Errorf("Split(%q) ok=%v", c.line, ok)
			continue
		}
		if !ok {
			continue
		}
		var s []string
		for _, f := range got {
			s = append(s, string(f))
		}
		if strings.Join(s, "|") != strings.Join(c.want, "|") || len(s) != len(c.want) {
			t.Errorf("Split(%q) = %q, want %q", c.line, s, c.want)
		}
	}
}

func TestHeader(t *testing.T) {
	h := NewHeader([]string{" Destination Port", " Fwd Header Length", "Fwd Header Length", " Label", "bad\xff"})
	if h.Index("destination port") != 0 || h.Index("LABEL") != 3 || h.Index("Fwd Header Length") != 1 {
		t.Errorf("index lookups wrong: %v", h.Names)
	}
	if len(h.Duplicates) != 1 {
		t.Errorf("duplicates = %q", h.Duplicates)
	}
	err := h.Require("f.csv", "CIC", []string{"Label"}, []string{"Flow Duration"}, []string{"Src Port", "Source Port"})
	var me *MissingColumnsError
	if !errors.As(err, &me) || strings.Join(me.Missing, ",") != "Flow Duration,Src Port" {
		t.Fatalf("Require: %v", err)
	}
	if !strings.Contains(err.Error(), `"Flow Duration"`) || !strings.Contains(err.Error(), "expected columns") {
		t.Errorf("message does not name the expected columns: %v", err)
	}
	if SniffDelimiter([]byte("a;b;c")) != ';' || SniffDelimiter([]byte("a\tb,c\td")) != '\t' {
		t.Error("SniffDelimiter")
	}
}

func FuzzSplit(f *testing.F) {
	for _, s := range []string{`a,b`, `"x,y",2`, `"a""b"`, `",`, `"`, ``} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs, ok := Split(nil, []byte(s), ',')
		if ok && strings.IndexByte(s, '"') < 0 && len(fs) != strings.Count(s, ",")+1 {
			t.Fatalf("unquoted %q split into %d fields", s, len(fs))
		}
	})
}
