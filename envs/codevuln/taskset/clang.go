package taskset

import (
	"regexp"
	"strings"
)

// C and C++ sources are read by the importer (where a function's body
// starts and ends), the API check (is the function still defined with the
// same parameters) and the degenerate probes (rewrite its body). One
// lexer-level reading serves all three: comments, preprocessor lines and
// the insides of string and character literals are masked, so braces and
// parentheses left are code.

// CMask returns src with comments, preprocessor directives and the
// contents of string and character literals replaced by spaces (newlines
// kept), so offsets in the result are offsets in src.
func CMask(src []byte) []byte { return cMask(src, true) }

// CStripComments returns src with its comments replaced by spaces, code,
// literals and directives kept: what tells a comment-only edit from one
// that changes the program.
func CStripComments(src []byte) []byte { return cMask(src, false) }

func cMask(src []byte, code bool) []byte {
	out := make([]byte, len(src))
	copy(out, src)
	blank := func(i int) {
		if out[i] != '\n' {
			out[i] = ' '
		}
	}
	lineStart := true
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch {
		case code && lineStart && c == '#':
			// A directive runs to the end of the line, continued by a
			// backslash-newline.
			for ; i < len(src) && src[i] != '\n'; i++ {
				if src[i] == '\\' && i+1 < len(src) && src[i+1] == '\n' {
					blank(i)
					i++
				}
				blank(i)
			}
			lineStart = true
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '/':
			for ; i < len(src) && src[i] != '\n'; i++ {
				blank(i)
			}
			lineStart = true
			continue
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			end := strings.Index(string(src[i+2:]), "*/")
			stop := len(src)
			if end >= 0 {
				stop = i + 2 + end + 2
			}
			for ; i < stop; i++ {
				blank(i)
			}
			i--
			continue
		case c == '"' || c == '\'':
			// Raw strings (C++ R"(...)") are rare enough in these tasks
			// to read as ordinary ones.
			for i++; i < len(src) && src[i] != c && src[i] != '\n'; i++ {
				if src[i] == '\\' && i+1 < len(src) {
					if code {
						blank(i)
					}
					i++
				}
				if code {
					blank(i)
				}
			}
		}
		if c == '\n' {
			lineStart = true
		} else if c != ' ' && c != '\t' && c != '\r' {
			lineStart = false
		}
	}
	return out
}

// CFuncDef is a function definition found in C or C++ source.
type CFuncDef struct {
	Name string
	// Ret is the text before the name (return type and specifiers) and
	// Params the parameter list, each with its runs of white space made
	// one space (compare them through CNorm).
	Ret, Params string
	// Sig is the offset where the declaration starts; Open and Close are
	// those of the body's braces.
	Sig, Open, Close int
}

// API renders the definition as an API entry: name(parameters).
func (d CFuncDef) API() string { return d.Name + "(" + d.Params + ")" }

var (
	cSpaceRe  = regexp.MustCompile(`\s+`)
	cPunctRe  = regexp.MustCompile(`\s*([*&,()\[\]])\s*`)
	cIdentRe  = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)
	cNameRe   = regexp.MustCompile(`([A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_~][A-Za-z0-9_]*)*)$`)
	cKeywords = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "return": true, "sizeof": true, "catch": true}
)

// CNorm normalises declaration text: one space between words, none around
// punctuation, so "char* a ,int b" and "char *a, int b" read alike.
func CNorm(s string) string {
	s = cSpaceRe.ReplaceAllString(strings.TrimSpace(s), " ")
	return cPunctRe.ReplaceAllString(s, "$1")
}

// CFuncs lists the function definitions at the top level of src (and
// inside namespaces and extern "C" blocks), in order.
func CFuncs(src []byte) []CFuncDef {
	m := CMask(src)
	var out []CFuncDef
	stmt := 0 // where the current top-level declaration began
	for i := 0; i < len(m); i++ {
		switch m[i] {
		case ';':
			stmt = i + 1
		case '}':
			// The end of a namespace or extern "C" block.
			stmt = i + 1
		case '{':
			head := string(m[stmt:i])
			if d, ok := cDefinition(m, stmt, head); ok {
				close := CMatch(m, i)
				if close < 0 {
					return out
				}
				d.Open, d.Close = i, close
				out = append(out, d)
				i, stmt = close, close+1
				continue
			}
			if strings.Contains(head, "=") || strings.Contains(head, "struct") || strings.Contains(head, "class") || strings.Contains(head, "enum") || strings.Contains(head, "union") {
				// An initialiser or a type's body: skip it whole.
				if close := CMatch(m, i); close >= 0 {
					i = close
					continue
				}
			}
			// A namespace or extern "C" block: its definitions are read.
			stmt = i + 1
		}
	}
	return out
}

// cDefinition reads head (the masked text from the last statement boundary
// to a '{') as a function definition's declarator.
func cDefinition(m []byte, start int, head string) (CFuncDef, bool) {
	close := strings.LastIndexByte(head, ')')
	if close < 0 {
		return CFuncDef{}, false
	}
	// Only qualifiers may follow the parameter list (const, noexcept,
	// override; a C++ constructor's initialiser list is not supported).
	for _, w := range cIdentRe.FindAllString(head[close+1:], -1) {
		switch w {
		case "const", "noexcept", "override", "final":
		default:
			return CFuncDef{}, false
		}
	}
	if strings.Trim(cIdentRe.ReplaceAllString(head[close+1:], ""), " \t\r\n") != "" {
		return CFuncDef{}, false
	}
	depth, openParen := 0, -1
	for j := close; j >= 0; j-- {
		switch head[j] {
		case ')':
			depth++
		case '(':
			depth--
			if depth == 0 {
				openParen = j
			}
		}
		if openParen >= 0 {
			break
		}
	}
	if openParen < 0 {
		return CFuncDef{}, false
	}
	before := strings.TrimRight(head[:openParen], " \t\r\n")
	loc := cNameRe.FindStringIndex(before)
	if loc == nil {
		return CFuncDef{}, false
	}
	name := before[loc[0]:loc[1]]
	if cKeywords[name] {
		return CFuncDef{}, false
	}
	return CFuncDef{
		Name:   name,
		Ret:    cSpaceRe.ReplaceAllString(strings.TrimSpace(before[:loc[0]]), " "),
		Params: cSpaceRe.ReplaceAllString(strings.TrimSpace(string(m[start+openParen+1:start+close])), " "),
		Sig:    start + len(head) - len(strings.TrimLeft(head, " \t\r\n")),
	}, true
}

// CFunc finds the definition of the function called name.
func CFunc(src []byte, name string) (CFuncDef, bool) {
	for _, d := range CFuncs(src) {
		if d.Name == name {
			return d, true
		}
	}
	return CFuncDef{}, false
}

// CMatch returns the offset of the brace closing the one at open in masked
// source, or -1.
func CMatch(m []byte, open int) int {
	depth := 0
	for i := open; i < len(m); i++ {
		switch m[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return i
			}
		}
	}
	return -1
}
