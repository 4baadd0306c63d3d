package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/base/atomicfile"
	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/ingest"
	"github.com/svbench/svbench/sft"
)

func newSFTCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "sft", Short: "Supervised fine-tuning data from verified rollouts"}
	cmd.AddCommand(newSFTExportCmd())
	return cmd
}

func newSFTExportCmd() *cobra.Command {
	var (
		out, envName         string
		minReward            float64
		bestOfK              int
		solvedOnly, dropOver bool
		evalSets, evalSplits []string
	)
	cmd := &cobra.Command{
		Use:   "export RUN [RUN...]",
		Short: "Write verified rollouts as chat JSONL (OpenAI messages, tool calls included) with provenance",
		Long: `Reads svbench runs (or a trainer's rollouts, with their recorded rewards) and writes
one conversation per kept rollout: {"messages": [...], "provenance": {run, model, rubric,
example, rollout, reward, components, solved, prompt hash}}. Rollouts that errored, fall
below --min-reward, are unsolved (--solved-only) or have no answer are skipped; --best-of-k
keeps the K highest-reward rollouts per prompt. Thinking text (reasoning_content) is not
exported. Prompts that also occur in an evaluation set are refused, or dropped with
--drop-overlap, so a model is never trained on its test: the environment's embedded test
split always counts as one (--eval-split, default test; "none" turns the check off) and
--eval-set adds dataset JSONL files of the same environment. Prompts are compared
lower-cased with spacing collapsed.`,
		Example: "  svbench sft export outputs/evals/config-verification--m/RUN --solved-only --best-of-k 1 --eval-set data/e2/test.jsonl --out sft.jsonl",
		Args:    cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usagef("--out is required (the JSONL to write)")
			}
			if bestOfK < 0 {
				return usagef("--best-of-k %d: want 0 (all) or more", bestOfK)
			}
			var cands []sft.Candidate
			for _, a := range args {
				c, err := loadCandidates(a)
				if err != nil {
					return err
				}
				cands = append(cands, c...)
				if envName == "" {
					for _, x := range c {
						if x.Meta != nil && x.Meta.Environment != "" {
							envName = x.Meta.Environment
							break
						}
					}
				}
			}
			var st sft.Stats
			rows := sft.Select(cands, sft.Options{MinReward: minReward, BestOfK: bestOfK, SolvedOnly: solvedOnly}, &st)
			splits, err := sftEvalSplits(evalSplits)
			if err != nil {
				return err
			}
			if envName == "" && len(evalSets) > 0 {
				return usagef("--eval-set needs the environment to read it: pass --env")
			}
			if envName == "" && len(splits) > 0 {
				// Trainer rollouts without a manifest name no environment.
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: the runs name no environment, so their prompts were not checked against its embedded %s split; pass --env\n", strings.Join(splits, ", "))
				splits = nil
			}
			if len(evalSets)+len(splits) > 0 {
				keys, err := evalPromptKeys(cmd.Context(), envName, evalSets, splits)
				if err != nil {
					return err
				}
				kept, over := sft.Overlapping(rows, keys)
				st.Overlap = len(over)
				if len(over) > 0 && !dropOver {
					return fmt.Errorf("%d exported conversations have prompts that occur in the evaluation set (%s; first: %s, rollout %d, from %s); drop them with --drop-overlap, or export runs of the train split (svbench eval --split train)",
						len(over), sftEvalSources(splits, evalSets), over[0].Provenance.ExampleID, over[0].Provenance.Rollout, over[0].Provenance.Source)
				}
				rows = kept
				st.Kept = len(rows)
			}
			err = atomicfile.Write(out, func(w io.Writer) error {
				enc := json.NewEncoder(w)
				for i := range rows {
					if err := enc.Encode(&rows[i]); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s; wrote %s\n", st.Describe(), out)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&out, "out", "", "output JSONL (required)")
	fs.StringVar(&envName, "env", "", "environment of the runs and of --eval-set rows (default: from the runs' metadata)")
	fs.Float64Var(&minReward, "min-reward", 0, "keep rollouts with at least this reward")
	fs.IntVar(&bestOfK, "best-of-k", 0, "keep at most K rollouts per prompt, highest reward first (0 = all)")
	fs.BoolVar(&solvedOnly, "solved-only", false, "keep only rollouts the environment judged solved")
	fs.StringArrayVar(&evalSets, "eval-set", nil, "evaluation dataset JSONL whose prompts must not be exported (repeatable)")
	fs.StringArrayVar(&evalSplits, "eval-split", []string{env.SplitTest}, "the environment's embedded split whose prompts must not be exported (repeatable; none: no split)")
	fs.BoolVar(&dropOver, "drop-overlap", false, "drop conversations whose prompt is in an evaluation set instead of refusing")
	return cmd
}

// loadCandidates reads an svbench run or a trainer's rollouts.
func loadCandidates(path string) ([]sft.Candidate, error) {
	res := artifact.ResultsPath(path)
	if _, err := os.Stat(res); err != nil {
		return nil, usagef("%s: %v", path, err)
	}
	trainer, err := ingest.IsTrainerFile(res)
	if err != nil {
		return nil, err
	}
	var out []sft.Candidate
	if !trainer {
		meta, _ := artifact.ReadMetadata(filepath.Dir(res))
		err := artifact.EachResult(res, func(r *artifact.Result) error {
			cp := *r
			out = append(out, sft.Candidate{Result: &cp, Meta: meta, Source: res})
			return nil
		})
		return out, err
	}
	var meta *artifact.Metadata
	if man, err := ingest.ReadManifest(filepath.Dir(res)); err == nil && man != nil {
		meta = ingest.ManifestMetadata(man, man.EnvironmentID, "recorded")
	}
	f, err := os.Open(res)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	err = artifact.EachRow(f, res, artifact.ReadOptions{MaxRowBytes: dataset.MaxLine}, ingest.Decode, func(line int, r *ingest.Row) error {
		tr := r.Trainer
		ar := &artifact.Result{Index: line - 1, Prompt: r.Prompt, Completion: r.Completion, Components: tr.Components, RunID: tr.RunID, Trainer: &tr, Rubric: "recorded"}
		if tr.Reward != nil {
			ar.Reward = *tr.Reward
		} else {
			ar.ScoreError = "no recorded reward"
		}
		if n, err := strconv.Atoi(tr.SampleID); err == nil {
			ar.Rollout = n
		}
		ar.ExampleID = tr.ProblemID
		out = append(out, sft.Candidate{Result: ar, Meta: meta, Source: res})
		return nil
	})
	return out, err
}

// sftEvalSplits checks --eval-split: split names, or none alone.
func sftEvalSplits(xs []string) ([]string, error) {
	var out []string
	for _, x := range xs {
		if x == "none" || x == "" {
			if len(xs) > 1 {
				return nil, usagef("--eval-split none turns the check off; it cannot be combined with %q", xs)
			}
			return nil, nil
		}
		if err := env.CheckSplit(x); err != nil {
			return nil, usagef("--eval-split: %v", err)
		}
		out = append(out, x)
	}
	return out, nil
}

func sftEvalSources(splits, files []string) string {
	var xs []string
	for _, s := range splits {
		xs = append(xs, "embedded "+s+" split")
	}
	for _, f := range files {
		xs = append(xs, filepath.Base(f))
	}
	return strings.Join(xs, ", ")
}

// evalPromptKeys reads evaluation datasets (files and the environment's
// embedded splits) with the environment's parser.
func evalPromptKeys(ctx context.Context, envName string, paths, splits []string) (map[string]bool, error) {
	e, err := newEnv(envName, nil, nil)
	if err != nil {
		return nil, err
	}
	keys := map[string]bool{}
	for _, s := range splits {
		ds, err := env.LoadDataset(ctx, e, "", s)
		if err != nil {
			return nil, fmt.Errorf("--eval-split %s: %w", s, err)
		}
		for _, ex := range ds.Examples {
			keys[sft.PromptKey(ex.Prompt)] = true
		}
	}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, usagef("--eval-set: %v", err)
		}
		err = dataset.EachLine(f, p, func(_ int, raw []byte) error {
			ex, err := e.ParseExample(raw)
			if err != nil {
				return err
			}
			keys[sft.PromptKey(ex.Prompt)] = true
			return nil
		})
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("--eval-set: %w", err)
		}
	}
	return keys, nil
}
