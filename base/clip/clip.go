// Package clip shortens text for messages, reports and prompts without ever
// cutting inside a UTF-8 sequence: the one place svbench truncates strings
// (a cut through a multi-byte character once put U+FFFD into a /v1/score
// error).
package clip

import "unicode/utf8"

// Ellipsis is the mark a cut string ends with.
const Ellipsis = "…"

// Prefix returns the longest prefix of s of at most n bytes that does not
// end inside a UTF-8 sequence.
func Prefix(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// Suffix returns the longest suffix of s of at most n bytes that does not
// start inside a UTF-8 sequence.
func Suffix(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return s[i:]
}

// Bytes returns s when it fits in n bytes, else its Prefix followed by
// mark.
func Bytes(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	return Prefix(s, n) + mark
}

// Middle keeps the first and last n/2 bytes of a longer s, joined by mark.
func Middle(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	return Prefix(s, n/2) + mark + Suffix(s, n/2)
}

// Runes returns s when it has at most n runes, else its first n runes
// followed by mark.
func Runes(s string, n int, mark string) string {
	if n < 0 {
		n = 0
	}
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + mark
		}
		i++
	}
	return s
}

// Within returns s when it has at most n runes, else its first runes
// followed by mark, n runes in all with the mark (a table cell or a chart
// label of a fixed width).
func Within(s string, n int, mark string) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return Runes(s, n-utf8.RuneCountInString(mark), mark)
}
