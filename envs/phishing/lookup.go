package phishing

import (
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/phishing/mail"
)

// templateLookup is the template-memorising policy issue #41 found: it
// answers the label of the train row whose prose (decoded subject and
// visible text, URLs removed) shares the most words with the email's, with
// confidence 1 and no evidence. It reads no header, link host or
// attachment, so it measures how far the text a template fills in gives the
// label away, which is what a model trained on train could learn instead
// of the task. Splits by template family exist to keep it low.
type templateLookup struct {
	vocab map[string]int
	rows  []lookupRow
}

type lookupRow struct {
	tokens []int // sorted, distinct
	label  string
}

// fitTemplateLookup indexes rows (the train split as served).
func fitTemplateLookup(rows []Row) *templateLookup {
	l := &templateLookup{vocab: map[string]int{}}
	for _, r := range rows {
		l.rows = append(l.rows, lookupRow{tokens: l.ids(proseTokens(r.Email), true), label: r.Answer})
	}
	return l
}

// ids maps words to ids. Only fitting adds words to the vocabulary; a
// query word no train row has gets a negative id of its own (one per
// distinct word), so it counts in the union and matches nothing.
func (l *templateLookup) ids(words []string, grow bool) []int {
	out := make([]int, 0, len(words))
	unknown := map[string]int{}
	for _, w := range words {
		id, ok := l.vocab[w]
		switch {
		case ok:
		case grow:
			id = len(l.vocab)
			l.vocab[w] = id
		default:
			if id, ok = unknown[w]; !ok {
				id = -1 - len(unknown)
				unknown[w] = id
			}
		}
		out = append(out, id)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// Nearest returns the label of the most similar train row by Jaccard
// similarity of word sets, and the similarity. Clones of one template
// tie: a phishing copy and the mail it copies have the same words. Ties
// are settled by the majority label among the tied rows (the earliest
// row's on a split vote), so the answer is deterministic and a tie is
// not won by row order.
func (l *templateLookup) Nearest(email string) (string, float64) {
	q := l.ids(proseTokens(email), false)
	best := -1.0
	votes := map[string]int{}
	first := ""
	for _, r := range l.rows {
		s := jaccard(q, r.tokens)
		switch {
		case s > best:
			best, first = s, r.label
			clear(votes)
			votes[r.label] = 1
		case s == best:
			votes[r.label]++
		}
	}
	label := first
	for l, n := range votes {
		if n > votes[label] {
			label = l
		}
	}
	return label, best
}

func jaccard(a, b []int) float64 {
	if len(a)+len(b) == 0 {
		return 0
	}
	i, j, inter := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			inter++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return float64(inter) / float64(len(a)+len(b)-inter)
}

// proseTokens are the lower-cased words of the decoded subject and visible
// text, with URLs cut out: a template's wording, not where its links go.
func proseTokens(email string) []string {
	m := mail.Parse(email)
	text := urlInMail.ReplaceAllString(m.Subject+"\n"+m.Text, " ")
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) })
}

// trainLookup is fitted once per process on the train split LoadSplit
// serves, the data a trainer gets.
var trainLookup = sync.OnceValues(func() (*templateLookup, error) {
	rows, err := SplitRows(env.SplitTrain)
	if err != nil {
		return nil, err
	}
	return fitTemplateLookup(rows), nil
})
