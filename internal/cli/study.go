package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env/judgeutil"
	"github.com/svbench/svbench/ingest"
	"github.com/svbench/svbench/report"
)

// Study output files.
const (
	StudyJSON     = "study.json"
	StudyMarkdown = "study.md"
)

func newStudyCmd() *cobra.Command {
	var (
		mf         modelFlags
		judgeModel string
		out        string
		envName    string
		rubric     string
		controlDir string
		reps       int
		maxTable   int
		seed       uint64
	)
	cmd := &cobra.Command{
		Use:   "study RUN_DIR [RUN_DIR…] [--control RUN_DIR]",
		Short: "Compare training runs of one environment trained with different reward sources (or any one varied setting)",
		Long: `Reads two or more training runs (a trainer's rollouts, its run_manifest.json, the hosted
platform's metadata.json and metrics_raw.json, as the reference's collector exports them) and
writes study.json, study.md and SVG charts:

  - a budget-parity table of the reference's matched-budget fields (model, steps, batch,
    rollouts per example, max tokens, temperature, LoRA, learning rate, dataset, seed,
    environment arguments, eval) and identity fields (environment id and version, reward
    source and config), every difference flagged;
  - the runs' learning curves overlaid (each on the reward it was trained on);
  - cross-scoring: every run's final rollouts re-scored by the executable verifier beside
    the reward it was trained on and the judge's (recorded, or asked with --judge-model),
    with 95% intervals that resample problems, and the executable-reward gap of each run
    to the first executable- or hybrid-rewarded run (the "hacking gap");
  - reward quality: the judge's yes on each run's final rollouts against the executable
    verifier's solved, as precision and recall (Wilson 95% intervals), false positives named;
  - the random-reward control: --control RUN_DIR (or a run recorded with
    reward_source=random) is the control arm, and every other arm's gain is compared with
    its gain (executable reward of the final rollouts, arm − control, with an interval).
    Without a control the study says that no gain can be attributed to the reward;
  - what the evidence supports and what it does not.`,
		Example: "  svbench study ../shared/reference-data/real-runs/e1-hybrid ../shared/reference-data/real-runs/e1-llm_judge --out study-e1",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			judge, err := mf.judge(judgeModel, 4)
			if err != nil {
				return err
			}
			opts := report.Options{BootstrapReps: reps, Seed: seed}
			limit, err := tableLimit(maxTable)
			if err != nil {
				return err
			}
			dirs := args
			if controlDir != "" {
				dirs = append(slices.Clone(args), controlDir)
			}
			if len(dirs) < 2 {
				return usagef("study: want two or more runs (RUN_DIR RUN_DIR…, or RUN_DIR --control RUN_DIR)")
			}
			var runs []report.StudyRun
			envID, control := "", ""
			for k, dir := range dirs {
				if _, err := os.Stat(artifact.ResultsPath(dir)); err != nil {
					return usagef("study: %s: %v", dir, err)
				}
				in := ingest.Options{Rubric: rubric, MaxTableBytes: limit, Keep: report.Slim}
				tr, err := loadTrainerRunWith(ctx, dir, envName, in, opts)
				if err != nil {
					return fmt.Errorf("%s: %w", dir, err)
				}
				if envID == "" {
					envID = tr.Meta.Environment
				} else if tr.Meta.Environment != envID {
					return usagef("study: %s is a %s run and %s a %s run; a study compares runs of one environment", args[0], envID, dir, tr.Meta.Environment)
				}
				r, err := studyRun(dir, tr)
				if err != nil {
					return err
				}
				r.Control = (controlDir != "" && k == len(dirs)-1) || r.RewardSource == report.RandomSource
				if r.Control {
					if control != "" {
						return usagef("study: two random-reward control runs (%s and %s); give one", control, dir)
					}
					control = dir
				}
				if judge != nil {
					je, err := newEnv(envID, map[string]string{"reward_source": judgeutil.SourceJudge}, judge)
					if err != nil {
						return err
					}
					jrun, err := ingest.Load(ctx, artifact.ResultsPath(dir), je, ingest.Options{Rubric: "reference", MaxTableBytes: limit, Keep: report.Slim})
					if err != nil {
						return fmt.Errorf("%s: judge: %w", dir, err)
					}
					jrows := jrun.Rows
					r.Judge = make([]*float64, len(jrows))
					for i := range jrows {
						if v, ok := jrows[i].Components[judgeutil.Component]; ok && jrows[i].ScoreError == "" {
							r.Judge[i] = &v
						}
					}
				}
				runs = append(runs, r)
			}
			st, charts, md := report.BuildStudy(runs, opts.Reps(), opts.BootstrapSeed(nil))
			if err := writeStudy(out, st, charts, md); err != nil {
				return err
			}
			printStudy(cmd.OutOrStdout(), st)
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s, %s and %d chart(s) to %s\n", StudyJSON, StudyMarkdown, len(charts), out)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&out, "out", "study", "output directory")
	fs.StringVar(&envName, "env", "", "environment of the runs, when neither their run_manifest.json nor their rows name it (e1, network-logs, …)")
	fs.StringVar(&rubric, "rubric", "", "rubric the runs' rollouts are re-scored with (default reference, which reproduces the rewards the reference's runs recorded)")
	fs.StringVar(&controlDir, "control", "", "the random-reward control run: every other arm's gain is compared with its gain")
	maxTableFlag(fs, &maxTable)
	fs.IntVar(&reps, "bootstrap", 0, "bootstrap resamples for 95% CIs (0 = 1000, negative = none)")
	fs.Uint64Var(&seed, "seed", 0, "bootstrap seed (0 = 1)")
	fs.StringVar(&judgeModel, "judge-model", "", "also ask this judge about every run's rollouts (the environment's llm_judge reward source), served like --model")
	mf.registerEndpoint(fs, "judge's ", "4")
	return cmd
}

// writeStudy writes study.json, study.md and the charts into out.
func writeStudy(out string, st *report.Study, charts []report.Chart, md string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(st, "", "  ")
	if err != nil {
		return err
	}
	if err := artifact.WriteFileAtomic(filepath.Join(out, StudyJSON), append(b, '\n')); err != nil {
		return err
	}
	if err := artifact.WriteFileAtomic(filepath.Join(out, StudyMarkdown), []byte(md)); err != nil {
		return err
	}
	for _, c := range charts {
		if err := artifact.WriteFileAtomic(filepath.Join(out, c.Name+".svg"), c.SVG); err != nil {
			return err
		}
	}
	return nil
}

// printStudy is the study's summary on the terminal.
func printStudy(w io.Writer, st *report.Study) {
	for _, c := range st.Cross {
		fmt.Fprintf(w, "%-28s trained on %-10s executable %s   trained-on %s\n", c.Run, c.RewardSource, estLine(c.Executable), estLine(c.TrainedOn))
	}
	for _, g := range st.Gaps {
		fmt.Fprintf(w, "gap %s − %s: %+.4f [%.4f, %.4f] (executable reward)\n", g.Run, g.Baseline, g.Delta, g.Lo, g.Hi)
	}
	for _, q := range st.Quality {
		fmt.Fprintf(w, "reward quality %s: judge yes vs executable solved: precision %s, recall %s, %d false positive(s)", q.Run, q.Precision, q.Recall, q.FP)
		if len(q.FalsePositives) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(q.FalsePositives, ", "))
		}
		fmt.Fprintln(w)
	}
	if st.Control == "" {
		fmt.Fprintln(w, "no random-reward control (--control RUN_DIR): a gain cannot be attributed to the reward")
	}
	for _, g := range st.ControlGains {
		fmt.Fprintf(w, "gain %s − control %s: %+.4f [%.4f, %.4f] (executable reward)\n", g.Run, g.Control, g.Delta, g.Lo, g.Hi)
	}
	if len(st.Mismatched)+len(st.Identity) > 0 {
		fmt.Fprintf(w, "differences: budget %v, identity %v\n", st.Mismatched, st.Identity)
	}
}

func estLine(e *report.Estimate) string {
	if e == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.4f [%.4f, %.4f] (n=%d)", e.Mean, e.Lo, e.Hi, e.N)
}

// studyRun gathers one run's identity, budget and curve from the trainer's
// manifest and the hosted platform's record.
func studyRun(dir string, tr *trainerRun) (report.StudyRun, error) {
	r := report.StudyRun{Name: filepath.Base(filepath.Clean(dir)), RunID: tr.Meta.RunID, Rows: tr.Rows,
		Budget: map[string]string{}, Identity: map[string]string{}}
	if t, ok := tr.Report.Summary["training"].(report.TrainingSummary); ok {
		r.Training = &t
	}
	man, err := ingest.ReadManifest(dir)
	if err != nil {
		return r, err
	}
	hosted, err := ingest.ReadHostedRun(dir)
	if err != nil {
		return r, err
	}
	set := func(m map[string]string, k, v string) {
		if v != "" && m[k] == "" {
			m[k] = v
		}
	}
	itoa := func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p)
	}
	ftoa := func(p *float64) string {
		if p == nil {
			return ""
		}
		return strconv.FormatFloat(*p, 'g', -1, 64)
	}
	if hosted != nil {
		set(r.Budget, "model", hosted.BaseModel)
		set(r.Budget, "steps", itoa(hosted.MaxSteps))
		set(r.Budget, "batch_size", itoa(hosted.BatchSize))
		set(r.Budget, "rollouts_per_example", itoa(hosted.RolloutsPerExample))
		set(r.Budget, "max_tokens", itoa(hosted.MaxTokens))
		set(r.Budget, "lora_alpha", ftoa(hosted.LoraAlpha))
		set(r.Budget, "learning_rate", ftoa(hosted.LearningRate))
		if s := hosted.BufferConfig.Seed; s != nil {
			set(r.Budget, "seed", strconv.FormatInt(*s, 10))
		}
		if len(hosted.EvalConfig) > 0 {
			var ev struct {
				NumExamples        *int  `json:"num_examples"`
				RolloutsPerExample *int  `json:"rollouts_per_example"`
				Interval           *int  `json:"interval"`
				EvalBase           *bool `json:"eval_base_model"`
			}
			if json.Unmarshal(hosted.EvalConfig, &ev) == nil && ev.NumExamples != nil {
				set(r.Budget, "eval", fmt.Sprintf("%s examples × %s, every %s steps", itoa(ev.NumExamples), itoa(ev.RolloutsPerExample), itoa(ev.Interval)))
			}
		}
		if len(hosted.Environments) > 0 {
			e := hosted.Environments[0]
			set(r.Identity, "environment", e.ID)
			set(r.Identity, "environment_version", e.Version)
			args := map[string]any{}
			for k, v := range e.Args {
				if k == "reward_source" {
					if s, ok := v.(string); ok {
						r.RewardSource = s
					}
					continue
				}
				args[k] = v
			}
			if b, err := json.Marshal(args); err == nil && len(args) > 0 {
				set(r.Budget, "env_args", string(b))
			}
		}
	}
	if man != nil {
		set(r.Budget, "model", man.ModelID)
		set(r.Budget, "steps", itoa(nonZero(man.MaxSteps)))
		set(r.Budget, "rollouts_per_example", itoa(nonZero(man.RolloutsPerExample)))
		set(r.Budget, "max_tokens", itoa(nonZero(man.MaxTokens)))
		set(r.Budget, "seed", strconv.FormatUint(man.Seed, 10))
		if man.DatasetID != "" {
			set(r.Budget, "dataset", man.DatasetID+"@"+man.DatasetRevision)
		}
		var sp struct {
			Temperature *float64 `json:"temperature"`
		}
		if json.Unmarshal(man.SamplingParams, &sp) == nil {
			set(r.Budget, "temperature", ftoa(sp.Temperature))
		}
		set(r.Identity, "environment", man.EnvironmentID)
		set(r.Identity, "environment_version", man.EnvironmentVersion)
		set(r.Identity, "reward_config", man.RewardConfigID)
		if r.RewardSource == "" {
			r.RewardSource = man.RewardSource
		}
	}
	if r.RewardSource == "" {
		r.RewardSource = rewardSourceFromRows(tr.Rows)
	}
	set(r.Identity, "reward_source", r.RewardSource)
	set(r.Budget, "model", tr.Meta.Model)
	return r, nil
}

func nonZero(v int) *int {
	if v == 0 {
		return nil
	}
	return &v
}

// rewardSourceFromRows infers the reward source from the recorded
// components: the judge's alone is llm_judge, with others hybrid.
func rewardSourceFromRows(rows []artifact.Result) string {
	for i := range rows {
		tr := rows[i].Trainer
		if tr == nil || len(tr.Components) == 0 {
			continue
		}
		if _, ok := tr.Components[judgeutil.Component]; ok {
			if len(tr.Components) == 1 {
				return judgeutil.SourceJudge
			}
			return judgeutil.SourceHybrid
		}
		return judgeutil.SourceExecutable
	}
	return "unknown"
}
