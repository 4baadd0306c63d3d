package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/env"
	_ "github.com/svbench/svbench/internal/envs" // registers every environment
)

func newEnvsCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "envs",
		Short: "List the registered environments, their rubrics and built-in policies",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			type described struct {
				env.Info
				Params []env.ParamSpec `json:"params"`
			}
			var infos []described
			for _, id := range env.Default.IDs() {
				e, err := env.Default.New(id, env.Options{})
				if err != nil {
					return err
				}
				params, err := env.Default.Params(id)
				if err != nil {
					return err
				}
				infos = append(infos, described{Info: e.Info(), Params: params})
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(infos)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tALIASES\tVERSION\tRUBRICS\tPOLICIES\tPARAMS")
			for _, in := range infos {
				var ps []string
				for _, p := range in.Params {
					ps = append(ps, p.Name+"="+p.Default)
				}
				fmt.Fprintf(tw, "%s\t%v\t%s\t%v\t%v\t%v\n", in.ID, in.Aliases, in.Version, in.Rubrics, in.Policies, ps)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}
