package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/analysis/probe"
	"github.com/svbench/svbench/env"
)

type probeOptions struct {
	env, rubric, dataset, out string
	limit, concurrency        int
	only                      []string
	noSearch                  bool
	params                    paramFlags
	// envFlags are the environments' own shorthands (--policy-pack), so a
	// custom policy pack is probed as it is evaluated.
	envFlags envParamFlags
}

func newProbeCmd() *cobra.Command {
	var o probeOptions
	cmd := &cobra.Command{
		Use:   "probe",
		Short: "Search an environment for answers that earn reward without doing the task; exit 1 when one reaches the honest baseline",
		Long: `probe plays, on the same rows as the environment's honest built-in baseline:
  - the environment's registered exploit strategies (the families named in its README), and
  - a generic search: each built-in policy with one mutation applied to every answer it gives
    (confidences pushed to 0, 0.5 or 1, labels flipped, keys duplicated or reordered, lists emptied,
    long fields dropped, tool output or prompt words stuffed in, padding, repetition, truncation).
A registered strategy is bounded by its mean reward; a mutation by what it earns on rows it does not
solve (a mutation that leaves the honest answer intact earns nothing there). probe.json and probe.md
say which strategies reach the honest mean; the exit code is 1 when any does, so probe works as a CI
gate for custom rubrics, datasets and policy packs.`,
		Example: `  svbench probe e2 --out probes/e2
  svbench probe e2 --policy-pack packs/acme --out probes/acme
  svbench probe --env e1 --dataset my.jsonl --rubric reference --out probes/e1-ref
  svbench probe --env e3 -n 8 --no-search --out probes/e3`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				if o.env != "" && o.env != args[0] {
					return usagef("probe: environment %q given twice (%q and --env %q); name it once", args[0], args[0], o.env)
				}
				o.env = args[0]
			}
			return runProbe(cmd, o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.env, "env", "e", "", "environment id or alias (e1…e6)")
	f.StringVar(&o.rubric, "rubric", "", "rubric to probe (default: the environment's default)")
	f.StringVar(&o.dataset, "dataset", "", "dataset file (default: the embedded mini set)")
	f.StringVarP(&o.out, "out", "o", "", "directory for probe.json and probe.md (required)")
	f.IntVarP(&o.limit, "num-examples", "n", 0, "probe the first N rows (0 = all)")
	f.IntVarP(&o.concurrency, "concurrency", "c", 0, "rows played at once (default: one per CPU)")
	f.StringSliceVar(&o.only, "strategies", nil, "run only these strategies (names from probe.json), comma-separated")
	f.BoolVar(&o.noSearch, "no-search", false, "run only the registered strategies, not the mutation search")
	o.params.register(f)
	o.envFlags.register(f, false)
	return cmd
}

func runProbe(cmd *cobra.Command, o probeOptions) error {
	if o.out == "" {
		return usagef("--out is required")
	}
	if o.limit < 0 {
		return usagef("-n %d: the number of rows cannot be negative", o.limit)
	}
	if err := checkConcurrency("-c/--concurrency", o.concurrency); err != nil {
		return err
	}
	params, err := o.params.parse()
	if err != nil {
		return usageError(err)
	}
	id := ""
	if o.env != "" {
		if id, err = env.Default.Resolve(o.env); err != nil {
			return usageError(err)
		}
		if params, err = o.envFlags.apply(id, params); err != nil {
			return err
		}
	}
	newEnv := func(p map[string]string) (env.Environment, error) {
		return newEnvOpts(id, env.Options{Params: p})
	}
	if _, err := newEnv(params); err != nil {
		return err
	}
	res, err := probe.Run(cmd.Context(), probe.Config{
		EnvID: id, New: newEnv, Params: params, Dataset: o.dataset, Rubric: o.rubric,
		Limit: o.limit, Only: o.only, Search: !o.noSearch, Concurrency: o.concurrency,
	})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(o.out, "probe.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	md := probe.Markdown(res)
	if err := os.WriteFile(filepath.Join(o.out, "probe.md"), []byte(md), 0o644); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "%s (%s rubric, %d rows): honest builtin:%s %.4f; %d strategies, best %s %.4f (%.0f%% of honest)\n",
		res.Env, res.Rubric, res.Rows, res.Honest.Name, res.Honest.MeanReward, len(res.Strategies),
		res.Strategies[0].Name, res.Strategies[0].Bound, 100*res.Strategies[0].ShareHonest)
	fmt.Fprintf(w, "wrote %s and %s\n", filepath.Join(o.out, "probe.json"), filepath.Join(o.out, "probe.md"))
	if len(res.Vulnerable) > 0 {
		fmt.Fprintf(cmd.ErrOrStderr(), "VULNERABLE: %d strategies reach the honest mean: %v\n", len(res.Vulnerable), res.Vulnerable)
		return exitError{code: ExitFindings}
	}
	return nil
}
