package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Python is a detected python3 interpreter.
type Python struct {
	Exe     string // absolute path of the interpreter
	Prefix  string // sys.base_prefix: the tree a sandbox must bind read-only
	Version string // e.g. "3.11.2"
	// Bandit is bandit's version when `python3 -m bandit` works with this
	// interpreter, else "".
	Bandit string
}

// Binds are the host paths a sandbox needs to run this interpreter.
func (p Python) Binds() []string {
	if p.Prefix == "" || p.Prefix == "/usr" || strings.HasPrefix(p.Prefix, "/usr/") {
		return nil // /usr is always bound
	}
	return []string{p.Prefix}
}

// Go is a detected Go toolchain.
type Go struct {
	Exe     string // absolute path of the go command
	Root    string // GOROOT
	Version string // e.g. "go1.26.8"
}

// Binds are the host paths a sandbox needs to run this toolchain.
func (g Go) Binds() []string {
	if strings.HasPrefix(g.Root, "/usr/") {
		return nil
	}
	return []string{g.Root}
}

// DetectPython finds python3, preferring Debian's /usr/bin/python3 (where
// python3-bandit installs bandit) over whatever PATH holds first. The error
// names the package to install.
func DetectPython(ctx context.Context) (Python, error) {
	var cands []string
	if _, err := os.Stat("/usr/bin/python3"); err == nil {
		cands = append(cands, "/usr/bin/python3")
	}
	if p, err := exec.LookPath("python3"); err == nil {
		cands = append(cands, p)
	}
	if len(cands) == 0 {
		return Python{}, fmt.Errorf("python3 not found: install Debian package python3 (apt-get install python3 python3-bandit)")
	}
	var lastErr error
	for _, c := range cands {
		qctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		out, err := exec.CommandContext(qctx, c, "-I", "-c", "import sys,platform;print(sys.executable);print(sys.base_prefix);print(platform.python_version())").Output()
		cancel()
		if err != nil {
			lastErr = fmt.Errorf("%s does not run: %w", c, err)
			continue
		}
		f := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(f) != 3 {
			lastErr = fmt.Errorf("%s: unexpected answer %q", c, out)
			continue
		}
		exe, _ := filepath.EvalSymlinks(f[0])
		if exe == "" {
			exe = f[0]
		}
		py := Python{Exe: exe, Prefix: f[1], Version: f[2]}
		bctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		bout, err := exec.CommandContext(bctx, c, "-I", "-c", "import bandit;print(bandit.__version__)").Output()
		cancel()
		if err == nil {
			py.Bandit = strings.TrimSpace(string(bout))
		}
		return py, nil
	}
	return Python{}, fmt.Errorf("python3 not usable (%v): install Debian package python3 (apt-get install python3 python3-bandit)", lastErr)
}

// DetectGo finds the go command (PATH, then GOROOT, then /usr/local/go).
func DetectGo(ctx context.Context) (Go, error) {
	var cands []string
	if p, err := exec.LookPath("go"); err == nil {
		cands = append(cands, p)
	}
	if r := os.Getenv("GOROOT"); r != "" {
		cands = append(cands, filepath.Join(r, "bin", "go"))
	}
	cands = append(cands, "/usr/local/go/bin/go", "/usr/lib/go/bin/go")
	for _, c := range cands {
		if _, err := os.Stat(c); err != nil {
			continue
		}
		qctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		out, err := exec.CommandContext(qctx, c, "env", "GOROOT", "GOVERSION").Output()
		cancel()
		if err != nil {
			continue
		}
		f := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(f) != 2 {
			continue
		}
		exe, _ := filepath.EvalSymlinks(c)
		if exe == "" {
			exe = c
		}
		root, _ := filepath.EvalSymlinks(f[0])
		if root == "" {
			root = f[0]
		}
		return Go{Exe: exe, Root: root, Version: f[1]}, nil
	}
	return Go{}, fmt.Errorf("go toolchain not found: install Go ≥ 1.22 from https://go.dev/dl (tar -C /usr/local -xzf go1.*.linux-amd64.tar.gz) and put /usr/local/go/bin on PATH, or apt-get install golang-go")
}
