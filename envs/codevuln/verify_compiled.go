package codevuln

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/svbench/svbench/envs/codevuln/taskset"
	"github.com/svbench/svbench/verify/sandbox"
)

// Tasks run as a program (C, C++, and Go imported with a pytest suite, from
// benchmarks such as CWEval): the candidate is compiled in a sandbox of its own, then the task's pytest
// module runs in the trusted runner and calls the binary, which runs in the
// same nested sandbox as a Python candidate (no view of the tests, the
// runner or its verdict descriptor). The compiler does not run the code it
// compiles, but it reads what the code names (#include "/any/file"), so it
// too runs sandboxed, seeing only the candidate's sources and /usr.

// compilers by language, as Debian installs them.
var compilers = map[string]string{taskset.C: "/usr/bin/gcc", taskset.Cpp: "/usr/bin/g++"}

// compilerPackages name the Debian package of each compiler.
var compilerPackages = map[string]string{taskset.C: "gcc", taskset.Cpp: "g++"}

// cLibraries link what a source includes: the benchmark links every task
// with the same list, svbench only with what a candidate uses, so a task
// needing nothing beyond libc builds where no library is installed.
var cLibraries = []struct {
	header string // an include path, or its prefix when it ends in "/"
	flags  []string
	debian string
}{
	{"sqlite3.h", []string{"-lsqlite3"}, "libsqlite3-dev"},
	{"jwt.h", []string{"-ljwt"}, "libjwt-dev"},
	{"openssl/", []string{"-lssl", "-lcrypto"}, "libssl-dev"},
	{"archive.h", []string{"-larchive"}, "libarchive-dev"},
	{"archive_entry.h", []string{"-larchive"}, "libarchive-dev"},
	{"libxml/", []string{"-I/usr/include/libxml2", "-lxml2"}, "libxml2-dev"},
}

var (
	cIncludeRe      = regexp.MustCompile(`(?m)^[ \t]*#[ \t]*include[ \t]*[<"]([^>"\n]+)[>"]`)
	missingHeaderRe = regexp.MustCompile(`fatal error: ([^:\s]+): No such file or directory`)
	programNameRe   = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]*$`)
	goMainRe        = regexp.MustCompile(`(?m)^func\s+main\s*\(\s*\)`)
	// go build without a module proxy: "no required module provides
	// package github.com/x/y" or "cannot find module providing package".
	goMissingModuleRe = regexp.MustCompile(`(?:no required module provides|cannot find module providing) package ([^\s;:]+)`)
)

// compileFlags returns the flags linking the libraries src includes.
func compileFlags(src []byte) []string {
	var flags []string
	for _, m := range cIncludeRe.FindAllSubmatch(src, -1) {
		inc := string(m[1])
		for _, l := range cLibraries {
			if inc == l.header || strings.HasSuffix(l.header, "/") && strings.HasPrefix(inc, l.header) {
				for _, f := range l.flags {
					if !slices.Contains(flags, f) {
						flags = append(flags, f)
					}
				}
			}
		}
	}
	return flags
}

// compileHint names the Debian package whose absence a compiler's output
// shows (a missing header), or "".
func compileHint(output string) string {
	m := missingHeaderRe.FindStringSubmatch(output)
	if m == nil {
		return ""
	}
	for _, l := range cLibraries {
		if m[1] == l.header || strings.HasSuffix(l.header, "/") && strings.HasPrefix(m[1], l.header) {
			return fmt.Sprintf("%s is not installed here: Debian package %s", m[1], l.debian)
		}
	}
	return ""
}

// maxBinary bounds a compiled candidate: what is linked is read into memory
// and copied into every test run.
const maxBinary = 64 << 20

// built is a compile stage's result, memoised per language and sources: the
// task's two suites run the same binaries.
type built struct {
	bins    map[string][]byte
	output  string
	killed  string
	problem string
}

// compile builds every C or C++ file of a candidate into a binary named
// after the file's stem (CWEval's tests run compiled/<stem>).
func (v *Verifier) compile(ctx context.Context, lang string, files Files) built {
	key := "compile\x00" + lang + "\x00" + files.Hash()
	return v.memoize(ctx, key, func() any { return v.compileNow(ctx, lang, files) }).(built)
}

func (v *Verifier) compileNow(ctx context.Context, lang string, files Files) built {
	if lang == taskset.Go {
		return v.buildGo(ctx, files)
	}
	cc := compilers[lang]
	if _, err := os.Stat(cc); err != nil {
		return built{problem: fmt.Sprintf("no %s compiler at %s: apt-get install %s", lang, cc, compilerPackages[lang])}
	}
	ext := map[string]string{taskset.C: ".c", taskset.Cpp: ".cpp"}[lang]
	var srcs []string
	for name := range files {
		if path.Ext(name) == ext && !strings.Contains(name, "/") {
			srcs = append(srcs, name)
		}
	}
	slices.Sort(srcs)
	if len(srcs) == 0 {
		return built{problem: "no " + ext + " file to compile"}
	}
	dir, cleanup, err := v.sb.NewScratch()
	if err != nil {
		return built{problem: err.Error()}
	}
	defer cleanup()
	if err := writeTree(filepath.Join(dir, "src"), files); err != nil {
		return built{problem: err.Error()}
	}
	for _, d := range []string{"bin", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return built{problem: err.Error()}
		}
	}
	// One compiler process per program; CWEval's programs are one file
	// each. The shell only sequences them: the file names are the task's,
	// checked to be plain stems, and passed as arguments.
	script := `set -e; while [ $# -gt 0 ]; do n=$1; shift; c=$1; shift; "$0" -o "bin/$n" "src/$c" $1; shift; done`
	argv := []string{"/bin/sh", "-c", script, cc}
	stems := map[string]bool{}
	for _, s := range srcs {
		stem := strings.TrimSuffix(s, ext)
		if !programNameRe.MatchString(stem) || stems[stem] {
			return built{problem: fmt.Sprintf("source file name %q cannot name a program", s)}
		}
		stems[stem] = true
		argv = append(argv, stem, s, strings.Join(compileFlags(files[s]), " "))
	}
	lim := v.limits
	lim.Wall, lim.CPU, lim.AddressSpace, lim.Memory, lim.Procs, lim.FileSize = 120*time.Second, 120*time.Second, 4<<30, 2<<30, 64, maxBinary
	tmp := path.Join(sandbox.ScratchMount, "tmp")
	res, err := v.sb.Run(ctx, sandbox.Spec{
		Argv:   argv,
		Dir:    dir,
		Env:    []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=" + tmp, "TMPDIR=" + tmp},
		Limits: lim,
	})
	if err != nil {
		return built{problem: err.Error()}
	}
	out := string(res.Stdout) + string(res.Stderr)
	if !res.OK() {
		p := "the code does not compile"
		if h := compileHint(out); h != "" {
			p += " (" + h + ")"
		}
		return built{output: out, killed: res.Killed, problem: p}
	}
	b := built{bins: map[string][]byte{}, output: out}
	for stem := range stems {
		bin, err := os.ReadFile(filepath.Join(dir, "bin", stem))
		if err != nil {
			return built{output: out, problem: err.Error()}
		}
		b.bins[stem] = bin
	}
	return b
}

// buildGo builds a Go task's package main into one program named after the
// file declaring main, in the Go tasks' compile sandbox (no network, no
// module proxy: an import outside the standard library does not build).
func (v *Verifier) buildGo(ctx context.Context, files Files) built {
	if v.gotc == nil {
		return built{problem: v.goErr.Error()}
	}
	var mains []string
	for name, b := range files {
		if path.Ext(name) == ".go" && !strings.HasSuffix(name, "_test.go") && !strings.Contains(name, "/") && goMainRe.Match(b) {
			mains = append(mains, name)
		}
	}
	if len(mains) != 1 {
		return built{problem: fmt.Sprintf("want one file declaring func main, found %d", len(mains))}
	}
	stem := strings.TrimSuffix(mains[0], ".go")
	if !programNameRe.MatchString(stem) {
		return built{problem: fmt.Sprintf("source file name %q cannot name a program", mains[0])}
	}
	dir, cleanup, err := v.sb.NewScratch()
	if err != nil {
		return built{problem: err.Error()}
	}
	defer cleanup()
	tree := maps.Clone(files)
	if tree["go.mod"] == nil {
		tree["go.mod"] = []byte(taskset.GoMod)
	}
	if err := writeTree(filepath.Join(dir, "src"), tree); err != nil {
		return built{problem: err.Error()}
	}
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		return built{problem: err.Error()}
	}
	v.waitWarm(ctx)
	lim := v.limits
	lim.Wall, lim.CPU, lim.AddressSpace, lim.Memory, lim.Procs, lim.FileSize = 180*time.Second, 180*time.Second, 4<<30, 4<<30, 512, maxBinary
	lim.Tmpfs = goTmpfs
	res, err := v.sb.Run(ctx, sandbox.Spec{
		Argv:          []string{"/bin/sh", "-c", `cd src && "$0" build -trimpath -o "../bin/$1" .`, filepath.Join(v.gotc.Root, "bin", "go"), stem},
		Dir:           dir,
		Env:           v.goEnv(),
		Limits:        lim,
		ReadOnlyBinds: v.gotc.Binds(),
		WritableBinds: []string{v.cache},
	})
	if err != nil {
		return built{problem: err.Error()}
	}
	out := string(res.Stdout) + string(res.Stderr)
	if !res.OK() {
		p := "the code does not compile"
		if m := goMissingModuleRe.FindStringSubmatch(out); m != nil {
			p += fmt.Sprintf(" (it imports %s, outside the standard library: E3 builds Go offline)", m[1])
		}
		return built{output: out, killed: res.Killed, problem: p}
	}
	bin, err := os.ReadFile(filepath.Join(dir, "bin", stem))
	if err != nil {
		return built{output: out, problem: err.Error()}
	}
	return built{bins: map[string][]byte{stem: bin}, output: out}
}

// program is a candidate the tests run as a program: compiled binaries by
// name, or (node) the JavaScript sources as node scripts.
type program struct {
	bins map[string][]byte
	node bool
}

// programLayout is what running a program adds to the trusted runner's
// directories.
type programLayout struct {
	// sources go beside the test module: a benchmark's test may read them
	// (CWEval's CWE-377 test looks for mktemp in <task>_task.c) or name
	// them (its JavaScript tests run node on <task>_task.js there). Only
	// C, C++, Go and JavaScript files, which nothing on the trusted side
	// imports.
	sources map[string][]byte
	// cand is the candidate directory's files: a program has no Python
	// modules; the sandbox gets the binaries (execs), or the scripts.
	cand map[string][]byte
	// execs are executables by path under the run's directory: binaries
	// and their launchers.
	execs map[string][]byte
	path  string // the runner's PATH entry
}

func (v *Verifier) layoutProgram(prog *program, files Files, cand, work string) programLayout {
	lay := programLayout{execs: map[string][]byte{}, path: "PATH=/usr/bin:/bin"}
	if prog == nil {
		return lay
	}
	lay.sources = map[string][]byte{}
	for name, b := range files {
		if ext := path.Ext(name); (ext == ".c" || ext == ".cpp" || ext == ".go" || ext == ".js") && !strings.Contains(name, "/") {
			lay.sources[name] = b
		}
	}
	for name, b := range prog.bins {
		lay.execs["cand/"+name] = b
		lay.execs["trusted/compiled/"+name] = launcher(v.py.Exe, path.Join(cand, name), cand, work, v.limits.Wall.Seconds(), nil)
	}
	if prog.node {
		// node <dir of the test module>/<name>.js runs the candidate's
		// copy of that script in the sandbox.
		lay.cand = lay.sources
		rewrite := map[string]string{}
		for name := range lay.sources {
			rewrite[path.Join(sandbox.ScratchMount, "trusted", name)] = path.Join(cand, name)
		}
		lay.execs["trusted/bin/node"] = launcher(v.py.Exe, nodeExe, cand, work, v.limits.Wall.Seconds(), rewrite)
		lay.path = "PATH=" + path.Join(sandbox.ScratchMount, "trusted", "bin") + ":/usr/bin:/bin"
	}
	return lay
}

// nodeExe is Debian's Node.js, which also finds the node-* packages'
// modules under /usr/share/nodejs.
const nodeExe = "/usr/bin/node"

// runCompiled builds the candidate (a JavaScript candidate needs no build)
// and runs the task's pytest suite against the program.
func (v *Verifier) runCompiled(ctx context.Context, lang string, tests map[string][]byte, files Files, sel *taskset.PytestSuite) TestRun {
	if v.py == nil {
		return TestRun{Output: v.pyErr.Error()}
	}
	if lang == taskset.JavaScript {
		if _, err := os.Stat(nodeExe); err != nil {
			return TestRun{Total: sel.Tests, Output: "no Node.js at " + nodeExe + ": apt-get install nodejs"}
		}
		return v.runPython(ctx, tests, files, sel, &program{node: true})
	}
	b := v.compile(ctx, lang, files)
	if b.problem != "" {
		return TestRun{Total: sel.Tests, Stage: "compile", Killed: b.killed, Output: b.problem + "\n" + b.output}
	}
	return v.runPython(ctx, tests, files, sel, &program{bins: b.bins})
}

// launcher is the script a test module runs as compiled/<name> (or as
// node): it starts the program in the candidate's nested sandbox
// (svbench_runner.launch), its arguments found in rewrite replaced. Each
// call may take a quarter of the run's time, so one that hangs leaves the
// others theirs.
func launcher(python, program, cand, work string, wall float64, rewrite map[string]string) []byte {
	trusted := path.Join(sandbox.ScratchMount, "trusted")
	rw, _ := json.Marshal(rewrite)
	return fmt.Appendf(nil, "#!%s -I\nimport json, sys\nsys.dont_write_bytecode = True\nsys.path.insert(0, %q)\nimport svbench_runner\nsvbench_runner.launch(%q, %q, %q, %g, json.loads(%q))\n",
		python, trusted, program, cand, work, wall/4, rw)
}

// writeExecutables writes files (paths relative to dir) executable.
func writeExecutables(dir string, files map[string][]byte) error {
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o755); err != nil {
			return err
		}
	}
	return nil
}
