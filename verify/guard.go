package verify

import "fmt"

// Default bounds for HCL input, shared by the Terraform verifiers.
const (
	DefaultMaxHCLBytes = 1 << 20
	DefaultMaxHCLDepth = 64
)

// GuardHCL rejects Terraform text that is too large or nested too deeply
// before a recursive-descent parser sees it: HCL parsers recurse once per
// bracket, and a megabyte of "[" would otherwise cost a deep stack and time.
// Brackets inside strings and comments count too, so the bound is
// conservative; real configurations nest a handful of levels. Zero limits
// take the defaults.
func GuardHCL(path string, content []byte, maxBytes, maxDepth int) error {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxHCLBytes
	}
	if maxDepth <= 0 {
		maxDepth = DefaultMaxHCLDepth
	}
	if len(content) > maxBytes {
		return fmt.Errorf("%s: %d bytes exceeds the %d-byte limit for a Terraform file", path, len(content), maxBytes)
	}
	depth, line := 0, 1
	for _, c := range content {
		switch c {
		case '\n':
			line++
		case 0:
			return fmt.Errorf("%s:%d: NUL byte: not a Terraform text file", path, line)
		case '{', '[', '(':
			depth++
			if depth > maxDepth {
				return fmt.Errorf("%s:%d: brackets nested deeper than %d levels", path, line, maxDepth)
			}
		case '}', ']', ')':
			if depth > 0 {
				depth--
			}
		}
	}
	return nil
}
