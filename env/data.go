package env

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

// DataKind names the `svbench data` family a DataCommand joins.
type DataKind string

// Data command families.
const (
	DataImport   DataKind = "import"   // convert public corpora
	DataBuild    DataKind = "build"    // assemble released dataset versions
	DataGenerate DataKind = "generate" // synthesise datasets
)

// DataCommand is a dataset pipeline an environment ships. It is data, as
// kube-linter's checks are: the CLI makes `svbench data <kind> <name>` of
// it, named by the environment's first alias (or its id) and accepting
// every other name, so internal/cli holds no environment's pipeline.
type DataCommand struct {
	Kind DataKind
	// Args is the usage after the command's name ("FILE --out DIR").
	Args                 string
	Short, Long, Example string
	// MinArgs and MaxArgs bound the positional arguments (MaxArgs < 0:
	// any number).
	MinArgs, MaxArgs int
	// Flags declares the command's flags on fs, binding them to variables
	// of its own, and returns what runs the command once they are parsed.
	Flags func(fs *pflag.FlagSet) DataRunner
}

// DataRunner runs a data command with its positional arguments.
type DataRunner func(ctx context.Context, args []string, io DataIO) error

// DataIO is where a data command writes: results to Out, what it skipped
// or warns about to Err.
type DataIO struct {
	Out, Err io.Writer
}

// UsageError marks an error caused by how a command was called (a missing
// or invalid flag); the CLI exits with its usage code.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usagef builds a UsageError.
func Usagef(format string, args ...any) error {
	return UsageError{fmt.Errorf(format, args...)}
}

// IsUsage reports whether err is (or wraps) a UsageError.
func IsUsage(err error) bool {
	var u UsageError
	return errors.As(err, &u)
}
