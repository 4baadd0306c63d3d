package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/analysis/compare"
	"github.com/svbench/svbench/artifact"
)

type compareFlags struct {
	out                          string
	reps                         int
	seed                         uint64
	allowUnpaired, allowMismatch bool
}

func (f *compareFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.IntVar(&f.reps, "bootstrap", compare.DefaultReps, "bootstrap and permutation resamples")
	fs.Uint64Var(&f.seed, "seed", compare.DefaultSeed, "resampling seed")
	fs.BoolVar(&f.allowUnpaired, "allow-unpaired", false, "compare the shared pairs when some rows have no partner")
	fs.BoolVar(&f.allowMismatch, "allow-mismatch", false, "compare runs whose budgets or settings differ (the report says so)")
}

// options are the flags as compare.Options; the dashboard's defaults are
// the zero Options, which these flags' defaults equal.
func (f *compareFlags) options() compare.Options {
	return compare.Options{Reps: f.reps, Seed: f.seed, AllowUnpaired: f.allowUnpaired, AllowMismatch: f.allowMismatch}
}

func newCompareCmd() *cobra.Command {
	var f compareFlags
	cmd := &cobra.Command{
		Use:   "compare BASELINE CANDIDATE [CANDIDATE...]",
		Short: "Paired comparison of runs on the same examples: differences, CIs, p-values, effect sizes",
		Long: `Pairs each candidate's rollouts with the baseline's by (example, rollout) and compares
reward, solved and every reward component: mean difference with a paired bootstrap 95%
interval, a paired p-value (sign-flip permutation; paired t beyond a size budget), Cohen's
d_z, and McNemar's exact test for pass/fail quantities; then the same per slice
(difficulty, scenario, CWE, fixture type, … when rows carry them) with at least 10 pairs,
p-values Holm-adjusted over the slices. Runs whose budgets or
settings differ (dataset revision, rubric, rollouts, max tokens, temperature, top-p, extra
request body, max turns, tool budget, parameters, system prompt) are refused with the difference named, as are runs not fully
paired. Writes compare.md and compare.json (--out, default the current directory).`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			base, err := compare.Load(args[0])
			if err != nil {
				return usageError(err)
			}
			var all []*compare.Comparison
			var md strings.Builder
			md.WriteString("# svbench compare\n\n")
			for _, p := range args[1:] {
				cand, err := compare.Load(p)
				if err != nil {
					return usageError(err)
				}
				c, err := compare.Runs(base, cand, f.options())
				if err != nil {
					return err
				}
				all = append(all, c)
				md.WriteString(c.Markdown())
				md.WriteString("\n")
			}
			if err := writeOutputs(f.out, "compare", all, md.String()); err != nil {
				return err
			}
			fmt.Fprint(cmd.OutOrStdout(), md.String())
			// The default --out is wherever the user stands: say so where
			// the markdown on stdout (often piped) is not disturbed.
			where, _ := filepath.Abs(f.out)
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote compare.md and compare.json to %s\n", where)
			return nil
		},
	}
	f.register(cmd)
	cmd.Flags().StringVar(&f.out, "out", ".", "directory for compare.md and compare.json")
	return cmd
}

func newGateCmd() *cobra.Command {
	var (
		f                 compareFlags
		baseline, cand    string
		metricsFlag, drop string
		strict            bool
	)
	cmd := &cobra.Command{
		Use:   "gate --baseline RUN --candidate RUN",
		Short: "Regression gate for CI: exit 1 when a core metric drops beyond its limit",
		Long: `Compares the candidate run with the baseline (paired, as svbench compare) on the
environment's core metrics (recorded in metadata.json; --metrics overrides) and fails when
one drops by more than --max-drop (relative, default 3%; per metric as name=0.05) and the
paired 95% interval of the difference excludes 0. A drop beyond the limit that the data
cannot tell from noise is reported as "noise" and does not fail unless --strict. Prints
markdown for the CI log and a last line in GitHub Actions' ::error / ::notice form.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if baseline == "" || cand == "" {
				return usagef("gate needs --baseline RUN and --candidate RUN")
			}
			a, err := compare.Load(baseline)
			if err != nil {
				return usageError(err)
			}
			b, err := compare.Load(cand)
			if err != nil {
				return usageError(err)
			}
			c, err := compare.Runs(a, b, f.options())
			if err != nil {
				return err
			}
			rules, err := gateRules(metricsFlag, drop, a.Meta)
			if err != nil {
				return err
			}
			results, ok := compare.Gate(c, rules, strict)
			var md strings.Builder
			md.WriteString("# svbench gate\n\n| metric | baseline | candidate | relative drop | limit | 95% CI excludes 0 | verdict |\n|---|---|---|---|---|---|---|\n")
			var failed, noise []string
			for _, r := range results {
				fmt.Fprintf(&md, "| %s | %.4f | %.4f | %+.2f%% | %.2f%% | %v | %s |\n", r.Metric, r.Baseline, r.Candidate, 100*r.RelDrop, 100*r.MaxDrop, r.Significant, r.Verdict)
				switch r.Verdict {
				case "fail", "missing":
					failed = append(failed, fmt.Sprintf("%s %s (%+.2f%%)", r.Metric, r.Verdict, 100*r.RelDrop))
				case "noise":
					noise = append(noise, r.Metric)
				}
			}
			if err := writeOutputs(f.out, "gate", map[string]any{"pass": ok, "results": results, "comparison": c}, md.String()); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			fmt.Fprint(w, md.String())
			switch {
			case !ok:
				fmt.Fprintf(w, "::error title=svbench gate::regression: %s\n", strings.Join(failed, "; "))
				return exitError{code: ExitFindings}
			case len(noise) > 0:
				fmt.Fprintf(w, "::notice title=svbench gate::passed; drops within noise on %s\n", strings.Join(noise, ", "))
			default:
				fmt.Fprintf(w, "::notice title=svbench gate::passed (%d metrics)\n", len(results))
			}
			return nil
		},
	}
	f.register(cmd)
	fs := cmd.Flags()
	fs.StringVar(&baseline, "baseline", "", "baseline run directory")
	fs.StringVar(&cand, "candidate", "", "candidate run directory")
	fs.StringVar(&metricsFlag, "metrics", "", "metrics to gate, comma-separated (default: the environment's core metrics)")
	fs.StringVar(&drop, "max-drop", "0.03", "allowed relative drop: one value, or name=value,… per metric")
	fs.BoolVar(&strict, "strict", false, "fail on any drop beyond the limit, significant or not")
	fs.StringVar(&f.out, "out", ".", "directory for gate.md and gate.json")
	return cmd
}

// gateRules builds the rules from the flags and the run's core metrics.
func gateRules(metricsFlag, drop string, meta *artifact.Metadata) ([]compare.GateRule, error) {
	var names []string
	switch {
	case metricsFlag != "":
		names = splitList(metricsFlag)
	case meta != nil && len(meta.CoreMetrics) > 0:
		names = meta.CoreMetrics
	default:
		names = []string{"reward"}
	}
	def, per := 0.03, map[string]float64{}
	for _, part := range splitList(drop) {
		k, v, isPer := strings.Cut(part, "=")
		if !isPer {
			v = k
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x < 0 || x > 1 {
			return nil, usagef("--max-drop %q: want a fraction in [0, 1] such as 0.03, or name=0.05", part)
		}
		if isPer {
			per[k] = x
		} else {
			def = x
		}
	}
	var rules []compare.GateRule
	for _, n := range names {
		d := def
		if x, ok := per[n]; ok {
			d = x
		}
		rules = append(rules, compare.GateRule{Metric: n, MaxDrop: d})
	}
	return rules, nil
}

func writeOutputs(dir, name string, v any, md string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := artifact.WriteFileAtomic(filepath.Join(dir, name+".json"), append(b, '\n')); err != nil {
		return err
	}
	return artifact.WriteFileAtomic(filepath.Join(dir, name+".md"), []byte(md))
}
