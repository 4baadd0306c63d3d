package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/report"
	"github.com/svbench/svbench/runner"
)

// addRegisteredCmds makes `svbench <group> <name>` of every tool an
// environment's registration declares (env.Spec.Commands), one parent per
// group, in the registry's order. Nothing here knows any environment. A
// group named like a built-in command is a programming error and panics
// at start-up.
func addRegisteredCmds(root *cobra.Command) {
	groups := map[string]*cobra.Command{}
	var order []string
	for _, id := range env.Default.IDs() {
		spec, err := env.Default.Lookup(id)
		if err != nil || spec.Commands == nil {
			continue
		}
		for _, c := range spec.Commands() {
			g := groups[c.Group]
			if g == nil {
				if found, _, err := root.Find([]string{c.Group}); err == nil && found != root {
					panic(fmt.Sprintf("cli: %s declares command group %q, a built-in command", id, c.Group))
				}
				g = &cobra.Command{Use: c.Group}
				groups[c.Group] = g
				order = append(order, c.Group)
			}
			if g.Short == "" {
				g.Short = c.GroupShort
			}
			g.AddCommand(registeredCommand(c))
		}
	}
	for _, name := range order {
		root.AddCommand(groups[name])
	}
}

func registeredCommand(c env.Command) *cobra.Command {
	use := c.Name
	if c.Args != "" {
		use += " " + c.Args
	}
	cmd := &cobra.Command{
		Use:     use,
		Short:   c.Short,
		Long:    c.Long,
		Example: c.Example,
		Args:    argsBetween(c.MinArgs, c.MaxArgs, c.Args),
	}
	run := c.Flags(cmd.Flags())
	var mf *modelFlags
	if c.Models {
		mf = &modelFlags{}
		mf.register(cmd)
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		cio := env.CommandIO{Out: cmd.OutOrStdout(), Err: cmd.ErrOrStderr()}
		if mf != nil {
			s, err := mf.sampling(cmd)
			if err != nil {
				return err
			}
			cio.Models = commandModels{f: mf, sampling: s, banners: cio.Err}
		}
		return run(cmd.Context(), args, cio)
	}
	return cmd
}

// argsBetween bounds a registered command's positional arguments (max < 0:
// any number); usage names them in the message.
func argsBetween(minArgs, maxArgs int, usage string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) < minArgs:
			return usagef("want at least %d argument(s) (%s), got %d", minArgs, usage, len(args))
		case maxArgs >= 0 && len(args) > maxArgs:
			return usagef("want at most %d argument(s) (%s), got %d", maxArgs, usage, len(args))
		}
		return nil
	}
}

// commandModels lends an environment's command the models the shared model
// flags resolve (env.Models).
type commandModels struct {
	f        *modelFlags
	sampling llm.Sampling
	banners  io.Writer // where EvalRequest.Banner is said
}

// Model resolves an opponent (asked with the server's defaults) or a judge
// (a served model at temperature 0 with a short answer budget).
func (m commandModels) Model(name, role string, concurrency int) (env.Model, error) {
	if role != env.ModelJudge {
		return m.f.envModel(name, role, concurrency, llm.Sampling{})
	}
	j, err := m.f.judge(name, concurrency)
	if err == nil && j == nil {
		err = usagef("no judge model given")
	}
	return j, err
}

// Eval runs r.Model as the policy in r.Env and writes the run's report.
func (m commandModels) Eval(ctx context.Context, r env.EvalRequest) (string, error) {
	pm, err := m.f.resolveModel(r.Model, r.Env, r.Concurrency)
	if err != nil {
		return "", err
	}
	ds, closeDS, err := runner.OpenDataset(ctx, r.Env, r.Dataset, "", false)
	if err != nil {
		return "", err
	}
	defer closeDS()
	if r.Banner != "" {
		fmt.Fprintln(m.banners, r.Banner)
	}
	rollouts := r.Rollouts
	if rollouts == 0 {
		rollouts = 1
	}
	res, err := runner.Run(ctx, runner.Config{Env: r.Env, Dataset: ds, Client: pm.Client, Model: pm.Name, EffectiveModel: pm.Effective, BaseURL: pm.BaseURL,
		Sampling: m.sampling, N: r.N, Rollouts: rollouts, Concurrency: r.Concurrency, Seed: r.Seed, MaxConsecutiveErrors: r.MaxConsecutiveErrors,
		OutDir: r.OutDir, RunID: r.RunID, Params: r.Params})
	if err != nil {
		return "", err
	}
	if rep, err := report.FromRun(res.Dir, "", report.Options{}); err == nil {
		_ = report.WriteDir(res.Dir, rep)
	}
	return res.Dir, nil
}
