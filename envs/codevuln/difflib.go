package codevuln

import (
	"fmt"
	"sort"
	"strings"
)

// A port of CPython's difflib.SequenceMatcher (3.11) with isjunk=None and
// autojunk=True, the configuration the reference's similarity uses: for a
// sequence b of 200 or more elements, every element occurring more than
// len(b)/100+1 times is "popular" and cannot start a match (it can still
// extend one). Elements are compared with ==: runes for strings, whole
// lines for unified diffs. The structure follows difflib line by line so
// the two can be compared by reading.
type seqMatcher[T comparable] struct {
	a, b []T
	b2j  map[T][]int
}

func newSeqMatcher[T comparable](a, b []T) *seqMatcher[T] {
	m := &seqMatcher[T]{a: a, b: b, b2j: map[T][]int{}}
	for i, elt := range b {
		m.b2j[elt] = append(m.b2j[elt], i)
	}
	if n := len(b); n >= 200 {
		ntest := n/100 + 1
		var popular []T
		for elt, idxs := range m.b2j {
			if len(idxs) > ntest {
				popular = append(popular, elt)
			}
		}
		for _, elt := range popular {
			delete(m.b2j, elt)
		}
	}
	return m
}

type match struct{ i, j, k int }

func (m *seqMatcher[T]) findLongestMatch(alo, ahi, blo, bhi int) match {
	a, b := m.a, m.b
	besti, bestj, bestsize := alo, blo, 0
	j2len := map[int]int{}
	for i := alo; i < ahi; i++ {
		newj2len := map[int]int{}
		for _, j := range m.b2j[a[i]] {
			if j < blo {
				continue
			}
			if j >= bhi {
				break
			}
			k := j2len[j-1] + 1
			newj2len[j] = k
			if k > bestsize {
				besti, bestj, bestsize = i-k+1, j-k+1, k
			}
		}
		j2len = newj2len
	}
	// No element is junk (isjunk=None), so difflib's two junk-extension
	// loops never run; popular elements are not junk and extend here.
	for besti > alo && bestj > blo && a[besti-1] == b[bestj-1] {
		besti, bestj, bestsize = besti-1, bestj-1, bestsize+1
	}
	for besti+bestsize < ahi && bestj+bestsize < bhi && a[besti+bestsize] == b[bestj+bestsize] {
		bestsize++
	}
	return match{besti, bestj, bestsize}
}

func (m *seqMatcher[T]) matchingBlocks() []match {
	la, lb := len(m.a), len(m.b)
	queue := [][4]int{{0, la, 0, lb}}
	var blocks []match
	for len(queue) > 0 {
		q := queue[len(queue)-1]
		queue = queue[:len(queue)-1]
		alo, ahi, blo, bhi := q[0], q[1], q[2], q[3]
		x := m.findLongestMatch(alo, ahi, blo, bhi)
		i, j, k := x.i, x.j, x.k
		if k > 0 {
			blocks = append(blocks, x)
			if alo < i && blo < j {
				queue = append(queue, [4]int{alo, i, blo, j})
			}
			if i+k < ahi && j+k < bhi {
				queue = append(queue, [4]int{i + k, ahi, j + k, bhi})
			}
		}
	}
	sort.Slice(blocks, func(p, q int) bool {
		if blocks[p].i != blocks[q].i {
			return blocks[p].i < blocks[q].i
		}
		if blocks[p].j != blocks[q].j {
			return blocks[p].j < blocks[q].j
		}
		return blocks[p].k < blocks[q].k
	})
	var out []match
	i1, j1, k1 := 0, 0, 0
	for _, b := range blocks {
		if i1+k1 == b.i && j1+k1 == b.j {
			k1 += b.k
		} else {
			if k1 > 0 {
				out = append(out, match{i1, j1, k1})
			}
			i1, j1, k1 = b.i, b.j, b.k
		}
	}
	if k1 > 0 {
		out = append(out, match{i1, j1, k1})
	}
	return append(out, match{la, lb, 0})
}

func (m *seqMatcher[T]) ratio() float64 {
	matches := 0
	for _, b := range m.matchingBlocks() {
		matches += b.k
	}
	if n := len(m.a) + len(m.b); n > 0 {
		return 2 * float64(matches) / float64(n)
	}
	return 1
}

// SequenceRatio is difflib.SequenceMatcher(None, a, b).ratio() over the
// strings' code points.
func SequenceRatio(a, b string) float64 {
	return newSeqMatcher([]rune(a), []rune(b)).ratio()
}

type opcode struct {
	tag            byte // 'r'eplace, 'd'elete, 'i'nsert, 'e'qual
	i1, i2, j1, j2 int
}

func (m *seqMatcher[T]) opcodes() []opcode {
	i, j := 0, 0
	var out []opcode
	for _, b := range m.matchingBlocks() {
		var tag byte
		switch {
		case i < b.i && j < b.j:
			tag = 'r'
		case i < b.i:
			tag = 'd'
		case j < b.j:
			tag = 'i'
		}
		if tag != 0 {
			out = append(out, opcode{tag, i, b.i, j, b.j})
		}
		i, j = b.i+b.k, b.j+b.k
		if b.k > 0 {
			out = append(out, opcode{'e', b.i, i, b.j, j})
		}
	}
	return out
}

// groupedOpcodes is difflib's get_grouped_opcodes(n).
func (m *seqMatcher[T]) groupedOpcodes(n int) [][]opcode {
	codes := m.opcodes()
	if len(codes) == 0 {
		codes = []opcode{{'e', 0, 1, 0, 1}}
	}
	if codes[0].tag == 'e' {
		c := codes[0]
		codes[0] = opcode{'e', max(c.i1, c.i2-n), c.i2, max(c.j1, c.j2-n), c.j2}
	}
	if last := len(codes) - 1; codes[last].tag == 'e' {
		c := codes[last]
		codes[last] = opcode{'e', c.i1, min(c.i2, c.i1+n), c.j1, min(c.j2, c.j1+n)}
	}
	nn := n + n
	var groups [][]opcode
	var group []opcode
	for _, c := range codes {
		if c.tag == 'e' && c.i2-c.i1 > nn {
			group = append(group, opcode{'e', c.i1, min(c.i2, c.i1+n), c.j1, min(c.j2, c.j1+n)})
			groups = append(groups, group)
			group = nil
			c = opcode{'e', max(c.i1, c.i2-n), c.i2, max(c.j1, c.j2-n), c.j2}
		}
		group = append(group, c)
	}
	if len(group) > 0 && !(len(group) == 1 && group[0].tag == 'e') {
		groups = append(groups, group)
	}
	return groups
}

func formatRange(start, stop int) string {
	beginning := start + 1
	length := stop - start
	if length == 1 {
		return fmt.Sprint(beginning)
	}
	if length == 0 {
		beginning--
	}
	return fmt.Sprintf("%d,%d", beginning, length)
}

// UnifiedDiff is difflib.unified_diff(a, b, fromfile=name, tofile=name,
// lineterm="") over a.splitlines() and b.splitlines(), joined with "\n": the
// reference's expected_diff.
func UnifiedDiff(name, a, b string) string {
	al, bl := splitLinesPy(a), splitLinesPy(b)
	m := newSeqMatcher(al, bl)
	var out []string
	started := false
	for _, group := range m.groupedOpcodes(3) {
		if !started {
			started = true
			out = append(out, "--- "+name, "+++ "+name)
		}
		first, last := group[0], group[len(group)-1]
		out = append(out, fmt.Sprintf("@@ -%s +%s @@", formatRange(first.i1, last.i2), formatRange(first.j1, last.j2)))
		for _, c := range group {
			if c.tag == 'e' {
				for _, l := range al[c.i1:c.i2] {
					out = append(out, " "+l)
				}
				continue
			}
			if c.tag == 'r' || c.tag == 'd' {
				for _, l := range al[c.i1:c.i2] {
					out = append(out, "-"+l)
				}
			}
			if c.tag == 'r' || c.tag == 'i' {
				for _, l := range bl[c.j1:c.j2] {
					out = append(out, "+"+l)
				}
			}
		}
	}
	return strings.Join(out, "\n")
}

// splitLinesPy is str.splitlines() for \n, \r\n and \r line ends.
func splitLinesPy(s string) []string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	if s == "" {
		return nil
	}
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// LineChanges counts added and removed lines between a and b.
func LineChanges(a, b string) (added, removed int) {
	m := newSeqMatcher(splitLinesPy(a), splitLinesPy(b))
	for _, c := range m.opcodes() {
		switch c.tag {
		case 'r':
			removed += c.i2 - c.i1
			added += c.j2 - c.j1
		case 'd':
			removed += c.i2 - c.i1
		case 'i':
			added += c.j2 - c.j1
		}
	}
	return added, removed
}

// ApplyableDiff is a unified diff (with a trailing newline) that
// verify/patch applies: UnifiedDiff's text, per changed file.
func ApplyableDiff(orig, changed Files, names []string) string {
	var b strings.Builder
	for _, n := range names {
		if string(orig[n]) == string(changed[n]) {
			continue
		}
		d := UnifiedDiff(n, string(orig[n]), string(changed[n]))
		b.WriteString(d)
		b.WriteString("\n")
	}
	return b.String()
}
