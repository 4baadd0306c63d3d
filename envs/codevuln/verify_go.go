package codevuln

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/svbench/svbench/envs/codevuln/taskset"
	"github.com/svbench/svbench/verify/sandbox"
)

// goTestNames lists the top-level Test functions of Go test files.
func goTestNames(tests map[string][]byte) ([]string, error) {
	var names []string
	fset := token.NewFileSet()
	for name, b := range tests {
		if !strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, b, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if ok && fd.Recv == nil && strings.HasPrefix(fd.Name.Name, "Test") && fd.Name.Name != "TestMain" {
				names = append(names, fd.Name.Name)
			}
		}
	}
	slices.Sort(names)
	return names, nil
}

// goEnv is the environment of both Go stages: no network, no proxy, no
// toolchain switching, no cgo (the compiler then never runs a C compiler),
// modules resolved from the standard library only.
func (v *Verifier) goEnv() []string {
	return []string{
		"PATH=" + filepath.Join(v.gotc.Root, "bin") + ":/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8",
		"GOROOT=" + v.gotc.Root, "GOCACHE=" + v.cache, "GOPATH=/tmp/gopath", "GOMODCACHE=/tmp/gopath/pkg/mod",
		"GOFLAGS=-mod=mod", "GOPROXY=off", "GOSUMDB=off", "GOTOOLCHAIN=local", "CGO_ENABLED=0", "GOTELEMETRY=off",
		"GOWORK=off", "GOENV=off",
	}
}

// goRunner holds svbench's trusted files added to a Go task's test build.
//
//go:embed gorunner/trust.go.txt gorunner/main_test.go.txt
var goRunner embed.FS

var goModuleRe = regexp.MustCompile(`(?m)^module\s+(\S+)`)

// runGo compiles a suite with svbench's trusted package and TestMain, then
// runs every test function in a fresh process of its own. A test passes only
// when its process exits 0 and wrote, on a descriptor the code under test
// cannot reach, the test's name and code authenticated with a key it read
// before that code's first instruction (see gorunner/trust.go.txt). The run
// has no /proc and no test sources; the binary is execute-only.
func (v *Verifier) runGo(ctx context.Context, tests map[string][]byte, files Files) TestRun {
	if v.gotc == nil {
		return TestRun{Output: v.goErr.Error()}
	}
	names, err := goTestNames(tests)
	if err != nil || len(names) == 0 {
		return TestRun{Output: fmt.Sprintf("task tests unreadable or empty: %v", err)}
	}
	goMod := []byte(taskset.GoMod)
	if b, ok := files["go.mod"]; ok {
		goMod = b
	}
	m := goModuleRe.FindSubmatch(goMod)
	if m == nil {
		return TestRun{Total: len(names), Stage: "compile", Output: "go.mod names no module"}
	}
	trustPkg := string(m[1]) + "/svbenchtrust"
	if bad := goCapabilityViolations(files, trustPkg); len(bad) > 0 && !v.allowAnyCapability {
		return TestRun{Total: len(names), Stage: "policy", Output: "refused before compiling: the code under test uses capabilities that could decide its own verdict:\n" + strings.Join(bad, "\n")}
	}
	pkg, err := goPackageName(tests)
	if err != nil {
		return TestRun{Total: len(names), Output: err.Error()}
	}
	trustSrc, _ := goRunner.ReadFile("gorunner/trust.go.txt")
	mainSrc, _ := goRunner.ReadFile("gorunner/main_test.go.txt")
	mainSrc = bytes.Replace(bytes.Replace(mainSrc, []byte("package PKG"), []byte("package "+pkg), 1), []byte("MODULE/svbenchtrust"), []byte(trustPkg), 1)

	dir, cleanup, err := v.sb.NewScratch()
	if err != nil {
		return TestRun{Output: err.Error()}
	}
	defer cleanup()
	// The module lives one level down: go refuses a go.mod at TMPDIR's root.
	mod := filepath.Join(dir, "mod")
	for _, tree := range []map[string][]byte{files, tests, {
		"go.mod": goMod, "svbenchtrust/trust.go": trustSrc, "zz_svbench_main_test.go": mainSrc,
	}} {
		if err := writeTree(mod, tree); err != nil {
			return TestRun{Output: err.Error()}
		}
	}
	v.waitWarm(ctx)
	// Stage 1: compile with the shared cache. The compiler does not run the
	// code it compiles (cgo is off, go:generate is not run by go test), so
	// this stage is trusted with a writable cache. The package is built
	// alone first: code that names an identifier of the test files (to
	// empty a table of test cases, say) fails there. The test binary is
	// linked without symbol table and DWARF (-s -w), which a verdict never
	// reads: linking is most of a compile stage, and this makes it a third
	// shorter.
	lim := v.limits
	lim.Wall, lim.CPU, lim.AddressSpace, lim.Memory, lim.Procs, lim.FileSize = 180*time.Second, 180*time.Second, 4<<30, 4<<30, 512, 512<<20
	lim.Tmpfs = goTmpfs
	goExe := filepath.Join(v.gotc.Root, "bin", "go")
	res, err := v.sb.Run(ctx, sandbox.Spec{
		Argv:          []string{"/bin/sh", "-c", `cd mod && "$1" build -o /dev/null . && "$1" test -c -vet=off '-ldflags=-s -w' -o ../t.bin .`, "sh", goExe},
		Dir:           dir,
		Env:           v.goEnv(),
		Limits:        lim,
		ReadOnlyBinds: v.gotc.Binds(),
		WritableBinds: []string{v.cache},
	})
	if err != nil {
		return TestRun{Total: len(names), Stage: "compile", Output: err.Error()}
	}
	if !res.OK() {
		return TestRun{Total: len(names), Stage: "compile", Killed: res.Killed, Output: string(res.Stdout) + string(res.Stderr)}
	}
	bin, err := os.ReadFile(filepath.Join(dir, "t.bin"))
	if err != nil {
		return TestRun{Total: len(names), Stage: "compile", Output: err.Error()}
	}
	binDir, binCleanup, err := v.sb.NewScratch()
	if err != nil {
		return TestRun{Output: err.Error()}
	}
	defer binCleanup()
	if err := os.WriteFile(filepath.Join(binDir, "t.bin"), bin, 0o111); err != nil {
		return TestRun{Output: err.Error()}
	}
	if err := os.Chmod(binDir, 0o711); err != nil {
		return TestRun{Output: err.Error()}
	}
	// Stage 2: each test in its own process, in a scratch directory of its
	// own holding the candidate's sources and what the test writes.
	r := TestRun{Total: len(names), OK: true}
	var out strings.Builder
	for _, name := range names {
		pass, text, killed := v.runGoTest(ctx, binDir, name, files)
		if pass {
			r.Passed++
		} else {
			r.OK = false
		}
		if killed != "" {
			r.Killed = killed
		}
		if ctx.Err() != nil {
			r.OK = false
			break
		}
		out.WriteString(text)
	}
	r.Output = out.String()
	return r
}

// runGoTest runs one test function and reads its authenticated verdict.
func (v *Verifier) runGoTest(ctx context.Context, binDir, name string, files Files) (pass bool, output, killed string) {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	rd, wr, err := os.Pipe()
	if err != nil {
		return false, err.Error() + "\n", ""
	}
	defer rd.Close()
	scratch, cleanup, err := v.sb.NewScratch()
	if err != nil {
		wr.Close()
		return false, err.Error() + "\n", ""
	}
	defer cleanup()
	// The working directory is the package's, as under go test: a test may
	// read the package's sources (never the tests' own, which stay behind
	// in the compile stage's directory).
	if err := writeTree(scratch, files); err != nil {
		wr.Close()
		return false, err.Error() + "\n", ""
	}
	const binMount = "/svbench-test"
	res, err := v.sb.Run(ctx, sandbox.Spec{
		Argv:       []string{binMount + "/t.bin", "-test.count=1", "-test.timeout=" + (v.limits.Wall + time.Second).String()},
		Dir:        scratch,
		Env:        []string{"PATH=/usr/bin:/bin", "HOME=/tmp", "TMPDIR=/tmp", "LANG=C.UTF-8", "GOTRACEBACK=single"},
		Stdin:      []byte(hex.EncodeToString(key) + " " + name + "\n"),
		Limits:     v.limits,
		Mounts:     []sandbox.Mount{{Source: binDir, Target: binMount}},
		ExtraFiles: []*os.File{wr},
		NoProc:     true,
	})
	wr.Close()
	got, _ := io.ReadAll(io.LimitReader(rd, 4096))
	if err != nil {
		return false, fmt.Sprintf("=== %s: %v\n", name, err), ""
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s 0", name)
	want := fmt.Sprintf("%s 0 %s\n", name, hex.EncodeToString(mac.Sum(nil)))
	pass = res.OK() && hmac.Equal(got, []byte(want))
	verdict := "PASS"
	if !pass {
		verdict = fmt.Sprintf("FAIL (exit %d", res.ExitCode)
		if res.Killed != "" {
			verdict += ", killed: " + res.Killed
		}
		verdict += ")"
	}
	return pass, fmt.Sprintf("=== %s: %s\n%s%s", name, verdict, res.Stdout, res.Stderr), res.Killed
}

// goPackageName is the package clause of the suite's test files.
func goPackageName(tests map[string][]byte) (string, error) {
	fset := token.NewFileSet()
	for name, b := range tests {
		if !strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, b, parser.PackageClauseOnly)
		if err != nil {
			return "", err
		}
		return strings.TrimSuffix(f.Name.Name, "_test"), nil
	}
	return "", fmt.Errorf("suite has no _test.go file")
}

// WarmGo names the Go sources (tasks and their tests) whose standard
// library imports the first Go verification compiles into the build cache,
// once, before any task's own compile: tasks verified concurrently then do
// not each compile net/http and friends from a cold cache at the same time.
// Nothing runs until a Go task is verified.
func (v *Verifier) WarmGo(sources [][]byte) {
	v.warmSources = sources
}

func (v *Verifier) startWarm(ctx context.Context) {
	if v.gotc == nil || v.warmSources == nil {
		return
	}
	sources := v.warmSources
	set := map[string]bool{"testing": true, "flag": true, "regexp": true, "crypto/hmac": true, "crypto/sha256": true,
		"encoding/hex": true, "bufio": true, "syscall": true, "os": true, "fmt": true}
	fset := token.NewFileSet()
	for _, src := range sources {
		f, err := parser.ParseFile(fset, "", src, parser.ImportsOnly)
		if err != nil {
			continue
		}
		for _, imp := range f.Imports {
			if p, err := strconv.Unquote(imp.Path.Value); err == nil && !strings.Contains(strings.SplitN(p, "/", 2)[0], ".") {
				set[p] = true
			}
		}
	}
	pkgs := slices.Sorted(maps.Keys(set))
	go func() {
		defer close(v.warm)
		dir, cleanup, err := v.sb.NewScratch()
		if err != nil {
			return
		}
		defer cleanup()
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(taskset.GoMod), 0o644); err != nil {
			return
		}
		lim := v.limits
		lim.Wall, lim.CPU, lim.AddressSpace, lim.Memory, lim.Procs, lim.FileSize = 600*time.Second, 600*time.Second, 4<<30, 4<<30, 512, 512<<20
		lim.Tmpfs = goTmpfs
		argv := append([]string{filepath.Join(v.gotc.Root, "bin", "go"), "build", "-o", "/dev/null"}, pkgs...)
		_, _ = v.sb.Run(ctx, sandbox.Spec{Argv: argv, Dir: dir, Env: v.goEnv(), Limits: lim,
			ReadOnlyBinds: v.gotc.Binds(), WritableBinds: []string{v.cache}})
	}()
}

// waitWarm starts the warm-up compile on first use and blocks until it is
// done (or ctx ends).
func (v *Verifier) waitWarm(ctx context.Context) {
	v.warmOnce.Do(func() {
		v.warm = make(chan struct{})
		// The warm-up serves every later verification, so the first
		// caller's cancellation must not cut it short; its own limits
		// bound it.
		v.startWarm(context.WithoutCancel(ctx))
		if v.gotc == nil || v.warmSources == nil {
			close(v.warm)
		}
	})
	select {
	case <-v.warm:
	case <-ctx.Done():
	}
}
