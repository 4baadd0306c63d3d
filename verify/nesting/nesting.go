// Package nesting bounds how deeply a text nests before a recursive parser
// reads it.
//
// The parsers svbench feeds model output and dataset files to recurse once
// per level of nesting, and Go does not recover from a goroutine that
// outgrows its stack: HCL's parser dies with "stack exceeds 1000000000-byte
// limit" on 160 KB of "[" or 250 KB of "!", taking the whole process (a
// reward server, an evaluation run) with it. Some parsers bound themselves
// (encoding/json and gopkg.in/yaml.v3 stop at 10,000 levels); HCL's does
// not, nor does the JSON reader trivy parses IAM policies inside Terraform
// strings with, and the OPA input builder and the structure checks walk
// whatever tree they are given. So every text an environment hands to a
// recursive parser is first measured here, by a linear scan that builds no
// tree, against one bound: DefaultMax.
//
// The scanners err on the side of counting: brackets inside strings,
// heredocs and comments count while the literal lasts (a JSON policy in a
// heredoc is parsed again later), and chains the HCL parser recurses on
// without brackets (unary operators, conditionals, [*] splats, template
// directives), and chains it builds into a tree one level deeper per link
// (binary operators, indexes), count as levels. Real configurations nest a dozen or two
// levels; the bound is ten times that.
package nesting

import (
	"errors"
	"fmt"
)

// DefaultMax is the nesting bound: the deepest a configuration file, a
// patched file or a patch may nest, in levels as the scanners of this
// package count them. Real Kubernetes manifests and Terraform modules nest
// fewer than 30; 256 levels cost a parser kilobytes of stack where the
// 80,000 a 160 KB answer can hold cost more than the gigabyte Go allows.
const DefaultMax = 256

// ErrTooDeep is matched by errors.Is for every *Error, including ones
// wrapped by other packages' error types.
var ErrTooDeep = errors.New("nesting bound exceeded")

// Error reports a text that nests deeper than the bound.
type Error struct {
	File  string // as the caller named it; may be empty
	Line  int    // 1-based line where the bound was crossed
	Limit int    // the bound that was crossed
}

func (e *Error) Error() string {
	file := e.File
	if file == "" {
		file = "<input>"
	}
	return fmt.Sprintf("%s:%d: nested deeper than %d levels (the nesting bound); flatten the structure", file, e.Line, e.Limit)
}

// Unwrap lets errors.Is(err, ErrTooDeep) find the cause.
func (e *Error) Unwrap() error { return ErrTooDeep }

// limit returns max, or DefaultMax when max is not positive.
func limit(max int) int {
	if max <= 0 {
		return DefaultMax
	}
	return max
}

// JSON checks JSON text (or anything whose only nesting is [] and {},
// with "..." strings and backslash escapes). Brackets inside a string count
// while the string lasts and never close brackets outside it, so a string
// holding JSON is measured as the JSON it holds.
func JSON(file string, src []byte, max int) error {
	max = limit(max)
	depth, line := 0, 1
	for i := 0; i < len(src); i++ {
		switch c := src[i]; c {
		case '\n':
			line++
		case '[', '{':
			depth++
			if depth > max {
				return &Error{File: file, Line: line, Limit: max}
			}
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case '"':
			end, err := jsonString(file, src, i+1, depth, max, &line)
			if err != nil {
				return err
			}
			i = end
		}
	}
	return nil
}

// jsonString scans a JSON string whose body starts at src[i], counting its
// own brackets on top of depth, and returns the index of the closing quote
// (len(src) when the string is unterminated).
func jsonString(file string, src []byte, i, depth, max int, line *int) (int, error) {
	local := 0
	for ; i < len(src); i++ {
		switch src[i] {
		case '\\':
			i++
			if i < len(src) && src[i] == '\n' {
				*line++
			}
		case '"':
			return i, nil
		case '\n':
			*line++
		case '[', '{', '(':
			local++
			if depth+local > max {
				return 0, &Error{File: file, Line: *line, Limit: max}
			}
		case ']', '}', ')':
			if local > 0 {
				local--
			}
		}
	}
	return len(src), nil
}
