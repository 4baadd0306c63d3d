// Package tasks embeds the E3 task corpus: one directory per task under
// testdata/ (a name the go tool ignores, so the tasks' Go sources and tests are
// not compiled as packages of this module). See README.md for the catalogue.
package tasks

import (
	"embed"
	"io/fs"
)

//go:embed testdata
var corpus embed.FS

// FS returns the corpus root: one directory per task, ready for taskset.Load.
func FS() fs.FS {
	sub, err := fs.Sub(corpus, "testdata")
	if err != nil {
		// fs.Sub only fails on an invalid path, and "testdata" is valid.
		panic(err)
	}
	return sub
}
