package web

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// An export error quotes the start of the failed page: the cut keeps
// multi-byte characters whole (it used to cut at byte 200 whatever was
// there, leaving half a character in the error).
func TestClipForErrorKeepsRunesWhole(t *testing.T) {
	for pad := range 4 { // put byte 200 at each offset inside "€" (3 bytes)
		body := strings.Repeat("a", pad) + strings.Repeat("€", 100)
		got := errorExcerpt([]byte(body))
		if !utf8.ValidString(got) {
			t.Errorf("pad %d: clipped error %q is not valid UTF-8", pad, got)
		}
		if !strings.HasSuffix(got, "…") || len(got) > 200+len("…") || len(got) < 200-2+len("…") {
			t.Errorf("pad %d: clipped error is %d bytes (%q), want at most 200 and a mark", pad, len(got), got)
		}
	}
	if got := errorExcerpt([]byte("  short page\n")); got != "short page" {
		t.Errorf("short body: got %q", got)
	}
}
