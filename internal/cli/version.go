package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/base/version"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print svbench's version, the commit it was built from and the Go toolchain",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "svbench %s\ncommit  %s\ngo      %s\n", version.Version, version.CommitOrUnknown(), version.Go())
			return err
		},
	}
}
