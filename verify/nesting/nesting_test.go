package nesting

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// deep is the size of a hostile answer: 80,000 levels fit in the 160 KB
// that overflowed HCL's parser (issue 20).
const deep = 80_000

type checker func(file string, src []byte, max int) error

// TestDeepInputsRejected: every shape the parsers recurse on, at 80,000
// levels, is refused with an *Error that names the bound and the line.
func TestDeepInputsRejected(t *testing.T) {
	r := strings.Repeat
	cases := []struct {
		name  string
		check checker
		src   string
		line  int
	}{
		{"hcl list", HCL, "locals {\n  x = " + r("[", deep) + r("]", deep) + "\n}\n", 2},
		{"hcl blocks", HCL, r("a {\n", deep) + r("}\n", deep), DefaultMax + 1},
		{"hcl objects", HCL, "x = " + r("{a=", deep) + "1" + r("}", deep) + "\n", 1},
		{"hcl parentheses", HCL, "x = " + r("(", deep) + "1" + r(")", deep) + "\n", 1},
		{"hcl calls", HCL, "x = " + r("f(", deep) + r(")", deep) + "\n", 1},
		{"hcl index", HCL, "x = a" + r("[a", deep) + r("]", deep) + "\n", 1},
		{"hcl interpolation", HCL, "x = \"" + r("${\"", deep) + "\n", 1},
		{"hcl heredoc interpolation", HCL, "x = <<EOT\n" + r("${<<EOT\n", deep) + "\n", DefaultMax/2 + 1},
		{"hcl unary not", HCL, "x = " + r("!", 3*deep) + "true\n", 1},
		{"hcl unary minus", HCL, "x = " + r("- ", deep) + "1\n", 1},
		{"hcl conditional chain", HCL, "x = " + r("a ? b : ", deep) + "c\n", 1},
		{"hcl conditional true branches", HCL, "x = " + r("a ?", deep) + "b\n", 1},
		{"hcl flat sum", HCL, "x = 1" + r("+1", deep) + "\n", 1},
		{"hcl flat sum in parentheses across lines", HCL, "x = (1" + r("\n+ 1", deep) + ")\n", DefaultMax + 1},
		{"hcl mixed operators", HCL, "x = a" + r(" * b - c / d % e", deep/4) + "\n", 1},
		{"hcl comparisons and logic", HCL, "x = a" + r(" == b && c != d || e <= f", deep/4) + "\n", 1},
		{"hcl index chain", HCL, "x = a" + r("[b]", deep) + "\n", 1},
		{"hcl splats", HCL, "x = a" + r("[*]", deep) + "\n", 1},
		{"hcl splats across lines", HCL, "x = a" + r("[\n*\n]", deep) + "\n", 2*(DefaultMax+1) + 1},
		{"hcl template if", HCL, "x = \"" + r("%{if a}", deep) + r("%{endif}", deep) + "\"\n", 1},
		{"hcl template for", HCL, "x = \"" + r("%{ for a in b ~}", deep) + "\"\n", 1},
		{"hcl json in heredoc", HCL, "x = <<EOT\n" + r("[", deep) + "\nEOT\n", 2},
		{"hcl brackets in string", HCL, "x = \"" + r("{", deep) + "\"\n", 1},
		{"hcl closers in strings", HCL, "x = " + r(`["]",`, deep) + "\n", 1},
		{"hcl closers in comments", HCL, "x = " + r("[ # ]\n", deep), DefaultMax + 1},
		{"hcl closers in block comments", HCL, "x = " + r("[/*]*/", deep) + "\n", 1},
		{"json arrays", JSON, r("[", deep) + r("]", deep), 1},
		{"json objects", JSON, r(`{"a":`, deep) + "1" + r("}", deep), 1},
		{"json closers in strings", JSON, r(`["]",`, deep), 1},
		{"json brackets in a string", JSON, `{"patch": "` + r("[", deep) + `"}`, 1},
		{"yaml flow sequences", YAML, "a: " + r("[", deep) + r("]", deep) + "\n", 1},
		{"yaml flow mappings", YAML, "a: " + r("{a: ", deep) + "b" + r("}", deep) + "\n", 1},
		{"yaml compact sequences", YAML, r("- ", deep) + "x\n", 1},
		{"yaml block mappings", YAML, indented("a:", 700), DefaultMax + 1},
		{"yaml sequences at their key's column", YAML, indentedSeq(deep / 200), 0},
		{"yaml closers in quotes", YAML, "a: " + r(`["]", `, deep) + "\n", 1},
		{"yaml brackets in a quoted scalar", YAML, `a: "` + r("{", deep) + `"` + "\n", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.check("in.txt", []byte(c.src), 0)
			var ne *Error
			if !errors.As(err, &ne) || !errors.Is(err, ErrTooDeep) {
				t.Fatalf("got %v, want a nesting error", err)
			}
			if ne.Limit != DefaultMax || !strings.Contains(err.Error(), "256 levels") || !strings.HasPrefix(err.Error(), "in.txt:") {
				t.Errorf("error %q does not name the file and the bound", err)
			}
			if c.line > 0 && ne.Line != c.line {
				t.Errorf("line %d, want %d", ne.Line, c.line)
			}
		})
	}
}

// indented nests n block mappings, one more column each.
func indented(key string, n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(strings.Repeat(" ", i) + key + "\n")
	}
	return b.String()
}

// indentedSeq nests "- a:" entries whose sequences start at their key's
// column: two levels per two columns.
func indentedSeq(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		b.WriteString(strings.Repeat(" ", 2*i) + "- a:\n")
	}
	return b.String()
}

// TestBoundIsExact: a text nested exactly to the bound passes and one
// level more fails, for every scanner.
func TestBoundIsExact(t *testing.T) {
	r := strings.Repeat
	for _, c := range []struct {
		name  string
		check checker
		text  func(n int) string
	}{
		{"hcl", HCL, func(n int) string { return "x = " + r("[", n) + r("]", n) + "\n" }},
		{"json", JSON, func(n int) string { return r("[", n) + r("]", n) }},
		// The line's node is a level of its own.
		{"yaml", YAML, func(n int) string { return r("[", n-1) + r("]", n-1) + "\n" }},
	} {
		if err := c.check("f", []byte(c.text(10)), 10); err != nil {
			t.Errorf("%s: 10 levels under a bound of 10: %v", c.name, err)
		}
		if err := c.check("f", []byte(c.text(11)), 10); !errors.Is(err, ErrTooDeep) {
			t.Errorf("%s: 11 levels under a bound of 10: %v", c.name, err)
		}
	}
}

// TestRealConfigsPass: ordinary configurations — including strings,
// heredocs, comments and block scalars full of unbalanced brackets — stay
// far below the bound, and so does every Terraform, Kubernetes and
// policy-pack file of the repository.
func TestRealConfigsPass(t *testing.T) {
	hclText := `# a comment with ( [ { that never close
resource "aws_iam_policy" "p" {
  name   = "${var.prefix}-[policy"
  policy = <<-EOT
    {"Statement": [{"Effect": "Allow", "Action": ["s3:*"]
    not closed: ( [ {
  EOT
  tags = {
    Env  = var.env == "prod" ? "p" : var.env == "dev" ? "d" : "x"
    Path = "a/$${literal}/%%{x}"
  }
  count = -1 * -var.n
  /* block ( comment */
}
`
	yamlText := `apiVersion: v1
kind: ConfigMap
metadata:
  name: x   # a comment [ {
  annotations:
    a: "quoted [ { with \" escapes"
    b: 'single [ '' quoted'
data:
  script: |
    if [ -f x ]; then {
      echo "(" [ {
  json: {"a": [1, {"b": [2]}], "c": "]]]"}
  list:
  - - a
    - b
  - [x, y]
  plain: a [b {c
---
- name: second document
  args: ["--flag", "[value"]
`
	jsonText := `{"a": [1, {"b": "]]]]"}], "c": "\"[[[["}`
	for name, err := range map[string]error{
		"hcl":  HCL("main.tf", []byte(hclText), 10),
		"yaml": YAML("x.yaml", []byte(yamlText), 8),
		"json": JSON("x.json", []byte(jsonText), 8),
	} {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}

	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		var check checker
		switch filepath.Ext(p) {
		case ".tf":
			check = HCL
		case ".yaml", ".yml":
			check = YAML
		default:
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		// A sixth of the bound: real files are nowhere near it.
		if err := check(p, b, DefaultMax/6); err != nil {
			t.Errorf("a real configuration is refused: %v", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 10 {
		t.Errorf("only %d configuration files found under %s", n, root)
	}
}

// TestHeredocMarkers: a heredoc ends exactly where hclsyntax ends it, so
// closing brackets after a line that only looks like a marker are text.
func TestHeredocMarkers(t *testing.T) {
	open := "x = " + strings.Repeat("[", 5) + "<<EOT\n"
	for _, c := range []struct {
		name, body string
		closed     bool
	}{
		{"marker", "EOT\n", true},
		{"indented marker", "   EOT  \n", true},
		{"crlf marker", "EOT\r\n", true},
		{"broken byte before the marker", "\xffEOT\n", true},
		{"dollar on the line", "EOT$\n", false},
		{"percent on the line", "%EOT\n", false},
		{"after an interpolation", "${a}EOT\n", false},
		{"marker inside an interpolation's line", "${a\n}EOT\n", false},
		{"longer word", "EOTX\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			// After the heredoc, five closers: if it closed, they close the
			// five brackets; if not, they are text and the brackets stay.
			src := open + c.body + "]]]]]\n" + strings.Repeat("[", 5)
			err := HCL("m.tf", []byte(src), 9)
			if got := err == nil; got != c.closed {
				t.Errorf("closed = %v, want %v (err %v)", got, c.closed, err)
			}
		})
	}
	// A Unicode marker is settled by hclsyntax's own scanner. Inside a
	// heredoc the closers are text, so the brackets reach 3+1+3 > 5;
	// outside one they close and the depth stays at 3.
	for marker, heredoc := range map[string]bool{"ÉTÉ": true, "A→": false} {
		src := "x = [[[<<" + marker + "\n]]]\n" + marker + "\n[[["
		if err := HCL("m.tf", []byte(src), 5); (err != nil) != heredoc {
			t.Errorf("<<%s: err %v, want a heredoc: %v", marker, err, heredoc)
		}
	}
}
