package cli

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// docFiles are the pages a user reads first: the front door and docs/.
func docFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{filepath.Join("..", "..", "README.md")}, files...)
}

// shellBlock is one fenced sh block: its text and the line it starts on.
type shellBlock struct {
	text string
	line int
}

func shellBlocks(t *testing.T, path string) []shellBlock {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []shellBlock
	var cur *shellBlock
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case cur == nil && (l == "```sh" || l == "```bash" || l == "```shell"):
			cur = &shellBlock{line: n + 1}
		case cur != nil && strings.HasPrefix(l, "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDocsCommandsExist parses every fenced shell block of README.md and
// docs/*.md and checks each `svbench …` command in it: the subcommand
// exists and every flag it is given is one that subcommand declares (under
// its own name, a shorthand, or another tool's alias that svbench accepts).
// A command the docs show and the binary refuses is a first-hour failure
// no other test sees. Placeholders (RUN_DIR, <alias>) are arguments, not
// flags, so they pass; the commands that need no network or user data run
// in their own tests (TestREADMEDataCommands, the demo and eval tests).
func TestDocsCommandsExist(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	checked := 0
	for _, path := range docFiles(t) {
		for _, b := range shellBlocks(t, path) {
			f, err := syntax.NewParser().Parse(strings.NewReader(b.text), path)
			if err != nil {
				t.Errorf("%s:%d: the block is not valid shell: %v", path, b.line, err)
				continue
			}
			syntax.Walk(f, func(n syntax.Node) bool {
				call, ok := n.(*syntax.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				args := make([]string, len(call.Args))
				for i, w := range call.Args {
					args[i] = literal(w)
				}
				if filepath.Base(args[0]) != "svbench" {
					return true
				}
				checked++
				for _, p := range docCommandProblems(root, args[1:]) {
					t.Errorf("%s:%d: svbench %s: %s", path, b.line+int(call.Pos().Line())-1, strings.Join(args[1:], " "), p)
				}
				return true
			})
		}
	}
	if checked < 20 {
		t.Errorf("only %d svbench commands found in the docs: is the extraction broken?", checked)
	}
}

// literal is a shell word as the shell would pass it; a command
// substitution becomes a placeholder and an unset variable the empty
// string (they name paths and values, never flags).
func literal(w *syntax.Word) string {
	s, err := expand.Literal(&expand.Config{Env: expand.ListEnviron()}, w)
	if err != nil {
		return "VALUE"
	}
	return s
}

// docCommandProblems checks one documented command line (without
// "svbench"): what is wrong with it, nothing when svbench accepts it.
func docCommandProblems(root *cobra.Command, args []string) []string {
	cmd, rest, err := root.Find(args)
	if err != nil {
		return []string{err.Error()}
	}
	if cmd.HasSubCommands() && !cmd.Runnable() && len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		return []string{fmt.Sprintf("%s has no subcommand %s", cmd.CommandPath(), rest[0])}
	}
	var out []string
	lookup := func(name string, short bool) *pflag.Flag {
		if short {
			if f := cmd.Flags().ShorthandLookup(name); f != nil {
				return f
			}
			return cmd.InheritedFlags().ShorthandLookup(name)
		}
		if f := cmd.Flags().Lookup(name); f != nil {
			return f
		}
		return cmd.InheritedFlags().Lookup(name)
	}
	for _, a := range rest {
		if a == "--" {
			break
		}
		switch {
		case strings.HasPrefix(a, "--"):
			name, _, _ := strings.Cut(a[2:], "=")
			if name != "help" && lookup(name, false) == nil {
				out = append(out, fmt.Sprintf("%s has no flag --%s", cmd.CommandPath(), name))
			}
		case len(a) >= 2 && a[0] == '-' && unicode.IsLetter(rune(a[1])):
			// -n 10, -n10 and -vs: each letter up to a value is a shorthand.
			for _, r := range a[1:] {
				f := lookup(string(r), true)
				if f == nil {
					if r != 'h' {
						out = append(out, fmt.Sprintf("%s has no flag -%c", cmd.CommandPath(), r))
					}
					break
				}
				if f.NoOptDefVal == "" {
					break // the rest is this flag's value
				}
			}
		}
	}
	return out
}

func TestDocCommandProblems(t *testing.T) {
	root := newRootCmd(io.Discard, io.Discard)
	cases := []struct {
		line string
		bad  bool
	}{
		{"eval --env e1 -m builtin:features -n 10 -c 2", false},
		{"eval --env e1 --limit 5", false}, // Inspect's name, accepted
		{"eval --env e1 -n5 -T 0", false},
		{"data build e1 --n 10 --out x", false},
		{"report RUN_DIR --out out", false},
		{"eval --env e1 --no-such-flag", true},
		{"eval --env e1 -Q", true},
		{"evaluate --env e1", true},
		{"data nonsense e1", true},
	}
	for _, c := range cases {
		got := docCommandProblems(root, strings.Fields(c.line))
		if (len(got) > 0) != c.bad {
			t.Errorf("svbench %s: problems %q, want bad=%v", c.line, got, c.bad)
		}
	}
}

// TestDocsLinksResolve checks every relative link of README.md and docs/*.md:
// the file exists and, for a link into a Markdown file with a #fragment, a
// heading of that file has that anchor (GitHub's slugs). Moving a section
// from one page to another is how such links break.
func TestDocsLinksResolve(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, path := range docFiles(t) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		inFence := false
		for n, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "```") {
				inFence = !inFence
			}
			if inFence {
				continue
			}
			for _, m := range link.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, frag, _ := strings.Cut(target, "#")
				resolved := path
				if file != "" {
					resolved = filepath.Join(filepath.Dir(path), file)
					if _, err := os.Stat(resolved); err != nil {
						t.Errorf("%s:%d: link %s: %v", path, n+1, target, err)
						continue
					}
				}
				if frag != "" && strings.HasSuffix(resolved, ".md") && !hasAnchor(t, resolved, frag) {
					t.Errorf("%s:%d: link %s: %s has no heading with the anchor #%s", path, n+1, target, resolved, frag)
				}
			}
		}
	}
}

// hasAnchor reports whether a Markdown file has a heading whose GitHub slug
// is frag: lower case, punctuation other than - and _ dropped, spaces as -.
func hasAnchor(t *testing.T, path, frag string) bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		h := strings.TrimLeft(l, "#")
		if len(h) == len(l) || !strings.HasPrefix(h, " ") {
			continue
		}
		var slug strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(h)) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				slug.WriteRune(r)
			case r == ' ':
				slug.WriteRune('-')
			}
		}
		if slug.String() == frag {
			return true
		}
	}
	return false
}
