package yamlsafe

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/svbench/svbench/verify/nesting"
)

func TestSplit(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		lim     Limits
		lines   []int // document start lines
		limit   bool
		errLine int
	}{
		{name: "single", in: "a: 1\nb: 2\n", lines: []int{1}},
		{name: "multi with comments and empty docs", in: "# c\na: 1\n---\n---   # sep comment\n\nb: 2\n--- \nc: 3", lines: []int{2, 6, 8}},
		{name: "separator with content is not a split", in: "a: 1\n--- b: 2\n", errLine: 2},
		{name: "document count", in: strings.Repeat("a: 1\n---\n", 5), lim: Limits{MaxDocuments: 3}, limit: true},
		{name: "bytes", in: strings.Repeat("a", 100), lim: Limits{MaxBytes: 10}, limit: true},
		{name: "depth", in: strings.Repeat("[", 50) + strings.Repeat("]", 50), lim: Limits{MaxDepth: 20}, limit: true},
		{name: "aliases", in: "a: &a 1\nb: [" + strings.Repeat("*a, ", 20) + "*a]\n", lim: Limits{MaxAliases: 10}, limit: true},
		{name: "syntax error line in later document", in: "a: 1\n---\nb: 2\nc: [\n", errLine: 4},
		{name: "invalid utf8", in: "a: \xff\n", errLine: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			docs, err := Split("f.yaml", []byte(tt.in), tt.lim)
			if tt.limit {
				if !errors.Is(err, ErrLimit) {
					t.Fatalf("err = %v, want limit error", err)
				}
				return
			}
			if tt.lines == nil {
				var e *Error
				if !errors.As(err, &e) || errors.Is(err, ErrLimit) || e.File != "f.yaml" || (tt.errLine > 0 && e.Line != tt.errLine) {
					t.Fatalf("err = %#v, want syntax error at line %d", err, tt.errLine)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, d := range docs {
				if !d.Empty() {
					got = append(got, d.Line)
				}
			}
			if len(got) != len(tt.lines) {
				t.Fatalf("lines %v, want %v", got, tt.lines)
			}
			for i := range got {
				if got[i] != tt.lines[i] {
					t.Fatalf("lines %v, want %v", got, tt.lines)
				}
			}
		})
	}
}

func billionLaughs(levels, fan int) string {
	var b strings.Builder
	b.WriteString("l0: &l0 [lol]\n")
	for i := 1; i <= levels; i++ {
		b.WriteString("l" + itoa(i) + ": &l" + itoa(i) + " [")
		for j := 0; j < fan; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*l" + itoa(i-1))
		}
		b.WriteString("]\n")
	}
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

func TestAliasBomb(t *testing.T) {
	// 9 levels of 9-way fan-out: ~390 million nodes once expanded, from
	// under a kilobyte of text.
	_, err := Split("bomb.yaml", []byte(billionLaughs(9, 9)), Limits{})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "alias") {
		t.Fatalf("err = %v, want alias-bomb rejection", err)
	}
	// A few aliases for reuse are fine.
	if _, err := Split("ok.yaml", []byte(billionLaughs(2, 3)), Limits{}); err != nil {
		t.Fatalf("small aliasing rejected: %v", err)
	}
}

func TestValue(t *testing.T) {
	docs, err := Split("v.yaml", []byte("base: &b {x: 1}\nm:\n  <<: *b\n  y: 2.5\n  1: one\n  t: 2001-12-14\n"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	v, err := Value(docs[0].Node)
	if err != nil {
		t.Fatal(err)
	}
	m := v.(map[string]any)["m"].(map[string]any)
	if m["x"] == nil || m["1"] != "one" || m["t"] != "2001-12-14" {
		t.Fatalf("value = %#v", m)
	}
}

func FuzzSplit(f *testing.F) {
	f.Add([]byte("apiVersion: v1\nkind: Pod\n---\na: &a [1]\nb: [*a, *a]\n"))
	f.Add([]byte(billionLaughs(4, 4)))
	f.Add([]byte("a: [\n"))
	f.Add([]byte("--- |\n  text\n...\n---\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		docs, err := Split("fuzz.yaml", data, Limits{MaxNodes: 10_000})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error of type %T: %v", err, err)
			}
			return
		}
		for _, d := range docs {
			if _, err := Value(d.Node); err != nil {
				// Decoding a guarded tree may still fail (e.g. duplicate
				// keys) but must not panic or blow up.
				continue
			}
		}
	})
}

func TestSplitWithReusesOnlyTheSameParse(t *testing.T) {
	data := []byte("a: 1\n---\nb: [\n")
	p := Parse("x.yaml", data, Limits{})
	if _, err := SplitWith(p, "x.yaml", data, Limits{MaxBytes: DefaultMaxBytes}); err == nil || !strings.Contains(err.Error(), "x.yaml:3") {
		t.Fatalf("reused parse: err = %v, want the parse error at x.yaml:3", err)
	}
	good := []byte("a: 1\n---\nb: 2\n")
	p = Parse("x.yaml", good, Limits{})
	docs, err := SplitWith(p, "x.yaml", good, Limits{})
	if err != nil || len(docs) != 2 || docs[1].Node != p.docs[1].Node {
		t.Fatalf("same file, bytes and limits: want the parsed documents themselves, got %d docs, %v", len(docs), err)
	}
	for name, call := range map[string]func() ([]Document, error){
		"other name":   func() ([]Document, error) { return SplitWith(p, "y.yaml", good, Limits{}) },
		"other bytes":  func() ([]Document, error) { return SplitWith(p, "x.yaml", []byte("a: 1\n---\nb: 3\n"), Limits{}) },
		"other limits": func() ([]Document, error) { return SplitWith(p, "x.yaml", good, Limits{MaxDocuments: 1}) },
		"no parse":     func() ([]Document, error) { return SplitWith(nil, "x.yaml", good, Limits{}) },
	} {
		docs, err := call()
		if len(docs) > 0 && docs[0].Node == p.docs[0].Node {
			t.Errorf("%s: reused a parse of something else", name)
		}
		if name == "other limits" && err == nil {
			t.Errorf("other limits: the stricter limit was not applied")
		}
	}
}

// TestDeepYAMLRefused: YAML nested 80,000 levels (the size of a hostile
// answer) is refused before yaml.v3 parses it, with the bound and the
// line named, and the error matches both ErrLimit and nesting.ErrTooDeep.
func TestDeepYAMLRefused(t *testing.T) {
	const deep = 80_000
	var block strings.Builder
	for i := 0; i < 700; i++ {
		block.WriteString(strings.Repeat(" ", i) + "a:\n")
	}
	for name, c := range map[string]struct {
		in   string
		line int
	}{
		"flow sequences":    {"a: " + strings.Repeat("[", deep) + strings.Repeat("]", deep) + "\n", 1},
		"flow mappings":     {"a: " + strings.Repeat("{a: ", deep) + "b" + strings.Repeat("}", deep) + "\n", 1},
		"compact sequences": {strings.Repeat("- ", deep) + "x\n", 1},
		"block mappings":    {block.String(), nesting.DefaultMax + 1},
		"second document":   {"a: b\n---\n" + strings.Repeat("- ", deep) + "x\n", 3},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Split("deep.yaml", []byte(c.in), Limits{})
			var e *Error
			if !errors.As(err, &e) || !errors.Is(err, ErrLimit) || !errors.Is(err, nesting.ErrTooDeep) {
				t.Fatalf("err = %v, want a nesting limit error", err)
			}
			if e.Line != c.line || !strings.Contains(err.Error(), "deep.yaml:"+strconv.Itoa(c.line)+": nested deeper than 256 levels") {
				t.Errorf("err = %q, want line %d and the bound", err, c.line)
			}
		})
	}
}

// TestTreeDepthIsTheNestingBound: the parsed tree is held to the same
// bound, with the same error.
func TestTreeDepthIsTheNestingBound(t *testing.T) {
	docs, err := Split("t.yaml", []byte("a:\n  b:\n    c: [d]\n"), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	g := guardBudget{nodes: DefaultMaxNodes, aliases: DefaultMaxAliases, maxDepth: 2}
	if e := g.check(docs[0].Node, 0); e == nil || !errors.Is(e, nesting.ErrTooDeep) || !errors.Is(e, ErrLimit) {
		t.Fatalf("tree of depth 4 under a bound of 2: %v", e)
	}
}
