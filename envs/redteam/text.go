package redteam

import (
	"strings"
	"unicode"

	textclip "github.com/svbench/svbench/base/clip"
)

// maxText bounds how much of any one message the rules read: model output
// is hostile input and a gigabyte reply must not stall scoring.
const maxText = 64 << 10

// words splits lower-cased text into letter/digit runs (apostrophes kept
// inside words, so "can't" stays one word).
func words(s string) []string {
	s = strings.ToLower(textclip.Prefix(s, maxText))
	return strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '\'' || r == '’')
	})
}

// phraseSet answers whole-word phrase queries against one text: "kill"
// matches "kill" and not "skill", "act as" matches only those two words in a
// row. This is the fix for the reference's substring tests.
type phraseSet struct {
	joined string // " w1 w2 … wn "
}

func newPhraseSet(s string) phraseSet {
	ws := words(s)
	for i, w := range ws {
		ws[i] = strings.ReplaceAll(w, "’", "'")
	}
	return phraseSet{joined: " " + strings.Join(ws, " ") + " "}
}

// has reports whether the phrase occurs as whole words.
func (p phraseSet) has(phrase string) bool {
	ws := words(phrase)
	if len(ws) == 0 {
		return false
	}
	return strings.Contains(p.joined, " "+strings.ReplaceAll(strings.Join(ws, " "), "’", "'")+" ")
}

func (p phraseSet) any(phrases []string) bool {
	for _, ph := range phrases {
		if p.has(ph) {
			return true
		}
	}
	return false
}

func (p phraseSet) count(phrases []string) int {
	n := 0
	for _, ph := range phrases {
		if p.has(ph) {
			n++
		}
	}
	return n
}

// substr is the reference's test: lower-cased substring.
func substr(lower string, kw string) bool { return strings.Contains(lower, kw) }

func anySubstr(lower string, kws []string) bool {
	for _, k := range kws {
		if strings.Contains(lower, k) {
			return true
		}
	}
	return false
}

// stopwords are left out of content-word sets (topic overlap, helpfulness).
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an and are as at be but by can could do does for from has have how i if in into is it its me my of on or our please should so that the their them then there these this to was we what when where which who why will with would you your about tell explain give write make describe help want need any some more most also just than very`) {
		stopwords[w] = true
	}
}

// contentWords are the distinct non-stopwords of s of at least three letters.
func contentWords(s string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range words(s) {
		if len(w) < 3 || stopwords[w] || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// ngrams returns the set of word n-grams of s (the whole text when it is
// shorter than n words).
func ngrams(s string, n int) map[string]bool {
	ws := words(s)
	out := map[string]bool{}
	if len(ws) == 0 {
		return out
	}
	if len(ws) < n {
		out[strings.Join(ws, " ")] = true
		return out
	}
	for i := 0; i+n <= len(ws); i++ {
		out[strings.Join(ws[i:i+n], " ")] = true
	}
	return out
}

// containment is the share of a's n-grams also in b (0 when a is empty):
// how much of an attempt is copied from an earlier one.
func containment(a, b map[string]bool) float64 {
	if len(a) == 0 {
		return 0
	}
	n := 0
	for g := range a {
		if b[g] {
			n++
		}
	}
	return float64(n) / float64(len(a))
}

// tokenF1 is the SQuAD-style token F1 between a reply and a reference text
// over content words.
func tokenF1(reply, ref string) float64 {
	r, g := contentWords(reply), contentWords(ref)
	if len(r) == 0 || len(g) == 0 {
		return 0
	}
	gs := map[string]bool{}
	for _, w := range g {
		gs[w] = true
	}
	common := 0
	for _, w := range r {
		if gs[w] {
			common++
		}
	}
	if common == 0 {
		return 0
	}
	p, rc := float64(common)/float64(len(r)), float64(common)/float64(len(g))
	return 2 * p * rc / (p + rc)
}
