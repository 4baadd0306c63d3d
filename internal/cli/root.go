// Package cli builds svbench's command tree. Each subcommand lives in its own
// file; this file only assembles them.
package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/svbench/svbench/env"
	"io"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/base/version"
)

// Exit codes, documented in the README.
const (
	ExitOK       = 0
	ExitError    = 1 // the command failed (bad input, I/O, …)
	ExitUsage    = 2 // wrong flags or arguments
	ExitFindings = 1 // `svbench verify` / `data validate` found something
	// ExitCheckFailed: `svbench verify` could not verify (unreadable file,
	// verifier error), so CI can tell "findings" from "broken".
	ExitCheckFailed = 3
)

// codedError is an error printed like any other but exiting with code.
type codedError struct {
	err  error
	code int
}

func (e codedError) Error() string { return e.err.Error() }
func (e codedError) Unwrap() error { return e.err }

// usageError marks an error caused by how the command was called, as
// env.UsageError: the one type commands, data pipelines and
// environments share.
func usageError(err error) error { return env.UsageError{Err: err} }

func usagef(format string, args ...any) error { return env.Usagef(format, args...) }

// exitError carries a specific exit code without printing anything more.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// Execute runs svbench with args and returns the process exit code.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	if explained := explainUnknownCommand(err); explained != nil {
		err = explained
	}
	fmt.Fprintln(stderr, "svbench:", err)
	if env.IsUsage(err) {
		return ExitUsage
	}
	var ce codedError
	if errors.As(err, &ce) {
		return ce.code
	}
	return ExitError
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "svbench",
		Short:         "Security environments scored by real verifiers: evaluate models, serve rewards",
		Version:       version.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError(explainFlagError(c, err)) })
	// Each subcommand file contributes one constructor here.
	root.AddCommand(
		newEnvsCmd(),
		newDataCmd(),
		newEvalCmd(), newScoreCmd(), newMergeCmd(), newDemoCmd(),
		newReportCmd(), newScoreboardCmd(), newStudyCmd(), newProbeCmd(),
		newServeCmd(),
		newVerifyCmd(),
		newVersionCmd(),
		newAdvantagesCmd(),
		newCompareCmd(), newGateCmd(),
		newSFTCmd(), newManifestCmd(),
		newRewardsCmd(), newLeaderboardCmd(),
		newViewCmd(), newCacheCmd(),
	)
	// Tools environments declare (svbench redteam tournament).
	addRegisteredCmds(root)
	return root
}
