package policypack

import (
	"fmt"
	textclip "github.com/svbench/svbench/base/clip"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestParseDocument(t *testing.T) {
	five := "1. [A-B] one\n2. [A-C] two\n   continued\n3. [A-D] three\n4. [A-E] four\n5. [A-F] five\n"
	tests := []struct {
		name, text string
		err        string
		clauses    int
	}{
		{"ok", "# Title\n\nIntro prose.\n\n" + five, "", 5},
		{"crlf", strings.ReplaceAll("# Title\n"+five, "\n", "\r\n"), "", 5},
		{"no title", five, "must start with a title", 0},
		{"too few", "# T\n1. [A-B] one\n", "1 clauses", 0},
		{"too many", "# T\n" + numbered(26), "more than 25 clauses", 0},
		{"gap in numbering", "# T\n1. [A-B] one\n3. [A-C] three\n", "numbered 3, expected 2", 0},
		{"bad id", "# T\n1. [ab] one\n", "is not valid", 0},
		{"duplicate", "# T\n1. [A-B] one\n2. [A-B] two\n", "duplicate clause id A-B (first at line 2)", 0},
		{"empty clause", "# T\n1. [A-B]\n", "has no text", 0},
		{"malformed numbered line", "# T\n1. A-B text\n", "is not a clause", 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := ParseDocument("policy.md", tc.text)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(doc.Clauses) != tc.clauses || doc.Title != "Title" || doc.Clauses[1].Text != "two continued" || doc.Clauses[4].Line == 0 {
				t.Fatalf("parsed %+v", doc)
			}
		})
	}
}

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%d. [C-%d] text\n", i, i)
	}
	return b.String()
}

func TestClipKeepsUTF8(t *testing.T) {
	if s := textclip.Bytes("ééééé", 3, textclip.Ellipsis); !utf8.ValidString(s) {
		t.Errorf("clip split a rune: %q", s)
	}
}
