package taskset

import (
	"strings"
	"testing"
)

func TestCFuncs(t *testing.T) {
	src := `#include <stdio.h>
#define BRACE {
/* int fake(int x) { */
static const char *table[] = {"}", "{"};
struct point { int x, y; };
namespace ns {
// a comment { with a brace
std::string greet(const std::string& name,
                  int  times) const {
    std::string s = "}{";
    char c = '}';
    for (int i = 0; i < times; i++) { s += name; }
    return s;
}
}
extern "C" int main(int argc, char *argv[]) { return greet("a", 1).size(); }
`
	got := CFuncs([]byte(src))
	if len(got) != 2 {
		t.Fatalf("found %+v, want greet and main", got)
	}
	g := got[0]
	if g.Name != "greet" || g.Ret != "std::string" || g.Params != "const std::string& name, int times" {
		t.Errorf("greet read as %+v", g)
	}
	if src[g.Open] != '{' || src[g.Close] != '}' || !strings.HasSuffix(src[:g.Close+1], "return s;\n}") {
		t.Errorf("greet's body spans %q", src[g.Open:g.Close+1])
	}
	if g.API() != "greet(const std::string& name, int times)" {
		t.Errorf("API %q", g.API())
	}
	// Ret is read from the masked source: a literal's contents are blanks.
	if got[1].Name != "main" || got[1].Ret != `extern " " int` {
		t.Errorf("main read as %+v", got[1])
	}
	if _, ok := CFunc([]byte(src), "fake"); ok {
		t.Error("a definition inside a comment was read")
	}
}

func TestCNorm(t *testing.T) {
	for _, c := range [][2]string{
		{"const char *a, int b", "const char* a ,int  b"},
		{"std::map<std::string, int> &m", "std::map<std::string,int>&m"},
		{"char **argv", "char * * argv"},
	} {
		if CNorm(c[0]) != CNorm(c[1]) {
			t.Errorf("%q and %q normalise to %q and %q", c[0], c[1], CNorm(c[0]), CNorm(c[1]))
		}
	}
	if CNorm("int a") == CNorm("int b") || CNorm("char *a") == CNorm("char a") {
		t.Error("different declarations normalise alike")
	}
}

func TestCStripComments(t *testing.T) {
	a := CStripComments([]byte("int x = 1; // NOLINT\n/* note */ char *s = \"// not a comment\";\n"))
	if strings.Contains(string(a), "NOLINT") || strings.Contains(string(a), "note") || !strings.Contains(string(a), `"// not a comment"`) {
		t.Errorf("stripped to %q", a)
	}
}

// FuzzCFuncs: CFuncs reads model output (the API check, the probes); on
// any input it returns bodies whose braces are where it says.
func FuzzCFuncs(f *testing.F) {
	for _, s := range []string{
		"int f(int a) { return a; }",
		"char *g(const char *s) {\n /* } */ return \"{\"; }\n",
		"#define X(a) {\nint h() { if (1) { } }",
		"namespace n { void k() {} }",
		"int z() { '\\'' ; \"\\\"\" }",
		"}}}{{{(((",
		"int (*fp)(int) = 0; int q(void) const noexcept {}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, src []byte) {
		if len(CMask(src)) != len(src) || len(CStripComments(src)) != len(src) {
			t.Fatal("masking changed the length")
		}
		prev := -1
		for _, d := range CFuncs(src) {
			if d.Open <= prev || d.Open >= d.Close || d.Close >= len(src) || src[d.Open] != '{' || src[d.Close] != '}' {
				t.Fatalf("definition %+v out of place in %q", d, src)
			}
			if d.Name == "" || d.Sig > d.Open {
				t.Fatalf("definition %+v", d)
			}
			prev = d.Close
		}
	})
}
