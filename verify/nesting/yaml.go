package nesting

import "bytes"

// YAML checks YAML text, where indentation nests as much as brackets do.
// Block levels are the indentation columns open at a line (a deeper column
// opens one, a shallower one closes those beyond it) plus one per "- ",
// "? " or ": " indicator, since "- - - x" opens three levels on one line,
// and one where a sequence starts at its parent key's column. Flow levels
// are [ and { where a value may start (anywhere inside a flow collection),
// outside quoted scalars and comments; brackets inside a quoted scalar
// count while it lasts. Block scalars (| and >) are text.
// Every document ("---") starts again from zero.
//
// Unlike HCL's, YAML's parser bounds itself (gopkg.in/yaml.v3 stops at
// 10,000 levels of flow or indentation), and yamlsafe bounds the depth of
// the parsed tree by the same DefaultMax: this scan gives that bound a
// line number before the parser spends anything, and approximates where
// YAML's grammar is subtle (a quote inside a plain scalar, say) by
// counting more rather than less.
func YAML(file string, src []byte, max int) error {
	s := yamlScanner{file: file, max: limit(max), block: -1}
	for len(src) > 0 {
		s.line++
		line := src
		if nl := bytes.IndexByte(src, '\n'); nl >= 0 {
			line, src = src[:nl], src[nl+1:]
		} else {
			src = nil
		}
		if err := s.scanLine(bytes.TrimSuffix(line, []byte("\r"))); err != nil {
			return err
		}
	}
	return nil
}

type yamlIndent struct {
	col int
	seq bool // opened by "- "
}

type yamlScanner struct {
	file  string
	max   int
	line  int
	stack []yamlIndent
	flow  int
	// quote is the quote character of a quoted scalar that continues on
	// the next line (0 when none) and local the brackets open inside it.
	quote byte
	local int
	// block >= 0 while inside a block scalar: lines indented deeper than
	// block belong to it.
	block int
}

func (s *yamlScanner) check(more int) error {
	if len(s.stack)+s.flow+more > s.max {
		return &Error{File: s.file, Line: s.line, Limit: s.max}
	}
	return nil
}

func (s *yamlScanner) scanLine(line []byte) error {
	ind := 0
	for ind < len(line) && line[ind] == ' ' {
		ind++
	}
	blank := len(bytes.TrimSpace(line)) == 0
	if s.block >= 0 {
		if blank || ind > s.block {
			return nil
		}
		s.block = -1
	}
	pos := 0
	switch {
	case s.quote != 0:
		end, err := s.quoted(line, 0, s.quote)
		if err != nil || end < 0 {
			return err
		}
		pos = end
	case isDocumentMarker(line):
		s.stack, s.flow, s.local = s.stack[:0], 0, 0
		pos = 3
	case s.flow > 0:
		// A flow collection continues: indentation means nothing.
	case blank || line[ind] == '#' || (ind == 0 && line[0] == '%'):
		return nil // blank, comment or directive
	default:
		p, first := ind, true
		for p < len(line) && (line[p] == '-' || line[p] == '?' || line[p] == ':') && (p+1 == len(line) || line[p+1] == ' ' || line[p+1] == '\t') {
			if err := s.place(p, line[p] == '-', first); err != nil {
				return err
			}
			first = false
			for p++; p < len(line) && (line[p] == ' ' || line[p] == '\t'); p++ {
			}
		}
		if p < len(line) && line[p] != '#' && !isBlockHeader(line[p:]) {
			if err := s.place(p, false, first); err != nil {
				return err
			}
		}
		pos = p
	}
	return s.rest(line, pos)
}

// place records that a node starts at column col. The first node of a
// line closes the levels it is not inside; later ones ("- - x") nest.
func (s *yamlScanner) place(col int, seq, first bool) error {
	if first {
		for n := len(s.stack); n > 0; n = len(s.stack) {
			t := s.stack[n-1]
			// A key at the column of a sequence that sits at its parent
			// key's column ends that sequence.
			if t.col > col || (t.col == col && t.seq && !seq) {
				s.stack = s.stack[:n-1]
				continue
			}
			if t.col == col && t.seq == seq {
				return nil // a sibling
			}
			break
		}
	}
	s.stack = append(s.stack, yamlIndent{col: col, seq: seq})
	return s.check(0)
}

// rest scans line[pos:] for flow brackets, quoted scalars, comments and
// block scalar headers.
func (s *yamlScanner) rest(line []byte, pos int) error {
	valueStart := true // where a scalar, a collection or a block header may start
	for j := pos; j < len(line); j++ {
		c := line[j]
		switch {
		case c == ' ' || c == '\t':
		case c == '#' && (j == 0 || line[j-1] == ' ' || line[j-1] == '\t'):
			return nil
		case (c == '"' || c == '\'') && valueStart:
			end, err := s.quoted(line, j+1, c)
			if err != nil || end < 0 {
				if end < 0 {
					s.quote = c
				}
				return err
			}
			j, valueStart = end-1, false
		case (c == '[' || c == '{') && (valueStart || s.flow > 0):
			// In block context a bracket after the start of a plain
			// scalar is text; in flow context every bracket nests.
			s.flow++
			if err := s.check(0); err != nil {
				return err
			}
			valueStart = true
		case c == ']' || c == '}':
			if s.flow > 0 {
				s.flow--
			}
			valueStart = false
		case c == ',':
			valueStart = s.flow > 0
		case c == ':' && (j+1 == len(line) || line[j+1] == ' ' || line[j+1] == '\t' || (s.flow > 0 && bytes.IndexByte([]byte(",[]{}\"'"), line[j+1]) >= 0)):
			valueStart = true
		case (c == '&' || c == '!') && valueStart:
			// An anchor or tag may precede a block header: skip its name.
			for j+1 < len(line) && line[j+1] != ' ' && line[j+1] != '\t' {
				j++
			}
		case (c == '|' || c == '>') && valueStart && s.flow == 0 && isBlockHeader(line[j:]):
			s.block = 0
			if n := len(s.stack); n > 0 {
				s.block = s.stack[n-1].col
			}
			return nil
		default:
			valueStart = false
		}
	}
	return nil
}

// quoted scans a quoted scalar whose body starts at line[i] and returns
// the index after its closing quote, or -1 when it continues on the next
// line (s.local then carries the brackets still open inside it).
func (s *yamlScanner) quoted(line []byte, i int, q byte) (int, error) {
	for ; i < len(line); i++ {
		switch c := line[i]; {
		case c == '\\' && q == '"':
			i++
		case c == q:
			if q == '\'' && i+1 < len(line) && line[i+1] == '\'' {
				i++ // '' is an escaped quote
				continue
			}
			s.quote, s.local = 0, 0
			return i + 1, nil
		case c == '[' || c == '{' || c == '(':
			s.local++
			if err := s.check(s.local); err != nil {
				return 0, err
			}
		case c == ']' || c == '}' || c == ')':
			if s.local > 0 {
				s.local--
			}
		}
	}
	return -1, nil
}

// isDocumentMarker reports a "---" or "..." line (a document boundary).
func isDocumentMarker(line []byte) bool {
	return len(line) >= 3 && (bytes.HasPrefix(line, []byte("---")) || bytes.HasPrefix(line, []byte("..."))) &&
		(len(line) == 3 || line[3] == ' ' || line[3] == '\t')
}

// isBlockHeader reports whether b starts with a block scalar header: | or
// >, chomping and indentation indicators, then nothing but a comment.
func isBlockHeader(b []byte) bool {
	if len(b) == 0 || (b[0] != '|' && b[0] != '>') {
		return false
	}
	j := 1
	for j < len(b) && (b[j] == '+' || b[j] == '-' || (b[j] >= '1' && b[j] <= '9')) {
		j++
	}
	for j < len(b) && (b[j] == ' ' || b[j] == '\t') {
		j++
	}
	return j == len(b) || (b[j] == '#' && j > 1 && (b[j-1] == ' ' || b[j-1] == '\t'))
}
