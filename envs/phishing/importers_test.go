package phishing

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func write(t *testing.T, path, content string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestImport(t *testing.T) {
	dir := t.TempDir()
	msg := func(subj string) string {
		return "From: a@b.example\r\nSubject: " + subj + "\r\n\r\nbody line\r\n"
	}
	cases := []struct {
		name     string
		src      string
		opts     ImportOptions
		rows     int
		bad      int
		badLine  int
		labels   map[string]int
		errMatch string
	}{
		{"zefang", write(t, filepath.Join(dir, "z.csv"), "\ufeff,Email Text,Email Type\n0,\"re : meeting\nsee you, bob\",Safe Email\n1,verify your account now,Phishing Email\n2,odd,Unknown Type\n3,,Safe Email\n"),
			ImportOptions{Format: FormatZefang, MaxBadRows: 10}, 2, 2, 5, map[string]int{LabelLegitimate: 1, LabelPhishing: 1}, ""},
		{"csv with label map", write(t, filepath.Join(dir, "g.csv"), "body,cls\nhello,ham\nwin money,spamish\n"),
			ImportOptions{Format: FormatCSV, TextCol: "body", LabelCol: "cls", LabelMap: map[string]string{"spamish": "Phishing"}}, 2, 0, 0, map[string]int{LabelLegitimate: 1, LabelPhishing: 1}, ""},
		{"csv missing column", write(t, filepath.Join(dir, "m.csv"), "a,b\n1,2\n"), ImportOptions{Format: FormatCSV}, 0, 0, 0, nil, "lacks column"},
		{"jsonl", write(t, filepath.Join(dir, "j.jsonl"), `{"text":"hi","label":0}`+"\n\n"+`not json`+"\n"+`{"text":"pay now","label":"phishing"}`),
			ImportOptions{Format: FormatJSONL, MaxBadRows: 5}, 2, 1, 3, map[string]int{LabelLegitimate: 1, LabelPhishing: 1}, ""},
		{"max bad rows", write(t, filepath.Join(dir, "b.jsonl"), "x\ny\nz\n"), ImportOptions{Format: FormatJSONL, MaxBadRows: 1}, 0, 2, 1, nil, "--max-bad-rows 1"},
		{"eml dir", func() string {
			write(t, filepath.Join(dir, "eml", "a.eml"), msg("one"))
			write(t, filepath.Join(dir, "eml", "sub", "b.EML"), msg("two"))
			write(t, filepath.Join(dir, "eml", "notes.txt"), "ignored")
			write(t, filepath.Join(dir, "eml", "c.eml"), "no header block here")
			return filepath.Join(dir, "eml")
		}(), ImportOptions{Format: FormatEML, Label: "Phishing", MaxBadRows: 5}, 2, 1, 0, map[string]int{LabelPhishing: 2}, ""},
		{"eml needs label", filepath.Join(dir, "eml"), ImportOptions{Format: FormatEML}, 0, 0, 0, nil, "--label"},
		{"mbox", write(t, filepath.Join(dir, "box.mbox"), "From alice Mon Jan 1 00:00:00 2024\n"+msg("one")+">From the start\n\nFrom bob Mon Jan 1 00:00:00 2024\n"+msg("two")),
			ImportOptions{Format: FormatMbox, Label: "Legitimate"}, 2, 0, 0, map[string]int{LabelLegitimate: 2}, ""},
		{"not mbox", write(t, filepath.Join(dir, "x.mbox"), "hello\n"), ImportOptions{Format: FormatMbox, Label: "Legitimate"}, 0, 0, 0, nil, "not an mbox"},
		{"enron maildir", func() string {
			write(t, filepath.Join(dir, "maildir", "allen-p", "inbox", "1."), msg("enron 1"))
			write(t, filepath.Join(dir, "maildir", "allen-p", "sent", "2."), msg("enron 2"))
			write(t, filepath.Join(dir, "maildir", "allen-p", ".DS_Store"), "junk")
			return filepath.Join(dir, "maildir")
		}(), ImportOptions{Format: FormatMaildir}, 2, 0, 0, map[string]int{LabelLegitimate: 2}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			st, err := Import(context.Background(), tc.src, tc.opts, &out)
			if tc.errMatch != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errMatch) {
					t.Fatalf("want error containing %q, got %v", tc.errMatch, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Rows != tc.rows || st.BadRows != tc.bad {
				t.Fatalf("rows %d bad %d, want %d/%d (%v)", st.Rows, st.BadRows, tc.rows, tc.bad, st.Bad)
			}
			if tc.badLine > 0 && st.Bad[0].Line != tc.badLine {
				t.Errorf("first bad row at line %d, want %d (%v)", st.Bad[0].Line, tc.badLine, st.Bad)
			}
			for k, v := range tc.labels {
				if st.Labels[k] != v {
					t.Errorf("labels %v, want %v", st.Labels, tc.labels)
				}
			}
			// The output loads as an E4 dataset.
			p := filepath.Join(t.TempDir(), "out.jsonl")
			if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			ds, err := New().Load(context.Background(), p)
			if err != nil {
				t.Fatal(err)
			}
			if ds.Info.Rows != tc.rows {
				t.Errorf("loaded %d rows", ds.Info.Rows)
			}
			if tc.opts.Format == FormatMbox {
				var r Row
				_ = json.Unmarshal(bytes.SplitN(out.Bytes(), []byte("\n"), 2)[0], &r)
				if !strings.Contains(r.Email, "\r\nFrom the start") {
					t.Errorf(">From not unescaped: %q", r.Email)
				}
			}
		})
	}
}

func TestParseLabelMap(t *testing.T) {
	m, err := ParseLabelMap("spam=Phishing, ham=legitimate")
	if err != nil || len(m) != 2 {
		t.Fatalf("%v %v", m, err)
	}
	for _, bad := range []string{"spam", "=Phishing", "x=Maybe"} {
		if _, err := ParseLabelMap(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
