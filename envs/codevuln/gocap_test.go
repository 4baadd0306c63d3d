package codevuln

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

func TestGoCapabilityViolations(t *testing.T) {
	const trust = "example.com/task/svbenchtrust"
	for _, c := range []struct {
		name, src string
		want      string // substring of the single violation, "" for none
	}{
		{"plain", "package p\nimport (\"fmt\"; \"os\")\nfunc F() { fmt.Println(os.Getenv(\"X\")) }", ""},
		{"exec allowed", "package p\nimport \"os/exec\"\nfunc F() { exec.Command(\"ls\").Run() }", ""},
		{"unsafe", "package p\nimport \"unsafe\"\nvar _ = unsafe.Sizeof(0)", `"unsafe"`},
		{"renamed syscall", "package p\nimport s \"syscall\"\nfunc F() { s.Exit(0) }", `"syscall"`},
		{"reflect", "package p\nimport \"reflect\"\nvar _ = reflect.TypeOf(0)", `"reflect"`},
		{"flag", "package p\nimport \"flag\"\nfunc init() { flag.Set(\"test.run\", \"x\") }", `"flag"`},
		{"testing", "package p\nimport \"testing\"\nvar _ = testing.Short", `"testing"`},
		{"x/sys", "package p\nimport \"golang.org/x/sys/unix\"\nvar _ = unix.Exit", `"golang.org/x/sys/unix"`},
		{"trust pkg", "package p\nimport \"example.com/task/svbenchtrust\"\nvar _ = svbenchtrust.Test", "trusted package"},
		{"dot import", "package p\nimport . \"os\"\nfunc F() { Exit(0) }", "dot import"},
		{"os.Exit", "package p\nimport \"os\"\nfunc F() { os.Exit(0) }", "os.Exit"},
		{"aliased os.Exit", "package p\nimport o \"os\"\nvar q = o.Exit\nfunc F() { q(0) }", "os.Exit"},
		{"os.Args", "package p\nimport \"os\"\nfunc init() { os.Args = nil }", "os.Args"},
		{"os.NewFile", "package p\nimport \"os\"\nvar f = os.NewFile(3, \"x\")", "os.NewFile"},
		{"linkname", "package p\n//go:linkname x runtime.x\nvar x int", "//go:linkname"},
		{"go:embed", "package p\n//go:embed secret\nvar s string", "//go:embed"},
		{"build tag allowed", "//go:build linux\n\npackage p\nfunc F() {}", ""},
		{"cgo", "package p\nimport \"C\"\nvar _ = C.int(0)", "cgo"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := goCapabilityViolations(Files{"p.go": []byte(c.src)}, trust)
			if c.want == "" {
				if len(got) != 0 {
					t.Errorf("violations %q, want none", got)
				}
				return
			}
			if len(got) != 1 || !strings.Contains(got[0], c.want) || !strings.HasPrefix(got[0], "p.go:") {
				t.Errorf("violations %q, want one naming %q with file and line", got, c.want)
			}
		})
	}
	if got := goCapabilityViolations(Files{"x.s": []byte("TEXT ·f(SB),0,$0")}, trust); len(got) != 1 {
		t.Errorf("assembly file: %q", got)
	}
}

// FuzzGoCapabilityViolations: any source is checked without a panic, and a
// file importing syscall under any name is always refused.
func FuzzGoCapabilityViolations(f *testing.F) {
	f.Add("package p\nimport \"os\"\nfunc F() { os.Exit(0) }")
	f.Add("package p\nimport (\n\tx \"fmt\"\n)\n//go:linkname a b\n")
	f.Add("package p\nimport . \"os\"\n")
	f.Fuzz(func(t *testing.T, src string) {
		_ = goCapabilityViolations(Files{"a.go": []byte(src)}, "example.com/task/svbenchtrust")
		withSyscall := "package p\nimport z \"syscall\"\n" + strings.ReplaceAll(src, "package", "//")
		if got := goCapabilityViolations(Files{"b.go": []byte(withSyscall)}, "t"); len(got) == 0 {
			if _, err := goPackageNameFromSource(withSyscall); err == nil {
				t.Fatalf("syscall import not refused in %q", withSyscall)
			}
		}
	})
}

// goPackageNameFromSource parses a file's package clause: it tells a source
// the parser rejects (the compiler reports it) from one the check missed.
func goPackageNameFromSource(src string) (string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.ImportsOnly)
	if err != nil {
		return "", err
	}
	return f.Name.Name, nil
}
