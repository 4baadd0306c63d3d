package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/base/procs"
	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
	_ "github.com/svbench/svbench/internal/envs" // registers every environment
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/llm/usage"
	"github.com/svbench/svbench/report"
	"github.com/svbench/svbench/runner"
)

// maxConcurrency bounds every episodes-, rows- or requests-in-flight flag
// (eval/demo/probe/score -c, rewards agree --concurrency, serve --workers,
// --max-in-flight). Each unit in flight is a goroutine holding an episode's
// state and, against an endpoint, a connection and a request slot; the runner
// starts min(concurrency, jobs) of them and the client sizes a semaphore to
// the bound, so -c 9223372036854775807 ran out of memory (or panicked) instead
// of failing fast. 4096 is far above what one endpoint or one machine serves
// usefully, so no real run is refused.
const maxConcurrency = 4096

// checkConcurrency refuses a negative or absurd concurrency flag the way
// -r/--rollouts is refused: as a usage error naming the flag and the bound.
// Zero keeps each flag's own default.
func checkConcurrency(flag string, n int) error {
	switch {
	case n < 0:
		return usagef("%s %d: cannot be negative (0 takes the default)", flag, n)
	case n > maxConcurrency:
		return usagef("%s %d: at most %d at once — each one is a goroutine with its own state and request, so more exhausts memory long before it adds throughput; to go wider, split the work over processes or machines (eval --shard i/n, joined with svbench merge)", flag, n, maxConcurrency)
	}
	return nil
}

type evalFlags struct {
	envName     string
	models      string
	n           int
	rollouts    int
	concurrency int
	seed        uint64
	datasetPath string
	split       string
	out         string
	rubric      string
	shard       string
	resume      string
	maxConsec   int
	maxTurns    int
	params      paramFlags
	// envFlags are the environments' own shorthands (--policy-pack,
	// --target-model, …).
	envFlags         envParamFlags
	noReport         bool
	judgeModel       string
	progressMode     string
	runID            string
	systemPromptFile string
	model            modelFlags
	saveResults      bool // vf-eval's -s: svbench always saves
	config           string
	verbose          bool
	cache            cacheFlags
	prices           string
	// baseURLFromEnv carries a resumed run's "URL from $OPENAI_BASE_URL"
	// through a session whose shell lacks the variable (the recorded URL
	// is used then): without it the flag was written back false, and the
	// next resume no longer read the corrected variable.
	baseURLFromEnv bool
	// modelArgs are Inspect's -M key=value; reasoningEffort its
	// --reasoning-effort (see applyModelHabits).
	modelArgs       []string
	reasoningEffort string
	// entry, set when an eval set starts a run, holds the entry's
	// configuration and sampling as the set decoded them: the run takes
	// these values, not flags written back as text and parsed again.
	entry *entryRun
}

// entryRun is what an eval set's entry decides for one run.
type entryRun struct {
	conf     env.Configured
	sampling llm.Sampling
}

func newEvalCmd() *cobra.Command {
	cmd, _ := newEvalCommand()
	return cmd
}

// newEvalCommand also returns the flags the command parses into, so an
// eval set can compare an entry with its earlier run as --resume does.
func newEvalCommand() (*cobra.Command, *evalFlags) {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Evaluate models (OpenAI-compatible endpoints or built-in policies) on an environment",
		Long: `Evaluate one or more models on an environment's dataset.

Results are appended to outputs/evals/<env>--<model>/<run_id>/results.jsonl as each
rollout finishes; metadata.json is kept current; at the end summary.json and report.md
are written. Ctrl-C stops gracefully; --resume RUN_DIR alone finishes a stopped or
killed run: every setting comes from its metadata.json, and a flag given with a
different value is refused with the difference named.

Models: builtin:<policy> runs an environment's baseline in-process (no key, no network);
any other name is sent to --base-url / $OPENAI_BASE_URL with the key in $OPENAI_API_KEY,
or looked up in --endpoints. Environments may also be given first, as in Inspect:
svbench eval e1 e4 -m MODEL runs each in turn.

Environment parameters (--param key=value, -a '{"key": value}', or params in a --config
entry); the environment refuses any other, and each run records every value in force:
` + env.Default.ParamHelp() + aliasHelp(evalFlagAliases),
		Example: `  svbench eval --env e1 --model builtin:features
  svbench eval --env e1 --model gpt-4.1-mini,gpt-5-mini -n 100 -c 32 --seed 42
  OPENAI_BASE_URL=http://localhost:8000/v1 svbench eval --env e2 --model Qwen/Qwen3-8B -T 0 --max-tokens 2048
  svbench eval e1 e4 -m builtin:features --limit 20     # positional environments, Inspect's --limit
  svbench eval --resume outputs/evals/network-logs--gpt-4.1-mini/20261121T101500Z-1a2b`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := applyModelHabits(cmd, &f); err != nil {
				return err
			}
			if f.config != "" {
				if len(args) > 0 || f.envName != "" || f.models != "" || f.resume != "" {
					return usagef("--config runs the eval set the file describes: drop the environment, --model and --resume (rerun the same --config to resume the set)")
				}
				return runEvalSet(cmd, &f)
			}
			targets, err := evalTargets(&f, args)
			if err != nil {
				return err
			}
			if targets == nil {
				return runEval(cmd, &f)
			}
			for _, t := range targets {
				g := f
				g.envName = t
				if err := runEval(cmd, &g); err != nil {
					if len(targets) > 1 {
						return fmt.Errorf("%s: %w", t, err)
					}
					return err
				}
			}
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&f.envName, "env", "", "environment: e1, network-logs, sv-env-network-logs, …")
	fs.StringVarP(&f.models, "model", "m", "", "model name(s), comma-separated; builtin:<policy> for built-in baselines")
	fs.IntVarP(&f.n, "num-examples", "n", 0, "examples to evaluate after the seeded shuffle (0 = all)")
	fs.IntVarP(&f.rollouts, "rollouts", "r", 1, "rollouts per example (pass@k in metadata when > 1)")
	fs.IntVarP(&f.concurrency, "concurrency", "c", 16, "episodes in flight")
	fs.Uint64Var(&f.seed, "seed", 42, "shuffle seed")
	fs.StringVar(&f.datasetPath, "dataset", "", "dataset JSONL (default: the environment's embedded split, --split)")
	fs.StringVar(&f.split, "split", "", "embedded split to evaluate: test (the default, the evaluation set), dev or train")
	fs.StringVar(&f.out, "out", "outputs", "output root")
	fs.StringVar(&f.rubric, "rubric", "", "rubric (default: the environment's default; 'reference' for comparability)")
	fs.StringVar(&f.shard, "shard", "", "evaluate only shard i/n of the selected examples")
	fs.StringVar(&f.resume, "resume", "", "finish a stopped run in this directory (its settings come from its metadata.json)")
	fs.StringVar(&f.runID, "run-id", "", "name the run directory (default: UTC timestamp + random suffix)")
	fs.StringVar(&f.systemPromptFile, "system-prompt-file", "", "replace the environment's system prompt with this file's text (prompt baselines); recorded with its sha256")
	fs.IntVar(&f.maxConsec, "max-consecutive-errors", 3, "stop after this many model errors in a row (0 disables)")
	fs.IntVar(&f.maxTurns, "max-turns", 0, "cap on assistant turns (default: the environment's)")
	f.params.register(fs)
	f.envFlags.register(fs, true)
	fs.BoolVar(&f.noReport, "no-report", false, "skip writing summary.json and report.md")
	fs.StringVar(&f.judgeModel, "judge-model", "", "the judge: verdicts for --param reward_source=llm_judge|hybrid (E1, E2, E4), safety judgements for --param judge=llama-guard|classifier (E5, E6); served like --model, asked at temperature 0")
	fs.StringVar(&f.progressMode, "progress", "auto", "progress display: auto, bar, lines, none")
	fs.StringVar(&f.prices, "prices", "", "TOML file of per-million-token prices (see docs/prices.example.toml): cost by role and model goes into metadata.json and report.md")
	f.cache.register(cmd)
	f.model.register(cmd)
	fs.BoolVarP(&f.saveResults, "save-results", "s", true, "accepted for vf-eval users: svbench always saves every rollout")
	fs.BoolVarP(&f.verbose, "verbose", "v", false, "log requests, retries and warnings at debug level")
	fs.StringArrayVarP(&f.modelArgs, "model-args", "M", nil, "Inspect's model args: base_url=URL is --base-url; others are refused with what to type")
	fs.StringVar(&f.reasoningEffort, "reasoning-effort", "", "reasoning_effort sent in each request (low, medium, high; as Inspect's --reasoning-effort); recorded with the sampling")
	fs.StringVar(&f.config, "config", "", "TOML eval set: [[eval]] entries with env, models, n, r, rubric, dataset, params and sampling; rerun it to resume the set")
	fs.SetNormalizeFunc(aliasNormalizer(evalFlagAliases))
	return cmd, &f
}

func runEval(cmd *cobra.Command, f *evalFlags) error {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	sampling, shard, params, models, err := evalInputs(cmd, f)
	if err != nil {
		return err
	}
	systemPrompt, systemPromptSum, err := readSystemPrompt(f.systemPromptFile)
	if err != nil {
		return err
	}
	if f.resume != "" {
		if meta, _ := artifact.ReadMetadata(f.resume); meta != nil && meta.Launch.SystemPromptSHA256 != systemPromptSum {
			return usagef("--resume %s: the system prompt file %s changed since the run started (sha256 %s, now %s); restore it or start a new run", f.resume, f.systemPromptFile, show(meta.Launch.SystemPromptSHA256), show(systemPromptSum))
		}
	}
	var prices *usage.Prices
	if f.prices != "" {
		if prices, err = usage.LoadPrices(f.prices); err != nil {
			return usageError(err)
		}
	}
	respCache, err := f.cache.open(ctx, stderr)
	if err != nil {
		return err
	}
	defer respCache.Close()
	defer warnRejectedEntries(stderr, respCache)
	rec := usage.New()
	f.model.wrap = func(c llm.Client, baseURL, role string) llm.Client {
		return rec.Wrap(respCache.Wrap(c, baseURL), role)
	}
	var conf env.Configured
	if f.entry != nil {
		conf = f.entry.conf
	} else if conf, err = configureEnv(f.envName, params); err != nil {
		return err
	}
	envModels, err := f.model.envModels(conf, f.judgeModel, f.concurrency)
	if err != nil {
		return err
	}
	e, err := buildEnv(conf, env.Options{Models: envModels})
	if err != nil {
		return err
	}
	if f.rubric != "" && !contains(e.Info().Rubrics, f.rubric) {
		return usagef("--rubric %q: environment %s has rubrics %s%s", f.rubric, e.Info().ID, strings.Join(e.Info().Rubrics, ", "), didYouMean(f.rubric, e.Info().Rubrics))
	}
	if f.split != "" && f.datasetPath != "" {
		return usagef("--split %s names an embedded split; a --dataset file's split comes from its name (train.jsonl, dev.jsonl, test.jsonl): pass one or the other", f.split)
	}
	ds, closeDS, err := runner.OpenDataset(ctx, e, f.datasetPath, f.split, false)
	if err != nil {
		if other := otherEnvFor(f.datasetPath, e.Info().ID); other != "" {
			return fmt.Errorf("%w\n%s rows parse as %s rows, not %s: pass --env %s", err, f.datasetPath, other, e.Info().ID, other)
		}
		return err
	}
	defer closeDS()
	var episodes int
	if f.resume == "" {
		// Checked before the first run starts: a product past the cap (or
		// past math.MaxInt) is a mistake in a flag, not a run to begin.
		if episodes, err = runner.Episodes(runner.PlannedExamples(ds.Len(), f.n, shard), f.rollouts); err != nil {
			return usagef("-r/--rollouts %d: %v", f.rollouts, err)
		}
	}
	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))

	var failed []string
	for _, name := range models {
		m, err := f.model.resolveModel(name, e, f.concurrency)
		if err != nil {
			return err
		}
		cfg := runner.Config{
			Env: e, Dataset: ds, Client: m.Client, Model: m.Name, EffectiveModel: m.Effective, BaseURL: m.BaseURL,
			Sampling: sampling, Rubric: f.rubric, MaxTurns: f.maxTurns, Params: params, Resolved: conf.Values,
			N: f.n, Rollouts: f.rollouts, Concurrency: f.concurrency, Seed: f.seed, Shard: shard,
			MaxConsecutiveErrors: f.maxConsec, OutDir: f.out, ResumeDir: f.resume, RunID: f.runID,
			SystemPrompt: systemPrompt,
			Launch: artifact.Launch{
				DatasetPath: cleanPath(f.datasetPath), Split: f.split, APIKeyEnv: f.model.apiKeyEnv, EndpointsFile: cleanPath(f.model.endpoints),
				JudgeModel: f.judgeModel, MaxTurns: f.maxTurns,
				SystemPromptFile: cleanPath(f.systemPromptFile), SystemPromptSHA256: systemPromptSum,
			},
			Progress: progressFor(f.progressMode, stderr), Log: log,
			Usage: rec, Prices: prices,
		}
		var rows *report.Collector
		if f.resume == "" && !f.noReport {
			rows = report.NewCollector()
			cfg.Written = rows.Add
		}
		cfg.Launch.PricesFile = cleanPath(f.prices)
		cfg.Launch.BaseURLFromEnv = f.baseURLFromEnv ||
			f.model.baseURL == "" && f.model.endpoints == "" && os.Getenv("OPENAI_BASE_URL") != ""
		if m.Client == nil || strings.HasPrefix(m.Name, "builtin:") {
			cfg.Launch.APIKeyEnv = ""
		}
		fmt.Fprintf(stderr, "evaluating %s on %s (%s, %d rows)\n", m.Name, e.Info().ID, ds.Info().ID, ds.Len())
		for _, w := range m.Warnings {
			fmt.Fprintf(stderr, "warning: %s\n", w)
		}
		if f.resume == "" {
			fmt.Fprintf(stderr, "  %d examples × %d rollouts = %d episodes", runner.PlannedExamples(ds.Len(), f.n, shard), f.rollouts, episodes)
			if m.Client != nil && !strings.HasPrefix(m.Name, "builtin:") && !isLocalURL(m.BaseURL) {
				fmt.Fprintf(stderr, ", at least %d model calls to %s", episodes, m.BaseURL)
				if prices == nil {
					fmt.Fprintf(stderr, "; no --prices, so tokens are recorded but not what they cost")
				}
			}
			fmt.Fprintln(stderr)
		}
		// While the run waits on the model, more processors than cores let
		// answers that arrive together be read without queueing behind
		// each other; when it computes, the cores' worth (base/procs).
		stopAdapting := procs.Adapt(ctx)
		out, runErr := runner.Run(ctx, cfg)
		stopAdapting()
		if out == nil {
			return runErr
		}
		if !f.noReport && out.Metadata.Completed > 0 {
			if err := writeReportFrom(cmd.OutOrStdout(), out.Dir, out.Metadata, rows); err != nil {
				fmt.Fprintf(stderr, "warning: report for %s: %v\n", out.Dir, err)
			}
		} else {
			printRunSummary(cmd.OutOrStdout(), out.Dir, out.Metadata, nil)
		}
		if runErr != nil {
			if errors.Is(runErr, runner.ErrInterrupted) || ctx.Err() != nil {
				return runErr
			}
			failed = append(failed, fmt.Sprintf("%s: %v", name, runErr))
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d of %d runs did not complete:\n  %s", len(failed), len(models), strings.Join(failed, "\n  "))
	}
	return nil
}

// evalInputs checks eval's flags and reads what they name: the sampling
// (from the run being resumed, or the flags), the shard, the environment's
// parameters and the models.
func evalInputs(cmd *cobra.Command, f *evalFlags) (sampling llm.Sampling, shard runner.Shard, params map[string]string, models []string, err error) {
	if f.resume != "" {
		if _, sampling, err = applyResume(cmd, f); err != nil {
			return sampling, shard, nil, nil, err
		}
	} else {
		if f.models == "" {
			return sampling, shard, nil, nil, usagef("--model is required (try --model builtin:heuristic with --env e1)")
		}
		if f.entry != nil {
			sampling = f.entry.sampling
		} else if sampling, err = f.model.sampling(cmd); err != nil {
			return sampling, shard, nil, nil, err
		}
	}
	if f.n < 0 {
		return sampling, shard, nil, nil, usagef("-n/--num-examples %d: want a count of examples, or 0 for the whole set", f.n)
	}
	if f.rollouts < 1 {
		return sampling, shard, nil, nil, usagef("-r/--rollouts %d: want at least one rollout per example", f.rollouts)
	}
	if err := checkConcurrency("-c/--concurrency", f.concurrency); err != nil {
		return sampling, shard, nil, nil, err
	}
	shard, err = runner.ParseShard(f.shard)
	if err != nil {
		return sampling, shard, nil, nil, usageError(err)
	}
	if f.entry != nil {
		params = f.entry.conf.Given
	} else {
		if params, err = f.params.parse(); err != nil {
			return sampling, shard, nil, nil, err
		}
		if params, err = f.envFlags.apply(f.envName, params); err != nil {
			return sampling, shard, nil, nil, err
		}
	}
	models = splitList(f.models)
	if f.runID != "" && f.resume == "" {
		if err := runner.CheckRunID(f.runID); err != nil {
			return sampling, shard, nil, nil, usageError(err)
		}
	}
	if f.runID != "" && len(models) != 1 {
		return sampling, shard, nil, nil, usagef("--run-id names one run: pass exactly one --model")
	}
	return sampling, shard, params, models, nil
}

func writeReport(w io.Writer, dir string, meta *artifact.Metadata) error {
	return writeReportFrom(w, dir, meta, nil)
}

// writeReportFrom is writeReport with the rows the run wrote already
// decoded (rows nil reads them from the file).
func writeReportFrom(w io.Writer, dir string, meta *artifact.Metadata, rows *report.Collector) error {
	rep, err := rows.Report(dir, meta.Environment, report.Options{})
	if err != nil {
		printRunSummary(w, dir, meta, nil)
		return err
	}
	if err := report.WriteDir(dir, rep); err != nil {
		return err
	}
	printRunSummary(w, dir, meta, rep)
	return nil
}

// printRunSummary is the one-screen summary at the end of a run.
func printRunSummary(w io.Writer, dir string, m *artifact.Metadata, rep *report.Report) {
	fmt.Fprintf(w, "\n%s · %s · %s\n", m.Environment, m.Model, m.Status)
	fmt.Fprintf(w, "  dataset     %s (%s), %d examples × %d rollouts\n", m.Dataset, m.DatasetRev, m.NumExamples, m.Rollouts)
	fmt.Fprintf(w, "  %s   time %s\n", rowCounts(m), (time.Duration(m.DurationS * float64(time.Second))).Round(time.Millisecond))
	if c := coverageLine(m); c != "" && rep == nil {
		fmt.Fprintf(w, "  coverage    %s\n", c)
	}
	fmt.Fprintf(w, "  mean reward %s\n", meanReward(m))
	if m.NoRows() {
		fmt.Fprintf(w, "  no scored row: every model call failed (a wrong model name? the error above lists what the server serves); view, compare's picker and the leaderboard leave this run out\n")
	}
	for _, k := range slices.Sorted(maps.Keys(m.AvgComponents)) {
		fmt.Fprintf(w, "    %-22s %.4f\n", k, m.AvgComponents[k])
	}
	for _, k := range slices.Sorted(maps.Keys(m.PassAtK)) {
		fmt.Fprintf(w, "  %-12s %.4f\n", k, m.PassAtK[k])
	}
	if rep != nil {
		for _, s := range rep.Headline {
			fmt.Fprintf(w, "  %-22s %s\n", s.Name, s.Value)
		}
	}
	printUsage(w, m)
	if m.Usage.TotalTokens > 0 {
		fmt.Fprintf(w, "  tokens      %d prompt + %d completion", m.Usage.PromptTokens, m.Usage.CompletionTokens)
		if m.Usage.ReasoningTokens > 0 {
			fmt.Fprintf(w, " (%d of them reasoning)", m.Usage.ReasoningTokens)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  run dir     %s\n", dir)
}

// rowCounts says what the run's rows are: the model-error count is of
// rows (each redone by --resume), never of calls, which the usage lines
// count across every session.
func rowCounts(m *artifact.Metadata) string {
	return fmt.Sprintf("completed %d rows   %d row(s) with a model error", m.Completed, m.Errors)
}

// coverageLine says what share of the scored rows the model answered
// when some were unanswered (they are in every metric, scored as no
// answer); "" otherwise. The report's headline says it when there is one.
func coverageLine(m *artifact.Metadata) string {
	if m.Unanswered == 0 || m.Completed == 0 {
		return ""
	}
	return fmt.Sprintf("answered %d of %d scored rows (%.1f%%); %d unanswered: prompt + max_tokens over the model's context, scored as no answer",
		m.Completed-m.Unanswered, m.Completed, 100*float64(m.Completed-m.Unanswered)/float64(m.Completed), m.Unanswered)
}

// meanReward is "—" for a run with no completed row: 0.0000 would read as
// a score.
func meanReward(m *artifact.Metadata) string {
	if m.Completed == 0 {
		return "—"
	}
	return fmt.Sprintf("%.4f", m.AvgReward)
}

func progressFor(mode string, w io.Writer) runner.Progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		tty = term.IsTerminal(int(f.Fd()))
	}
	switch {
	case mode == "none":
		return nil
	case mode == "bar" || (mode == "auto" && tty):
		return &runner.BarProgress{W: w}
	default:
		return &runner.LineProgress{W: w, Interval: 10 * time.Second}
	}
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func didYouMean(s string, candidates []string) string {
	if c := env.Suggest(s, candidates); c != "" {
		return fmt.Sprintf(" (did you mean %q?)", c)
	}
	return ""
}

// otherEnvFor names another registered environment whose rows the first
// row of path parses as, to explain a dataset given to the wrong --env.
func otherEnvFor(path, current string) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), dataset.MaxLine)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		for _, id := range env.Default.IDs() {
			if id == current {
				continue
			}
			other, err := env.Default.New(id, env.Options{})
			if err != nil {
				continue
			}
			if _, err := other.ParseExample(json.RawMessage(line)); err == nil {
				return id
			}
		}
		return ""
	}
	return ""
}
