package rewardsagree

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/env/judgeutil"
)

// Output file names (written to the run directory unless told otherwise).
const (
	ReportJSON        = "rewards_agree.json"
	ReportMarkdown    = "rewards_agree.md"
	DisagreementsFile = "rewards_disagreements.jsonl"
)

// StudyOptions configure a study of one run.
type StudyOptions struct {
	Registry *env.Registry
	// Env overrides the run's environment (rarely needed).
	Env string
	// Judge answers the judge's questions; JudgeModel names it (the cache
	// key). Judge is wrapped in the run's cache.
	Judge      env.Model
	JudgeModel string
	// CachePath defaults to judge_cache.jsonl in the run directory.
	CachePath string
	// OutDir defaults to the run directory.
	OutDir          string
	Workers         int
	Limit           int
	AllowIncomplete bool
	Options
}

// Study runs the whole study on a run directory and writes the JSON and
// markdown reports and the disagreements file.
func Study(ctx context.Context, dir string, o StudyOptions) (*Report, error) {
	run, err := Load(dir)
	if err != nil {
		return nil, err
	}
	if run.Meta.Status != "" && run.Meta.Status != artifact.StatusCompleted && !o.AllowIncomplete {
		return nil, fmt.Errorf("run %s is %s, not completed: finish it (svbench eval --resume) or pass --allow-incomplete for an exploratory study", dir, run.Meta.Status)
	}
	name := cmp.Or(o.Env, run.Meta.Environment)
	if name == "" {
		return nil, fmt.Errorf("run %s: metadata names no environment; pass --env", dir)
	}
	if o.Registry == nil {
		o.Registry = env.Default
	}
	if o.JudgeModel == "" || o.Judge == nil {
		return nil, fmt.Errorf("the study needs a judge model: pass --judge-model")
	}
	params := map[string]string{}
	for k, v := range run.Meta.Params {
		if k != "reward_source" {
			params[k] = v
		}
	}
	cachePath := cmp.Or(o.CachePath, filepath.Join(dir, CacheFile))
	cache, err := OpenCache(cachePath, o.JudgeModel, o.Judge)
	if err != nil {
		return nil, err
	}
	defer cache.Close()
	envs, err := Environments(o.Registry, name, params, cache)
	if err != nil {
		return nil, err
	}
	results := run.Results
	if o.Limit > 0 && len(results) > o.Limit {
		results = results[:o.Limit]
	}
	if len(results) == 0 {
		return nil, fmt.Errorf("run %s has no rows", dir)
	}
	rows, modelErrors, err := Rescore(ctx, envs, results, run.Meta.Rubric, cmp.Or(o.Workers, 4))
	if err != nil {
		return nil, err
	}
	rep := Analyse(run, rows, modelErrors, o.Options)
	rep.JudgeModel = o.JudgeModel
	rep.Environment = envs[judgeutil.SourceExecutable].Info().ID
	rep.Cost = cache.Stats()
	out := cmp.Or(o.OutDir, dir)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return nil, err
	}
	rep.DisagreementsFile = filepath.Join(out, DisagreementsFile)
	if err := WriteDisagreements(rep.DisagreementsFile, rows); err != nil {
		return nil, err
	}
	if err := artifact.WriteJSONAtomic(filepath.Join(out, ReportJSON), rep); err != nil {
		return nil, err
	}
	if err := artifact.WriteFileAtomic(filepath.Join(out, ReportMarkdown), []byte(Markdown(rep))); err != nil {
		return nil, err
	}
	return rep, nil
}

// maxTextShown bounds the answer text a disagreement line quotes.
const maxTextShown = 4 << 10

// Disagreement is one line of the disagreements file.
type Disagreement struct {
	Kind       string   `json:"kind"`
	ExampleID  string   `json:"example_id"`
	Rollout    int      `json:"rollout"`
	Gold       string   `json:"gold,omitempty"`
	Predicted  string   `json:"predicted,omitempty"`
	FinalText  string   `json:"final_text"`
	Executable *Verdict `json:"executable"`
	Judge      *Verdict `json:"llm_judge"`
	Hybrid     *Verdict `json:"hybrid"`
}

// Disagreement kinds.
const (
	JudgeYesVerifierNo = "judge_yes_verifier_unsolved"
	JudgeNoVerifierYes = "judge_no_verifier_solved"
)

// Disagreements lists the scored rows where the judge's yes/no differs
// from the environment's Solved, judge-only passes first (the ones a judge
// reward would pay for and the verifier would not), then by example.
func Disagreements(rows []Row) []Disagreement {
	var out []Disagreement
	for i := range rows {
		r := &rows[i]
		if !r.scored() {
			continue
		}
		solved := r.Sources[judgeutil.SourceExecutable].Solved
		yes := judgeYes(r.Sources[judgeutil.SourceJudge]) == 1
		if solved == yes {
			continue
		}
		kind := JudgeYesVerifierNo
		if solved {
			kind = JudgeNoVerifierYes
		}
		out = append(out, Disagreement{Kind: kind, ExampleID: r.ExampleID, Rollout: r.Rollout, Gold: r.Gold, Predicted: r.Predicted,
			FinalText: judgeutil.Truncate(r.FinalText, maxTextShown), Executable: r.Sources[judgeutil.SourceExecutable],
			Judge: r.Sources[judgeutil.SourceJudge], Hybrid: r.Sources[judgeutil.SourceHybrid]})
	}
	slices.SortStableFunc(out, func(a, b Disagreement) int {
		return cmp.Or(-cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.ExampleID, b.ExampleID), cmp.Compare(a.Rollout, b.Rollout))
	})
	return out
}

// WriteDisagreements writes Disagreements(rows) as JSONL.
func WriteDisagreements(path string, rows []Row) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".disagreements-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer os.Remove(f.Name())
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, d := range Disagreements(rows) {
		if err := enc.Encode(d); err != nil {
			f.Close()
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Rename(f.Name(), path)
}
