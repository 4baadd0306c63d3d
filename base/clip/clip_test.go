package clip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	const s = "añb€c😀d" // 1+2+1+3+1+4+1 bytes
	for _, tc := range []struct {
		name, got, want string
	}{
		{"prefix inside ñ", Prefix(s, 2), "a"},
		{"prefix on boundary", Prefix(s, 3), "añ"},
		{"prefix inside emoji", Prefix(s, 10), "añb€c"},
		{"prefix whole", Prefix(s, 100), s},
		{"prefix zero", Prefix(s, 0), ""},
		{"suffix inside emoji", Suffix(s, 3), "d"},
		{"suffix on boundary", Suffix(s, 5), "😀d"},
		{"bytes fits", Bytes("abc", 3, Ellipsis), "abc"},
		{"bytes cut", Bytes(s, 5, Ellipsis), "añb…"},
		{"middle", Middle(s, 8, "|"), "añb|d"},
		{"runes", Runes(s, 3, Ellipsis), "añb…"},
		{"runes fits", Runes(s, 7, Ellipsis), s},
		{"within fits", Within(s, 7, Ellipsis), s},
		{"within cut, mark counted", Within(s, 6, Ellipsis), "añb€c…"},
		{"within cut, longer mark", Within(s, 6, "..."), "añb..."},
	} {
		if tc.got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, tc.got, tc.want)
		}
	}
}

func FuzzPrefixValid(f *testing.F) {
	f.Add("añb€c😀d", 4)
	f.Fuzz(func(t *testing.T, s string, n int) {
		if !utf8.ValidString(s) || n < 0 || n > 1<<20 {
			return
		}
		for _, out := range []string{Prefix(s, n), Suffix(s, n), Bytes(s, n, Ellipsis), Middle(s, n, Ellipsis), Runes(s, n, Ellipsis), Within(s, n, Ellipsis)} {
			if !utf8.ValidString(out) {
				t.Fatalf("%q cut to invalid %q", s, out)
			}
		}
		if p := Prefix(s, n); len(p) > n || !strings.HasPrefix(s, p) {
			t.Fatalf("Prefix(%q, %d) = %q", s, n, p)
		}
	})
}
