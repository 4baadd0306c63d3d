// Package version reports what svbench build is running, for run metadata.
package version

import (
	"runtime"
	"runtime/debug"
)

// Version is the svbench release; overridden with -ldflags at release time.
var Version = "0.1.0-dev"

// Commit is stamped by `make build` (-ldflags -X), so a binary run outside
// its checkout still records the commit it was built from.
var Commit = ""

// Unknown is what `svbench version` prints when the build recorded no commit.
const Unknown = "unknown"

// Go is the toolchain that built the binary.
func Go() string { return runtime.Version() }

// GitCommit returns the commit svbench was built from, as the build itself
// recorded it: the -ldflags stamp, else the Go toolchain's VCS stamp (with
// "-dirty" when the tree had uncommitted changes). It returns "" when the
// build recorded neither (go install from the module proxy, go test, a build
// with -buildvcs=false); run metadata leaves git_commit out then and the
// manifest says "unknown".
//
// It never asks git about the working directory: a binary run from a user's
// own repository would record that repository's commit as svbench's.
func GitCommit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		return commitOf(Commit, bi)
	}
	return commitOf(Commit, nil)
}

// CommitOrUnknown is GitCommit, or Unknown when the build recorded none.
func CommitOrUnknown() string {
	if c := GitCommit(); c != "" {
		return c
	}
	return Unknown
}

// commitOf resolves the commit from the -ldflags stamp and the build info;
// split from GitCommit so both sources can be tested without a stamped binary.
func commitOf(stamp string, bi *debug.BuildInfo) string {
	if stamp != "" {
		return stamp
	}
	if bi == nil {
		return ""
	}
	var rev string
	var modified bool
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if rev != "" && modified {
		return rev + "-dirty"
	}
	return rev
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
