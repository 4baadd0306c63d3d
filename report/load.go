package report

import (
	"io"

	"github.com/svbench/svbench/artifact"
)

// LoadResults reads a results file in either format (artifact.DecodeResult)
// under the one policy every reader of run artifacts shares
// (artifact.EachRow): it returns the rows and the 1-based line of each.
func LoadResults(path string) ([]artifact.Result, []int, error) {
	return artifact.LoadResults(path)
}

// LoadOptions bound how DecodeResults reads (artifact.ReadOptions).
type LoadOptions = artifact.ReadOptions

// DecodeResults reads rows from r as LoadResults reads a file; name labels
// errors.
func DecodeResults(r io.Reader, name string, opts LoadOptions) ([]artifact.Result, []int, error) {
	return artifact.DecodeResults(r, name, opts)
}
