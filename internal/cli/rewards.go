package cli

import (
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/analysis/rewardsagree"
	"github.com/svbench/svbench/env"
)

func newRewardsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rewards",
		Short: "Reward-source study: executable verifiers against an LLM judge",
	}
	cmd.AddCommand(newRewardsAgreeCmd())
	return cmd
}

func newRewardsAgreeCmd() *cobra.Command {
	var (
		mf              modelFlags
		judgeModel, out string
		envName, cache  string
		workers, limit  int
		tolerance       float64
		allowIncomplete bool
		seed            uint64
	)
	cmd := &cobra.Command{
		Use:   "agree RUN",
		Short: "Re-score a run's rollouts with the executable, llm_judge and hybrid reward sources and measure their agreement",
		Long: `Re-scores every rollout of RUN (a completed svbench run of an environment that offers
reward_source=llm_judge|hybrid: E1, E2, E4) three times — executable rubric, LLM judge,
and both — and reports per-row reward agreement (rewards min–max scaled to [0, 1], within
--tolerance), Pearson and Spearman correlation, verifier-solved × judge-yes confusion with
Cohen's κ, a breakdown by gold × predicted label, and what judging cost. The rows where the
judge and the verifier disagree are written to rewards_disagreements.jsonl, judge-only
passes first. Judge answers are cached in RUN/judge_cache.jsonl keyed by judge model and
prompt hash, so re-running costs nothing. A judge that fails or answers neither yes nor no
is counted apart, never as "no". Because all three sources score the same rollouts, the
budgets compare_rewards.py checks are equal by construction; an unfinished run is refused
unless --allow-incomplete. Writes rewards_agree.json and rewards_agree.md.`,
		Example: "  svbench rewards agree outputs/evals/network-logs--m/RUN --judge-model gpt-4.1-nano\n  svbench rewards agree RUN --judge-model qwen3-8b --endpoints endpoints.yaml --limit 200",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if judgeModel == "" {
				return usagef("rewards agree: --judge-model is required (the judge the llm_judge and hybrid sources ask)")
			}
			if tolerance < 0 || tolerance > 1 {
				return usagef("--tolerance %v: want a number in [0, 1] (rewards are scaled to [0, 1])", tolerance)
			}
			if err := checkConcurrency("--concurrency", workers); err != nil {
				return err
			}
			if _, err := os.Stat(args[0]); err != nil {
				return usagef("rewards agree: %v", err)
			}
			judge, err := mf.judge(judgeModel, max(workers, 1))
			if err != nil {
				return err
			}
			rep, err := rewardsagree.Study(cmd.Context(), args[0], rewardsagree.StudyOptions{
				Registry: env.Default, Env: envName, Judge: judge, JudgeModel: judgeModel, CachePath: cache,
				OutDir: out, Workers: workers, Limit: limit, AllowIncomplete: allowIncomplete,
				Options: rewardsagree.Options{Tolerance: tolerance, Seed: seed},
			})
			if errors.Is(err, rewardsagree.ErrNoJudgeSource) {
				return usageError(err)
			}
			if err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), rewardsagree.Markdown(rep))
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s, %s and %s\n", rewardsagree.ReportJSON, rewardsagree.ReportMarkdown, rep.DisagreementsFile)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&judgeModel, "judge-model", "", "judge model, served like --model (an alias from --endpoints, or a model on --base-url), asked at temperature 0")
	mf.registerEndpoint(fs, "judge's ", "4")
	fs.IntVar(&workers, "concurrency", 4, "rows scored at once (judge requests in flight)")
	fs.IntVar(&limit, "limit", 0, "study only the first N rows (0: all) to bound judge spending")
	fs.Float64Var(&tolerance, "tolerance", rewardsagree.DefaultTolerance, "per-row agreement tolerance on rewards scaled to [0, 1]")
	fs.BoolVar(&allowIncomplete, "allow-incomplete", false, "study a run that did not complete (exploratory; the report says so)")
	fs.StringVar(&envName, "env", "", "environment (default: the run's)")
	fs.StringVar(&cache, "judge-cache", "", "judge verdict cache file (default RUN/judge_cache.jsonl)")
	// --cache is a switch everywhere else (eval's response cache); the file
	// path it used to take here still works, with a note.
	fs.StringVar(&cache, "cache", "", "")
	_ = fs.MarkDeprecated("cache", "use --judge-cache FILE (--cache is a switch in eval)")
	fs.StringVar(&out, "out", "", "output directory (default: the run's)")
	fs.Uint64Var(&seed, "seed", 0, "bootstrap seed")
	return cmd
}
