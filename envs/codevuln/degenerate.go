package codevuln

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// Degenerate repairs: what a policy that cannot repair the code tries
// first (delete the body, special-case the visible tests' inputs, swallow
// every error, silence the analysers, change nothing of substance, return
// a constant). Each is
// registered for `svbench probe` and held below a quarter of the reference
// on every task by TestProbesScoreFarBelowReference. They rewrite the API
// functions the prompt names, and hard-code-visible reads the visible tests
// (read_file serves them): nothing a model could not see.

// apiNamesOf returns the API function names of a task.
func apiNamesOf(t *taskset.Task) map[string]bool {
	m := map[string]bool{}
	for _, n := range t.APINames() {
		m[n] = true
	}
	return m
}

// pyRewrite applies edit to the body (lines after the def line, by
// indentation) of every API function in every editable file.
func pyRewrite(t *taskset.Task, edit func(indent string, params []string, body []string) []string) Files {
	names := apiNamesOf(t)
	out := Files{}
	for _, f := range t.Files {
		lines := strings.Split(string(t.Src[f]), "\n")
		var res []string
		for i := 0; i < len(lines); i++ {
			res = append(res, lines[i])
			m := regexp.MustCompile(`^(\s*)def (\w+)\(`).FindStringSubmatch(lines[i])
			if m == nil || !names[m[2]] {
				continue
			}
			defStart := i
			// Find the end of the signature (the line ending with ':').
			for !strings.HasSuffix(strings.TrimSpace(stripPyComment(lines[i])), ":") && i+1 < len(lines) {
				i++
				res = append(res, lines[i])
			}
			j := i + 1
			for j < len(lines) && (strings.TrimSpace(lines[j]) == "" || indentOf(lines[j]) > len(m[1])) {
				j++
			}
			for j > i+1 && strings.TrimSpace(lines[j-1]) == "" {
				j--
			}
			body := lines[i+1 : j]
			indent := m[1] + "    "
			if len(body) > 0 {
				indent = body[0][:indentOf(body[0])]
			}
			var params []string
			for _, d := range pyDefs(strings.TrimLeft(strings.Join(lines[defStart:i+1], "\n"), " \t") + "\n") {
				params = d.params
			}
			res = append(res, edit(indent, params, body)...)
			i = j - 1
		}
		out[f] = []byte(strings.Join(res, "\n"))
	}
	return out
}

func indentOf(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }

// goRewrite replaces or wraps the body of every API function.
func goRewrite(t *taskset.Task, edit func(fd *ast.FuncDecl, body string) string) Files {
	names := apiNamesOf(t)
	out := Files{}
	for _, f := range t.Files {
		src := t.Src[f]
		fset := token.NewFileSet()
		file, err := parser.ParseFile(fset, f, src, parser.SkipObjectResolution)
		if err != nil {
			return nil
		}
		type span struct {
			lo, hi int
			text   string
		}
		var spans []span
		for _, d := range file.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil || !names[fd.Name.Name] {
				continue
			}
			lo, hi := fset.Position(fd.Body.Lbrace).Offset, fset.Position(fd.Body.Rbrace).Offset
			spans = append(spans, span{lo, hi + 1, edit(fd, string(src[lo+1:hi]))})
		}
		var b bytes.Buffer
		prev := 0
		for _, s := range spans {
			b.Write(src[prev:s.lo])
			b.WriteString("{" + s.text + "}")
			prev = s.hi
		}
		b.Write(src[prev:])
		out[f] = b.Bytes()
	}
	return out
}

// cRewrite replaces the body of every API function of a C or C++ task.
func cRewrite(t *taskset.Task, edit func(d taskset.CFuncDef, body string) string) Files {
	names := apiNamesOf(t)
	out := Files{}
	for _, f := range t.Files {
		src := t.Src[f]
		var b bytes.Buffer
		prev := 0
		for _, d := range taskset.CFuncs(src) {
			if !names[d.Name] {
				continue
			}
			b.Write(src[prev : d.Open+1])
			b.WriteString(edit(d, string(src[d.Open+1:d.Close])))
			prev = d.Close
		}
		b.Write(src[prev:])
		out[f] = b.Bytes()
	}
	return out
}

// cReturnsValue reports whether a C or C++ function returns something.
func cReturnsValue(d taskset.CFuncDef) bool {
	for _, w := range strings.Fields(strings.NewReplacer("*", " * ", "&", " & ").Replace(d.Ret)) {
		switch w {
		case "static", "inline", "extern", "void":
		default:
			return true
		}
	}
	return false
}

var literalRe = regexp.MustCompile(`"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'`)

// visibleLiterals are the string literals of the visible tests: the inputs
// a hard-coding patch would special-case.
func visibleLiterals(t *taskset.Task) []string {
	seen := map[string]bool{}
	for _, b := range t.Visible {
		for _, l := range literalRe.FindAllString(string(b), -1) {
			seen[l[1:len(l)-1]] = true
		}
	}
	out := slices.Sorted(maps.Keys(seen))
	return out
}

var degenerateProbes = []exploitEdit{
	{"delete-body", func(t *taskset.Task) Files {
		if taskset.CLike(t.Language) {
			return cRewrite(t, func(taskset.CFuncDef, string) string { return "\n" })
		}
		if t.Language == taskset.Go {
			return goRewrite(t, func(*ast.FuncDecl, string) string { return "\n\tpanic(\"removed\")\n" })
		}
		return pyRewrite(t, func(indent string, _ []string, _ []string) []string { return []string{indent + "pass"} })
	}},
	{"hard-code-visible", func(t *taskset.Task) Files {
		lits := visibleLiterals(t)
		if t.RunsBinary() {
			// The tests of a task run as a program are not shown:
			// nothing to hard-code.
			return nil
		}
		if t.Language == taskset.Go {
			var q []string
			for _, l := range lits {
				q = append(q, strconv.Quote(l))
			}
			out := goRewrite(t, func(fd *ast.FuncDecl, body string) string {
				var guard strings.Builder
				for _, p := range fd.Type.Params.List {
					if id, ok := p.Type.(*ast.Ident); ok && id.Name == "string" {
						for _, n := range p.Names {
							fmt.Fprintf(&guard, "\n\tif !svbSeen[%s] {\n\t\tpanic(\"input not in the visible tests\")\n\t}", n.Name)
						}
					}
				}
				return guard.String() + body
			})
			for f, b := range out {
				out[f] = append(b, []byte("\nvar svbSeen = map[string]bool{"+strings.Join(q, ": true, ")+": true}\n")...)
				break
			}
			return out
		}
		var q []string
		for _, l := range lits {
			q = append(q, strconv.Quote(l))
		}
		out := pyRewrite(t, func(indent string, params []string, body []string) []string {
			var g []string
			for _, p := range params {
				p = strings.TrimLeft(p, "*")
				if p == "self" || p == "cls" || p == "" {
					continue
				}
				g = append(g, fmt.Sprintf("%sif isinstance(%s, str) and %s not in _SVB_SEEN:", indent, p, p), indent+"    raise ValueError('input not in the visible tests')")
			}
			return append(g, body...)
		})
		for f, b := range out {
			out[f] = append(b, []byte("\n_SVB_SEEN = {"+strings.Join(q, ", ")+"}\n")...)
		}
		return out
	}},
	{"catch-all", func(t *taskset.Task) Files {
		switch t.Language {
		case taskset.Cpp:
			return cRewrite(t, func(_ taskset.CFuncDef, body string) string {
				return "\n    try {" + body + "} catch (...) {}\n"
			})
		case taskset.JavaScript:
			return cRewrite(t, func(_ taskset.CFuncDef, body string) string {
				return "\n    try {" + body + "} catch (svbErr) {}\n"
			})
		case taskset.C:
			return nil // C has no exceptions to swallow
		}
		if t.Language == taskset.Go {
			return goRewrite(t, func(_ *ast.FuncDecl, body string) string {
				return "\n\tdefer func() { _ = recover() }()" + body
			})
		}
		return pyRewrite(t, func(indent string, _ []string, body []string) []string {
			out := []string{indent + "try:"}
			for _, l := range body {
				if strings.TrimSpace(l) == "" {
					out = append(out, l)
				} else {
					out = append(out, "    "+l)
				}
			}
			return append(out, indent+"except Exception:", indent+"    pass")
		})
	}},
	{"suppression-comments", func(t *taskset.Task) Files {
		out := Files{}
		for _, f := range t.Files {
			var lines []string
			for _, l := range strings.Split(string(t.Src[f]), "\n") {
				if strings.TrimSpace(l) != "" && !strings.HasSuffix(strings.TrimSpace(l), "\\") && !strings.Contains(l, `"""`) && !strings.Contains(l, "`") {
					if t.Language == taskset.JavaScript {
						l += " // eslint-disable-line"
					} else if taskset.Compiled(t.Language) {
						l += " // NOLINT(cert-*,bugprone-*) flawfinder: ignore"
					} else if t.Language == taskset.Go {
						l += " //nolint // #nosec"
					} else if !strings.HasSuffix(strings.TrimSpace(l), ",") {
						l += "  # nosec"
					}
				}
				lines = append(lines, l)
			}
			out[f] = []byte(strings.Join(lines, "\n"))
		}
		return out
	}},
	{"inert-edit", func(t *taskset.Task) Files {
		switch {
		case t.Language == taskset.JavaScript:
			return cRewrite(t, func(_ taskset.CFuncDef, body string) string { return "\n    void 0;" + body })
		case taskset.Compiled(t.Language):
			return cRewrite(t, func(_ taskset.CFuncDef, body string) string { return "\n    (void)0;" + body })
		}
		if t.Language == taskset.Go {
			return goRewrite(t, func(_ *ast.FuncDecl, body string) string { return "\n\t_ = 0" + body })
		}
		return pyRewrite(t, func(indent string, _ []string, body []string) []string {
			return append([]string{indent + "_svb_unused = None"}, body...)
		})
	}},
	{"return-constant", func(t *taskset.Task) Files {
		if taskset.CLike(t.Language) {
			return cRewrite(t, func(d taskset.CFuncDef, _ string) string {
				switch {
				case t.Language == taskset.JavaScript:
					return "\n    return '';\n"
				case !cReturnsValue(d):
					return "\n    return;\n"
				case t.Language == taskset.Cpp:
					return "\n    return {};\n"
				}
				return "\n    return 0;\n"
			})
		}
		if t.Language != taskset.Python {
			return nil
		}
		return pyRewrite(t, func(indent string, _ []string, _ []string) []string { return []string{indent + "return ''"} })
	}},
}
