package nesting

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"gopkg.in/yaml.v3"
)

// maxFuzzInput keeps fuzz inputs small enough that the oracles (which do
// build trees) stay fast; the scanners themselves are linear.
const maxFuzzInput = 1 << 16

// tokenDepth is the oracle for HCL: the deepest nesting of hclsyntax's own
// token stream, with the same pairing rules as the scanner (a } closes the
// innermost { or template sequence, and [ or ( left open inside it stay
// counted). Literal text never appears as bracket tokens, so a scanner
// that lost track of a string, heredoc or comment shows up as a depth
// below this one.
func tokenDepth(src []byte) int {
	toks, _ := hclsyntax.LexConfig(src, "f.tf", hcl.InitialPos)
	var stack []hclsyntax.TokenType
	extra, deepest := 0, 0
	popTo := func(match func(hclsyntax.TokenType) bool) bool {
		for j := len(stack) - 1; j >= 0; j-- {
			if match(stack[j]) {
				extra += len(stack) - 1 - j
				stack = stack[:j]
				return true
			}
		}
		return false
	}
	for _, tok := range toks {
		switch tok.Type {
		case hclsyntax.TokenOBrace, hclsyntax.TokenOBrack, hclsyntax.TokenOParen,
			hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl,
			hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc:
			stack = append(stack, tok.Type)
		case hclsyntax.TokenCBrack, hclsyntax.TokenCParen:
			want := hclsyntax.TokenOBrack
			if tok.Type == hclsyntax.TokenCParen {
				want = hclsyntax.TokenOParen
			}
			if n := len(stack); n > 0 && stack[n-1] == want {
				stack = stack[:n-1]
			}
		case hclsyntax.TokenCBrace, hclsyntax.TokenTemplateSeqEnd:
			popTo(func(t hclsyntax.TokenType) bool {
				return t == hclsyntax.TokenOBrace || t == hclsyntax.TokenTemplateInterp || t == hclsyntax.TokenTemplateControl
			})
		case hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc:
			open := hclsyntax.TokenOQuote
			if tok.Type == hclsyntax.TokenCHeredoc {
				open = hclsyntax.TokenOHeredoc
			}
			if n := len(stack); n > 0 && stack[n-1] == open {
				stack = stack[:n-1]
			}
		}
		deepest = max(deepest, len(stack)+extra)
	}
	return deepest
}

// FuzzHCL: the scanner never counts less than hclsyntax's token stream
// nests, whatever the input: a text whose tokens reach depth d is refused
// under a bound of d-1.
func FuzzHCL(f *testing.F) {
	for _, s := range []string{
		"x = [[[1]]]\n",
		"x = \"${[\"]\"]}\" [[[\n",
		"x = <<EOT\n]]]\nEOT\n[[[\n",
		"x = <<-EOT\n  ${ a }\n  EOT\n",
		"x = <<EOT\n\xffEOT\n\"\nEOT\n]]]\"\n",
		"# ]]]\n[[[/* ]] */((\n",
		"x = \"$${ ]] %%{ ]]\" [[\n",
		"x = \"\\\"]]\" [[\n",
		"x = \"${ { } [ }\" ((\n",
		"x = \"%{ if a }]]%{ endif }\" {{\n",
		"x = <<É\n]]\nÉ\n[[\n",
		"a = b ? c : d ? e : f\n",
		"x = !!-!- 1\n",
		"} x = \"${ { } }\" ]\n",
		"x = \"\n]]\n\" [[\n",
		"x = <<EOT\r\n]]\r\nEOT\r\n[[\n",
		"x = a\xe6\"0(}(\"",
		"x = <<A\xe6\n\nB\n]]\nA\xe6\n\nB\n[[\n",
		"x = \xe8#]\n[[",
	} {
		f.Add([]byte(s))
	}
	f.Add([]byte("locals {\n  x = " + strings.Repeat("[", 2000) + strings.Repeat("]", 2000) + "\n}\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > maxFuzzInput {
			return
		}
		d := tokenDepth(src)
		if d < 2 {
			return
		}
		if err := HCL("f.tf", src, d-1); !errors.Is(err, ErrTooDeep) {
			t.Fatalf("hclsyntax's tokens nest %d deep, but the scanner passes the text under a bound of %d", d, d-1)
		}
	})
}

// TestHCLMatchesTokenizer is FuzzHCL's property over random texts built
// from the pieces that change hclsyntax's lexical mode (quotes, heredocs,
// template sequences, comments, escapes, non-ASCII identifiers that
// swallow the byte after them), from a fixed seed.
func TestHCLMatchesTokenizer(t *testing.T) {
	pieces := []string{
		"\"", "${", "%{", "}", "~}", "[", "]", "(", ")", "{", "<<EOT\n", "<<-EOT\n", "EOT\n", "  EOT\n",
		"#", "//", "/*", "*/", "\n", "\r\n", "\\", "$${", "%%{", "%{if a}", "%{endif}", "\xe6", "\xff",
		"é", "a", " ", "?", "!", "[*]", "$", "%", "\xe6\"", "<<É\n", "É\n", "x = ", "\xffEOT\n", "\xf0",
	}
	rng := rand.New(rand.NewPCG(20, 3))
	for n := 0; n < 10_000; n++ {
		var b strings.Builder
		for k := rng.IntN(40); k >= 0; k-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		src := []byte(b.String())
		if d := tokenDepth(src); d >= 2 {
			if err := HCL("f.tf", src, d-1); !errors.Is(err, ErrTooDeep) {
				t.Fatalf("hclsyntax's tokens nest %d deep in %q, but the scanner passes it under a bound of %d", d, src, d-1)
			}
		}
	}
}

// jsonDepth is the oracle for JSON: encoding/json's token stream, up to
// the first syntax error.
func jsonDepth(src []byte) int {
	dec := json.NewDecoder(bytes.NewReader(src))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('['), json.Delim('{'):
			depth++
			deepest = max(deepest, depth)
		case json.Delim(']'), json.Delim('}'):
			depth--
		}
	}
}

// FuzzJSON: the scanner never counts less than encoding/json nests.
func FuzzJSON(f *testing.F) {
	for _, s := range []string{`[[1]]`, `{"a": "]]", "b": [[{}]]}`, `["\"]", [[`, `{"a\\": [[[`, `[]]]][[[`} {
		f.Add([]byte(s))
	}
	f.Add([]byte(strings.Repeat("[", 2000)))
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > maxFuzzInput {
			return
		}
		if d := jsonDepth(src); d >= 2 {
			if err := JSON("f.json", src, d-1); !errors.Is(err, ErrTooDeep) {
				t.Fatalf("encoding/json nests %d deep, but the scanner passes the text under a bound of %d", d, d-1)
			}
		}
	})
}

// yamlTreeDepth is the depth of yaml.v3's tree (the root at 0), as
// yamlsafe bounds it.
func yamlTreeDepth(n *yaml.Node, depth int) int {
	deepest := depth
	for _, c := range n.Content {
		deepest = max(deepest, yamlTreeDepth(c, depth+1))
	}
	return deepest
}

// yamlCount is the smallest bound YAML accepts src under.
func yamlCount(src []byte) int {
	lo, hi := 1, 1<<15
	for lo < hi {
		mid := (lo + hi) / 2
		if YAML("f.yaml", src, mid) == nil {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// FuzzYAML: for YAML that yaml.v3 parses, the scanner's count is never
// far below the depth of the parsed tree. The scan approximates YAML's
// grammar (yaml.v3 and yamlsafe's tree check are the exact bounds), so
// the property allows one level of slack per two counted.
func FuzzYAML(f *testing.F) {
	for _, s := range []string{
		"a:\n  b:\n    c: [1, {d: e}]\n",
		"- - - x\n",
		"a:\n- b:\n  - c\n",
		"a: \"]]\"\nb: [[x]]\n",
		"a: |\n  [[[\n b: c\n",
		"a: 'it''s ]]'\n",
		"{\"a\": [\"]\", [[]]]}\n",
		"a: b [c\nd: [e]\n",
		"---\n- [\n  a,\n  [b]\n]\n---\nc: d\n",
		"? - a\n  - b\n: c\n",
	} {
		f.Add([]byte(s))
	}
	f.Add([]byte(strings.Repeat("- ", 200) + "x\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(src) > maxFuzzInput {
			return
		}
		count := yamlCount(src)
		defer func() {
			// yaml.v3 is the oracle here; its own panics are not the
			// scanner's to answer for.
			_ = recover()
		}()
		dec := yaml.NewDecoder(bytes.NewReader(src))
		for {
			var doc yaml.Node
			if err := dec.Decode(&doc); err != nil {
				return
			}
			if d := yamlTreeDepth(&doc, -1); d > 2*count+1 {
				t.Fatalf("yaml.v3's tree is %d deep, the scanner counts %d", d, count)
			}
		}
	})
}
