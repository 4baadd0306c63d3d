package server

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestPythonClientInstall runs the README's install command for the Python
// client, `make client`, into a venv in a temporary directory, the way a user
// on Debian runs it: --no-index, so it must not need the network, and with
// Debian's /usr/bin/python3 (the default), which refuses a bare pip install.
// Then that venv's python imports the client's modules from the venv, and
// clients/python holds exactly the files it held before (no build/, no
// svbench.egg-info/).
func TestPythonClientInstall(t *testing.T) {
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		if _, err := exec.LookPath("python3"); err != nil {
			t.Skip("python3 not found: installing the Python client needs it")
		}
	}
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Fatal("make not found: `make client` is the documented install (scripts/deps.sh test installs make)")
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(root, "clients", "python")
	before := listTree(t, src)

	// Run as from a shell: not as a sub-make of `make test` (its MAKEFLAGS
	// and jobserver), and with the defaults, not a caller's PYTHON or VENV.
	var env []string
	for _, kv := range os.Environ() {
		switch strings.SplitN(kv, "=", 2)[0] {
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "PYTHON", "VENV", "VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME":
			continue
		}
		env = append(env, kv)
	}
	tmp := t.TempDir()
	venv := filepath.Join(tmp, "venv")
	ctx, cancel := context.WithTimeout(t.Context(), 4*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, mk, "-s", "client", "VENV="+venv)
	cmd.Dir = root
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make client VENV=%s failed: %v\n%s", venv, err, out)
	}
	t.Logf("make client:\n%s", out)

	// Imported from outside the checkout, so only the venv can supply them.
	cmd = exec.CommandContext(ctx, filepath.Join(venv, "bin", "python"), "-B", "-c",
		"import svbench, svbench_client, svbench_verifiers\n"+
			"for m in (svbench, svbench_client, svbench_verifiers): print(m.__file__)\n"+
			"print(svbench.trl_reward_funcs)")
	cmd.Dir = tmp
	cmd.Env = env
	out, err = cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the venv's python cannot import the client: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 4 {
		t.Fatalf("unexpected output from the venv's python:\n%s", out)
	}
	for _, f := range lines[:3] {
		if !strings.HasPrefix(f, venv+string(filepath.Separator)) {
			t.Errorf("imported %s, not from the venv %s", f, venv)
		}
	}

	after := listTree(t, src)
	var added []string
	for _, p := range after {
		if _, found := slices.BinarySearch(before, p); found {
			continue
		}
		if n := len(added); n > 0 && strings.HasPrefix(p, added[n-1]+string(filepath.Separator)) {
			continue // under a directory already reported
		}
		added = append(added, p)
	}
	if len(added) > 0 {
		t.Errorf("make client wrote into the checkout's clients/python: %v", added)
	}
}

// listTree returns every path under dir, relative and sorted.
func listTree(t *testing.T, dir string) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		paths = append(paths, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(paths)
	return paths
}
