package cli

import (
	"os"
	"os/exec"
	"path/filepath"
)

// invokedAs is how to call this binary again in a line printed for the
// user: "svbench" when the svbench on PATH is this very binary, else the
// path it was started by (`make demo` runs bin/svbench, which is not on
// PATH until `make install`), so a suggested command works as pasted.
func invokedAs() string {
	self, err := os.Executable()
	if err != nil || filepath.Base(os.Args[0]) != "svbench" {
		return "svbench" // in-process (tests) or renamed: the documented name
	}
	if onPath, err := exec.LookPath("svbench"); err == nil && sameFile(onPath, self) {
		return "svbench"
	}
	return os.Args[0]
}

func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}
