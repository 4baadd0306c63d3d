package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/spf13/cobra"

	"github.com/svbench/svbench/artifact"
)

func newManifestCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "manifest", Short: "Run manifests (run_manifest.json): validate them"}
	var schemaPath string
	validate := &cobra.Command{
		Use:   "validate PATH [PATH...]",
		Short: "Check run manifests (files or run directories) against the run-manifest schema",
		Long: `Validates run_manifest.json files (or the one in each run directory) against svbench's
run-manifest schema, which is field for field the reference's; --schema uses another
schema file. Exit 1 when any manifest is invalid, naming the file and the failing fields.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			sch, err := compileManifestSchema(schemaPath)
			if err != nil {
				return err
			}
			bad := 0
			for _, a := range args {
				p := a
				if st, err := os.Stat(a); err == nil && st.IsDir() {
					p = filepath.Join(a, artifact.ManifestFile)
				}
				b, err := os.ReadFile(p)
				if err != nil {
					return usagef("manifest validate: %v", err)
				}
				inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
				if err == nil {
					err = sch.Validate(inst)
				}
				if err != nil {
					bad++
					fmt.Fprintf(cmd.OutOrStdout(), "%s: invalid: %v\n", p, err)
					continue
				}
				fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", p)
			}
			if bad > 0 {
				return fmt.Errorf("%d of %d manifests are invalid", bad, len(args))
			}
			return nil
		},
	}
	validate.Flags().StringVar(&schemaPath, "schema", "", "validate against this JSON Schema file instead of svbench's")
	cmd.AddCommand(validate)
	return cmd
}

func compileManifestSchema(path string) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if path == "" {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(artifact.ManifestSchema))
		if err != nil {
			return nil, fmt.Errorf("embedded manifest schema: %w", err)
		}
		if err := c.AddResource("run_manifest.schema.json", doc); err != nil {
			return nil, err
		}
		return c.Compile("run_manifest.schema.json")
	}
	sch, err := c.Compile(path)
	if err != nil {
		return nil, usagef("--schema %s: %v", path, err)
	}
	return sch, nil
}
