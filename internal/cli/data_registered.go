package cli

import (
	"github.com/spf13/cobra"

	"github.com/svbench/svbench/env"
)

// registeredDataCmds makes a subcommand of every dataset pipeline of the
// given kind an environment's registration declares (env.Spec.Data): named
// by the environment's first alias (its id when it has none) and accepting
// every other name. Nothing here knows any environment.
func registeredDataCmds(kind env.DataKind) []*cobra.Command {
	var out []*cobra.Command
	for _, id := range env.Default.IDs() {
		spec, err := env.Default.Lookup(id)
		if err != nil || spec.Data == nil {
			continue
		}
		names := append(append([]string(nil), spec.Aliases...), id)
		for _, dc := range spec.Data() {
			if dc.Kind != kind {
				continue
			}
			out = append(out, dataCommand(names, dc))
		}
	}
	return out
}

func dataCommand(names []string, dc env.DataCommand) *cobra.Command {
	use := names[0]
	if dc.Args != "" {
		use += " " + dc.Args
	}
	cmd := &cobra.Command{
		Use:     use,
		Aliases: names[1:],
		Short:   dc.Short,
		Long:    dc.Long,
		Example: dc.Example,
		Args:    argsBetween(dc.MinArgs, dc.MaxArgs, dc.Args),
	}
	run := dc.Flags(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		return run(cmd.Context(), args, env.DataIO{Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr()})
	}
	return cmd
}
