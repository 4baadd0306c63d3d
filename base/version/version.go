// Package version reports what svbench build is running, for run metadata.
package version

import (
	"context"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
	"time"
)

// Version is the svbench release; overridden with -ldflags at release time.
var Version = "0.1.0-dev"

// Commit is stamped by `make build` (-ldflags -X), so a binary run outside
// its checkout still records the commit it was built from.
var Commit = ""

// Go is the toolchain that built the binary.
func Go() string { return runtime.Version() }

// GitCommit returns the commit of the build (from VCS stamping) or, failing
// that, of the working directory's checkout; "" when neither is known.
func GitCommit() string {
	if Commit != "" {
		return Commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				return s.Value
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}

// Module returns the version of a dependency compiled into the binary, so
// verifier versions in metadata are the ones that actually ran.
func Module(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, d := range bi.Deps {
		if d.Path == path {
			if d.Replace != nil {
				return d.Replace.Version
			}
			return d.Version
		}
	}
	return ""
}
