package dataset

import (
	"io"

	"github.com/svbench/svbench/base/atomicfile"
)

// WriteFileAtomic writes path through fn so readers see either the old file
// or the complete new one (see internal/atomicfile).
func WriteFileAtomic(path string, fn func(w io.Writer) error) error {
	return atomicfile.Write(path, fn)
}
