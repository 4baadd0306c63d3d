package server

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// TestTruncateNeverSplitsARune: a /v1/score error once carried U+FFFD from
// a cut through a multi-byte character (issue #21).
func TestTruncateNeverSplitsARune(t *testing.T) {
	s := strings.Repeat("é", 200)
	for n := range 20 {
		if got := truncate(s, n); !utf8.ValidString(got) || strings.ContainsRune(got, utf8.RuneError) {
			t.Fatalf("truncate(%d) = %q", n, got)
		}
	}
}
