package taskset

import "strings"

// PyParams splits a parameter list at top-level commas and keeps each
// parameter's name with its * or ** marker: annotations and default values
// do not change how callers call a function.
func PyParams(list string) []string {
	var out []string
	depth := 0
	var cur strings.Builder
	var quote byte
	flush := func() {
		p := strings.TrimSpace(cur.String())
		cur.Reset()
		if p == "" {
			return
		}
		if i := strings.IndexAny(p, ":="); i >= 0 {
			p = strings.TrimSpace(p[:i])
		}
		out = append(out, p)
	}
	for i := 0; i < len(list); i++ {
		c := list[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
				continue
			}
			if c == quote {
				quote = 0
			}
			continue
		case c == '\'' || c == '"':
			quote = c
		case c == '(' || c == '[' || c == '{':
			depth++
		case c == ')' || c == ']' || c == '}':
			depth--
		case c == ',' && depth == 0:
			flush()
			continue
		case c == '#':
			for i < len(list) && list[i] != '\n' {
				i++
			}
			continue
		}
		cur.WriteByte(c)
	}
	flush()
	return out
}

// PyBalanced returns the text inside the parenthesis opening at s[0].
func PyBalanced(s string) (string, bool) {
	depth := 0
	var quote byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth == 0 {
				return s[1:i], true
			}
		}
	}
	return "", false
}
