package nesting

import (
	"bytes"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// HCL checks HCL native syntax (Terraform .tf). It follows the lexical
// modes of hclsyntax's scanner exactly — code, "quoted" templates with
// backslash escapes, heredocs closed by their marker line, ${ } and %{ }
// sequences with the same brace matching, and #, // and /* */ comments —
// because a scanner that lost track of where a string ends could be fed
// closing brackets the parser never sees. Levels are:
//
//   - every open (, [, { and template sequence ${ / %{;
//   - every open quoted template or heredoc, plus the brackets inside it
//     (and inside comments) while it lasts;
//   - every open %{if} / %{for} directive of a template;
//   - every ? of a conditional and every [*] splat since the last , or
//     line end, because the parser recurses into both results of a ? and
//     into the rest of a traversal after a splat, without a bracket left
//     open;
//   - a run of unary ! and - operators, which the parser recurses on one
//     by one;
//   - every binary operator and every index ([ after a value) since the
//     last , or line end: the parser reads a chain of them in a loop but
//     builds a tree one level deeper per link ("1+1+1" is "((1+1)+1)"),
//     and evaluation and every walk of the tree recurse on it. A - counts
//     both as unary and as binary.
func HCL(file string, src []byte, max int) error {
	s := hclScanner{src: src, file: file, max: limit(max), line: 1}
	return s.run()
}

// Frame kinds of the HCL scanner's stack; the bottom frame is the file.
const (
	hclFile    = 0
	hclInterp  = 'i' // ${ or %{ sequence: code up to its closing }
	hclQuoted  = '"'
	hclHeredoc = 'h'
	hclBrace   = '{'
	hclBrack   = '['
	hclParen   = '('
)

type hclFrame struct {
	kind byte
	// marker closes a heredoc; atLineStart is hclsyntax's StartOfLine:
	// only a line begun in the heredoc's own text can be the marker.
	marker      []byte
	atLineStart bool
	// local counts brackets inside a template's literal text, directives
	// its open %{if}/%{for}, chain the ? and [*] of code since the last
	// separator.
	local, directives, chain int
}

type hclScanner struct {
	src   []byte
	file  string
	max   int
	line  int
	stack []hclFrame
	// extra is the sum of local, directives and chain over the stack, plus
	// brackets a mismatched closer left open (the parser's recovery may
	// still be inside them, so they stay counted).
	extra int
	unary int // current run of unary operators
}

func (s *hclScanner) depth() int { return len(s.stack) - 1 + s.extra }

func (s *hclScanner) check(more int) error {
	if s.depth()+more > s.max {
		return &Error{File: s.file, Line: s.line, Limit: s.max}
	}
	return nil
}

func (s *hclScanner) push(f hclFrame) error {
	s.stack = append(s.stack, f)
	return s.check(0)
}

func (s *hclScanner) pop() {
	top := s.stack[len(s.stack)-1]
	s.extra -= top.local + top.directives + top.chain
	s.stack = s.stack[:len(s.stack)-1]
}

func (s *hclScanner) top() *hclFrame { return &s.stack[len(s.stack)-1] }

func (s *hclScanner) run() error {
	s.stack = append(s.stack, hclFrame{kind: hclFile})
	for i := 0; i < len(s.src); {
		var next int
		var err error
		switch s.top().kind {
		case hclQuoted, hclHeredoc:
			next, err = s.template(i)
		default:
			next, err = s.code(i)
		}
		if err != nil {
			return err
		}
		i = next
	}
	return nil
}

// code scans one token of code at src[i] and returns where the next starts.
func (s *hclScanner) code(i int) (int, error) {
	src, top := s.src, s.top()
	c := src[i]
	switch c {
	case ' ', '\t', '\r':
		return i + 1, nil
	case '\n':
		s.line++
		// A line ends an attribute or an object item; in ( [ and ${ }
		// the parser reads on across it.
		if top.kind == hclFile || top.kind == hclBrace {
			s.extra -= top.chain
			top.chain = 0
		}
		return i + 1, nil
	case '!':
		if i+1 < len(src) && src[i+1] == '=' {
			s.unary = 0
			return i + 2, s.operator(top)
		}
		s.unary++
		return i + 1, s.check(s.unary)
	case '-':
		// A minus is unary or binary depending on what precedes it; it is
		// counted as both, which only ever overcounts.
		s.unary++
		if err := s.check(s.unary); err != nil {
			return 0, err
		}
		return i + 1, s.operator(top)
	case '#':
		return s.comment(i, lineEnd(src, i))
	case '/':
		if i+1 < len(src) && src[i+1] == '/' {
			return s.comment(i, lineEnd(src, i))
		}
		if i+1 < len(src) && src[i+1] == '*' {
			if end := bytes.Index(src[i+2:], []byte("*/")); end >= 0 {
				return s.comment(i, i+2+end+2)
			}
		}
	}
	// Everything below ends a run of unary operators.
	s.unary = 0
	switch c {
	case '"':
		return i + 1, s.push(hclFrame{kind: hclQuoted})
	case '<':
		if marker, end, ok := heredocIntro(src, i); ok {
			err := s.push(hclFrame{kind: hclHeredoc, marker: marker, atLineStart: true})
			s.line++ // the introducer ends its line
			return end, err
		}
	case '[':
		if end, ok := splat(src, i); ok {
			s.line += bytes.Count(src[i:end], []byte("\n"))
			return end, s.operator(top)
		}
		if endsOperand(src, i) {
			// An index on a value ("a[b][c]") wraps it in one more
			// expression node.
			if err := s.operator(top); err != nil {
				return 0, err
			}
		}
		return i + 1, s.push(hclFrame{kind: c})
	case '{', '(':
		return i + 1, s.push(hclFrame{kind: c})
	default:
		if c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 {
			end := identEnd(src, i)
			s.line += bytes.Count(src[i:end], []byte("\n"))
			return end, nil
		}
	case '}':
		s.closeBrace()
	case ']', ')':
		want := byte(hclBrack)
		if c == ')' {
			want = hclParen
		}
		if top.kind == want {
			s.pop()
		}
	case ',':
		s.extra -= top.chain
		top.chain = 0
	case '?', '+', '*', '/', '%':
		return i + 1, s.operator(top)
	case '&', '|', '=':
		// && || ==; a lone = assigns, => maps a for expression's key.
		if i+1 < len(src) && src[i+1] == c {
			return i + 2, s.operator(top)
		}
	case '>':
		return i + 1, s.operator(top)
	}
	if c == '<' { // not a heredoc: the heredoc case above returned
		if i+1 < len(src) && src[i+1] == '=' {
			return i + 2, s.operator(top)
		}
		return i + 1, s.operator(top)
	}
	return i + 1, nil
}

// operator counts one link of an expression chain in frame t: a ?, a
// splat, a binary operator or an index. hclsyntax builds a chain of them
// into a tree one level deeper per link ("1+1+1" is "((1+1)+1)"), which
// evaluation and every walk of the tree recurse on: a flat 240 KB sum of
// 120,000 terms took seconds and gigabytes of stack to score.
func (s *hclScanner) operator(t *hclFrame) error {
	t.chain++
	s.extra++
	return s.check(0)
}

// endsOperand reports whether the code before src[i] (spaces and tabs
// skipped) ends a value a [ would index: an identifier or number, a
// closing bracket or a closing quote.
func endsOperand(src []byte, i int) bool {
	j := i - 1
	for j >= 0 && (src[j] == ' ' || src[j] == '\t') {
		j--
	}
	if j < 0 {
		return false
	}
	c := src[j]
	return isIdentByte(c) || c == ']' || c == ')' || c == '}' || c == '"' || c >= 0x80
}

// closeBrace handles } (and ~}) in code as hclsyntax's scanner does: it
// closes the innermost { or template sequence, whatever [ and ( are open
// inside it; those stay counted, since the parser's error recovery may
// still be inside them.
func (s *hclScanner) closeBrace() {
	j := len(s.stack) - 1
	for j > 0 && s.stack[j].kind != hclBrace && s.stack[j].kind != hclInterp {
		j--
	}
	if j == 0 {
		return // a stray }: the scanner counts it and nothing closes
	}
	for len(s.stack)-1 > j {
		s.pop()
		s.extra++
	}
	s.pop()
}

// comment scans the comment src[i:end] as literal text.
func (s *hclScanner) comment(i, end int) (int, error) {
	local := 0
	for ; i < end; i++ {
		switch s.src[i] {
		case '\n':
			s.line++
		case '{', '[', '(':
			local++
			if err := s.check(local); err != nil {
				return 0, err
			}
		case '}', ']', ')':
			if local > 0 {
				local--
			}
		}
	}
	return end, nil
}

// template scans one piece of a quoted template or heredoc at src[i].
func (s *hclScanner) template(i int) (int, error) {
	src, top := s.src, s.top()
	if top.kind == hclHeredoc && top.atLineStart {
		top.atLineStart = false
		if nl := bytes.IndexByte(src[i:], '\n'); nl >= 0 && isMarkerLine(src[i:i+nl+1], top.marker) {
			s.pop()
			return i + nl, nil // the newline is the code's
		}
	}
	c := src[i]
	switch c {
	case '\n':
		s.line++
		if top.kind == hclHeredoc {
			top.atLineStart = true
		}
	case '\\':
		if top.kind == hclQuoted && i+1 < len(src) && src[i+1] != '\n' && src[i+1] != '\r' {
			return i + 2, nil
		}
	case '"':
		if top.kind == hclQuoted {
			s.pop()
		}
	case '$', '%':
		if i+1 < len(src) && src[i+1] == '{' {
			if c == '%' {
				s.directive(top, i+2)
			}
			if err := s.push(hclFrame{kind: hclInterp}); err != nil {
				return 0, err
			}
			return i + 2, nil
		}
		if i+2 < len(src) && src[i+1] == c && src[i+2] == '{' {
			return i + 3, nil // $${ and %%{ are literal
		}
	case '{', '[', '(':
		top.local++
		s.extra++
		return i + 1, s.check(0)
	case '}', ']', ')':
		if top.local > 0 {
			top.local--
			s.extra--
		}
	}
	return i + 1, nil
}

// directive counts the template directive that starts at src[i] (after
// %{): if and for open a level the parser recurses into, endif and endfor
// close one.
func (s *hclScanner) directive(t *hclFrame, i int) {
	for i < len(s.src) && (s.src[i] == '~' || s.src[i] == ' ' || s.src[i] == '\t') {
		i++
	}
	j := i
	for j < len(s.src) && isIdentByte(s.src[j]) {
		j++
	}
	switch string(s.src[i:j]) {
	case "if", "for":
		t.directives++
		s.extra++
	case "endif", "endfor":
		if t.directives > 0 {
			t.directives--
			s.extra--
		}
	}
}

// heredocIntro reports whether src[i:] starts a heredoc introducer
// (<<ID or <<-ID, then a newline) and returns its marker and the index
// after the newline.
func heredocIntro(src []byte, i int) (marker []byte, end int, ok bool) {
	if i+2 >= len(src) || src[i+1] != '<' {
		return nil, 0, false
	}
	j := i + 2
	if src[j] == '-' {
		j++
	}
	start := j
	j = asciiIdent(src, j)
	if j < len(src) && src[j] >= 0x80 {
		if typ, end := lexThrough(src, i, i); typ == hclsyntax.TokenOHeredoc {
			n := end - i
			// As hclsyntax takes the marker from the introducer.
			m := bytes.TrimPrefix(src[i+2:i+n-1], []byte("-"))
			return bytes.TrimSuffix(m, []byte("\r")), i + n, true
		}
		return nil, 0, false
	}
	if j == start || src[start] == '-' || (src[start] >= '0' && src[start] <= '9') {
		return nil, 0, false
	}
	nl := j
	if nl < len(src) && src[nl] == '\r' {
		nl++
	}
	if nl >= len(src) || src[nl] != '\n' {
		return nil, 0, false
	}
	return src[start:j], nl + 1, true
}

// asciiIdent returns the end of the run of ASCII identifier bytes
// (letters, digits, _ and -) at src[i:].
func asciiIdent(src []byte, i int) int {
	for i < len(src) && (isIdentByte(src[i]) || src[i] == '-') {
		i++
	}
	return i
}

// identEnd returns the end of the identifiers (and stray non-ASCII
// characters) that start at src[i], none of which changes the lexical
// mode. A byte that starts no UTF-8 sequence needs hclsyntax's scanner:
// its Unicode tables let some lead bytes take any bytes after them
// ("\xe6\"0" is one identifier), so only the scanner knows where that
// token ends.
func identEnd(src []byte, i int) int {
	j := i
	for j < len(src) {
		c := src[j]
		switch {
		case c < 0x80 && (isIdentByte(c) || c == '-'):
			j++
		case c < 0x80:
			return j
		default:
			if n := utf8Len(src[j:]); n > 0 {
				j += n
			} else {
				_, j = lexThrough(src, i, j)
			}
		}
	}
	return j
}

// lexThrough returns the type and end of the token hclsyntax's scanner
// reads over src[p], lexing code from the token start i <= p. The window
// it lexes doubles until that token ends well inside it (a character is at
// most 4 bytes).
func lexThrough(src []byte, i, p int) (hclsyntax.TokenType, int) {
	for w := 64; ; w *= 2 {
		end := min(len(src), i+w)
		// A leading space keeps the scanner from dropping a byte-order
		// mark at src[i] as if it began the file.
		buf := append([]byte{' '}, src[i:end]...)
		toks, _ := hclsyntax.LexConfig(buf, "", hcl.InitialPos)
		for _, t := range toks {
			if e := i + t.Range.End.Byte - 1; e > p {
				if end == len(src) || e+4 <= end {
					return t.Type, e
				}
				break
			}
		}
		if end == len(src) {
			return hclsyntax.TokenEOF, len(src)
		}
	}
}

// isMarkerLine reports whether hclsyntax's scanner ends a heredoc at line
// (one line of its text, with the newline): after any bytes that start no
// UTF-8 sequence (each its own token, which leaves the scanner at the start
// of the line), the line must be one literal token — UTF-8 text without $,
// % or a carriage return before the end of line — that is the marker once
// spaces are trimmed.
func isMarkerLine(line, marker []byte) bool {
	k := 0
	for k < len(line) && utf8Len(line[k:]) == 0 {
		k++
	}
	rest := line[k:]
	body := bytes.TrimSuffix(bytes.TrimSuffix(rest, []byte("\n")), []byte("\r"))
	for j := 0; j < len(body); {
		n := utf8Len(body[j:])
		if n == 0 || body[j] == '$' || body[j] == '%' || body[j] == '\r' {
			return false
		}
		j += n
	}
	return bytes.Equal(bytes.TrimSpace(rest), marker)
}

// utf8Len is the length of the character at b[0] as hclsyntax's scanner
// reads UTF-8 (lead byte and continuation bytes only, so it accepts
// sequences Go's utf8 package rejects), or 0 when b[0] starts none.
func utf8Len(b []byte) int {
	n := 0
	switch c := b[0]; {
	case c < 0x80:
		return 1
	case c >= 0xC0 && c <= 0xDF:
		n = 2
	case c >= 0xE0 && c <= 0xEF:
		n = 3
	case c >= 0xF0 && c <= 0xF7:
		n = 4
	default:
		return 0
	}
	if len(b) < n {
		return 0
	}
	for _, c := range b[1:n] {
		if c < 0x80 || c > 0xBF {
			return 0
		}
	}
	return n
}

// splat reports whether src[i:] starts a full splat, [*] with optional
// white space (the parser skips line ends inside brackets), and returns
// the index after it.
func splat(src []byte, i int) (int, bool) {
	j := i + 1
	for _, want := range []byte{'*', ']'} {
		for j < len(src) && (src[j] == ' ' || src[j] == '\t' || src[j] == '\n' || src[j] == '\r') {
			j++
		}
		if j == len(src) || src[j] != want {
			return 0, false
		}
		j++
	}
	return j, true
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// lineEnd is the index of the newline ending the line at i, or len(src).
func lineEnd(src []byte, i int) int {
	if nl := bytes.IndexByte(src[i:], '\n'); nl >= 0 {
		return i + nl
	}
	return len(src)
}
