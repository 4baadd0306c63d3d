package cli

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/runner"
)

// An eval set is a TOML file of [[eval]] entries, the shape prime-rl and
// verifiers configs use:
//
//	out = "outputs"               # optional
//	[[eval]]
//	env = "e1"                    # or env_id
//	models = ["builtin:features", "gpt-4.1-mini"]   # or model = "…"
//	n = 50                        # or num_examples
//	r = 2                         # or rollouts, rollouts_per_example
//	rubric = "reference"
//	dataset = "data/e1.jsonl"
//	params = { tool_budget = 4 }  # or env_args
//	temperature = 0.7
//	top_p = 0.95
//	max_tokens = 1024
//	seed = 7
//	concurrency = 8
//
// Each (entry, model) becomes one run with a run id derived from the file
// name and the entry's position, so running the same set again skips the
// runs that completed, resumes the ones that stopped and starts the rest.

type evalSetEntry struct {
	Env         string
	Models      []string
	N, R        int
	Rubric      string
	Dataset     string
	Params      map[string]string
	Temperature *float64
	TopP        *float64
	MaxTokens   int
	Seed        *int64
	Concurrency int
	// Config is Params decoded by the environment's registry, once, when
	// the file is read: the typed configuration every run of the entry
	// takes.
	Config env.Configured
}

// sampling is what the entry sends the model: its own settings, with the
// set's -S/--sampling-args (extra) merged in as eval merges them.
func (e evalSetEntry) sampling(extra string) (llm.Sampling, error) {
	s := llm.Sampling{Temperature: e.Temperature, TopP: e.TopP, MaxTokens: e.MaxTokens, Seed: e.Seed}
	if extra != "" {
		if err := json.Unmarshal([]byte(extra), &s.Extra); err != nil {
			return s, usagef("-S/--sampling-args: not a JSON object: %v", err)
		}
	}
	return s, nil
}

// evalSetKeys are the accepted keys of an [[eval]] entry with their
// synonyms.
var evalSetKeys = map[string]string{
	"env": "env", "env_id": "env",
	"models": "models", "model": "models",
	"n": "n", "num_examples": "n",
	"r": "r", "rollouts": "r", "rollouts_per_example": "r",
	"rubric": "rubric", "dataset": "dataset",
	"params": "params", "env_args": "params",
	"temperature": "temperature", "top_p": "top_p", "max_tokens": "max_tokens",
	"seed": "seed", "concurrency": "concurrency",
}

func loadEvalSet(path string) (out string, entries []evalSetEntry, err error) {
	var raw map[string]any
	if _, err := toml.DecodeFile(path, &raw); err != nil {
		return "", nil, usagef("--config %s: %v", path, err)
	}
	for k, v := range raw {
		switch k {
		case "out":
			s, ok := v.(string)
			if !ok {
				return "", nil, usagef("--config %s: out: want a string", path)
			}
			out = s
		case "eval":
		default:
			return "", nil, usagef("--config %s: unknown top-level key %q (want out and [[eval]] entries)", path, k)
		}
	}
	list, ok := raw["eval"].([]map[string]any)
	if !ok || len(list) == 0 {
		return "", nil, usagef("--config %s: no [[eval]] entries", path)
	}
	for i, m := range list {
		e, err := parseEvalSetEntry(m)
		if err != nil {
			return "", nil, usagef("--config %s: [[eval]] entry %d: %v", path, i+1, err)
		}
		entries = append(entries, e)
	}
	return out, entries, nil
}

func parseEvalSetEntry(m map[string]any) (evalSetEntry, error) {
	var e evalSetEntry
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range evalSetKeys {
			if !yield(k) {
				return
			}
		}
	})
	rKey := "r"
	for k, v := range m {
		canon, ok := evalSetKeys[k]
		if !ok {
			msg := fmt.Sprintf("unknown key %q", k)
			if s := env.Suggest(k, keys); s != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			}
			return e, fmt.Errorf("%s; keys: %s", msg, strings.Join(keys, ", "))
		}
		var err error
		switch canon {
		case "env":
			e.Env, err = tomlString(k, v)
		case "models":
			switch x := v.(type) {
			case string:
				e.Models = splitList(x)
			case []any:
				for _, it := range x {
					s, serr := tomlString(k, it)
					if serr != nil {
						return e, serr
					}
					e.Models = append(e.Models, s)
				}
			default:
				err = fmt.Errorf("%s: want a string or a list of strings", k)
			}
		case "n":
			e.N, err = tomlInt(k, v)
		case "r":
			rKey = k
			e.R, err = tomlInt(k, v)
		case "rubric":
			e.Rubric, err = tomlString(k, v)
		case "dataset":
			e.Dataset, err = tomlString(k, v)
		case "params":
			tbl, ok := v.(map[string]any)
			if !ok {
				return e, fmt.Errorf("%s: want a table such as { tool_budget = 4 }", k)
			}
			e.Params = map[string]string{}
			for pk, pv := range tbl {
				switch x := pv.(type) {
				case string:
					e.Params[pk] = x
				case int64, float64, bool:
					e.Params[pk] = fmt.Sprint(x)
				default:
					return e, fmt.Errorf("%s.%s: want a string, number or boolean", k, pk)
				}
			}
		case "temperature", "top_p":
			f, ok := v.(float64)
			if i, isInt := v.(int64); isInt {
				f, ok = float64(i), true
			}
			if !ok {
				return e, fmt.Errorf("%s: want a number", k)
			}
			if canon == "temperature" {
				e.Temperature = &f
			} else {
				e.TopP = &f
			}
		case "max_tokens":
			e.MaxTokens, err = tomlInt(k, v)
		case "seed":
			var s int
			s, err = tomlInt(k, v)
			s64 := int64(s)
			e.Seed = &s64
		case "concurrency":
			e.Concurrency, err = tomlInt(k, v)
		}
		if err != nil {
			return e, err
		}
	}
	if e.Env == "" {
		return e, fmt.Errorf("env is required")
	}
	// Decoded here, by the registry, so a misspelt parameter or a value out
	// of range in any entry stops the set before its first run.
	var err error
	if e.Config, err = env.Default.Configure(e.Env, e.Params); err != nil {
		return e, err
	}
	if err := checkSampling(llm.Sampling{Temperature: e.Temperature, TopP: e.TopP, MaxTokens: e.MaxTokens}); err != nil {
		return e, err
	}
	if len(e.Models) == 0 {
		return e, fmt.Errorf("models is required")
	}
	if e.N < 0 || e.R < 0 || e.MaxTokens < 0 || e.Concurrency < 0 {
		return e, fmt.Errorf("n, r, max_tokens and concurrency cannot be negative")
	}
	// The dataset's size is known only when the run starts (where eval
	// checks the plan again); what the entry itself asks for is checked
	// here, so the error names the key the file used.
	if _, err := runner.Episodes(max(e.N, 1), e.R); err != nil {
		return e, fmt.Errorf("%s = %d: %w", rKey, e.R, err)
	}
	return e, nil
}

func tomlString(k string, v any) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("%s: want a string", k)
	}
	return s, nil
}

func tomlInt(k string, v any) (int, error) {
	i, ok := v.(int64)
	if !ok {
		return 0, fmt.Errorf("%s: want an integer", k)
	}
	return int(i), nil
}

// resumableFlags may accompany --resume: where the model is served, not
// what the numbers mean.
var resumableFlags = []string{"base-url", "api-key-env", "endpoints", "header", "timeout", "max-retries", "max-in-flight", "progress", "verbose", "cache", "cache-dir", "cache-ttl", "cache-max-mb"}

// evalSetStatus is one run of the set, as the status file records it.
type evalSetStatus struct {
	Entry  int    `json:"entry"`
	Env    string `json:"env"`
	Model  string `json:"model"`
	RunID  string `json:"run_id"`
	Dir    string `json:"dir,omitempty"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// runEvalSet runs (or continues) every run of an eval set.
func runEvalSet(cmd *cobra.Command, f *evalFlags) error {
	setOut, entries, err := loadEvalSet(f.config)
	if err != nil {
		return err
	}
	out := f.out
	if !cmd.Flags().Changed("out") && setOut != "" {
		out = setOut
	}
	name := strings.TrimSuffix(filepath.Base(f.config), filepath.Ext(f.config))
	setID := sanitizeRunID(name)
	resumePass := changedFlags(cmd.Flags(), func(n string) bool { return slices.Contains(resumableFlags, n) })
	stderr := cmd.ErrOrStderr()
	var statuses []evalSetStatus
	failed := 0
	for i, e := range entries {
		id, _ := env.Default.Resolve(e.Env)
		for _, model := range e.Models {
			st := evalSetStatus{Entry: i + 1, Env: id, Model: model, RunID: fmt.Sprintf("%s-%02d", setID, i+1)}
			dir, meta := findSetRun(out, id, model, st.RunID)
			if meta != nil {
				// A changed entry is a different run: never reuse (or
				// resume) one made with other settings. The entry's new
				// settings get a run id of their own, derived from them, so
				// rerunning the set finds that run again.
				diffs, err := evalSetDiffs(e, id, model, st.RunID, out, dir)
				if err != nil {
					return fmt.Errorf("eval set %s [%d] %s on %s: comparing with %s: %w", name, i+1, model, id, dir, err)
				}
				if len(diffs) > 0 {
					old := dir
					st.RunID = st.RunID + "-" + entryHash(e, id, model)
					dir, meta = findSetRun(out, id, model, st.RunID)
					fmt.Fprintf(stderr, "warning: eval set %s [%d] %s on %s: the entry's settings differ from run %s:\n  %s\n  so it is a different run: %s\n",
						name, i+1, model, id, old, strings.Join(diffs, "\n  "), describeNewRun(st.RunID, meta))
					if meta != nil {
						if diffs, err = evalSetDiffs(e, id, model, st.RunID, out, dir); err != nil || len(diffs) > 0 {
							return fmt.Errorf("eval set %s [%d]: run %s does not match the entry (%s); move it away and rerun", name, i+1, dir, strings.Join(diffs, "; "))
						}
					}
				}
			}
			var runErr error
			switch {
			case meta != nil && meta.Status == artifact.StatusCompleted:
				st.Dir, st.Status = dir, "skipped: completed earlier"
				fmt.Fprintf(stderr, "eval set %s [%d] %s on %s: completed earlier (%s)\n", name, i+1, model, id, dir)
				statuses = append(statuses, st)
				if err := writeEvalSetStatus(out, setID, statuses); err != nil {
					return err
				}
				continue
			case meta != nil:
				// Everything comes from the run's own metadata, as for
				// `svbench eval --resume DIR`.
				fmt.Fprintf(stderr, "eval set %s [%d] %s on %s: resuming %s\n", name, i+1, model, id, dir)
				root := newRootCmd(cmd.OutOrStdout(), stderr)
				root.SetArgs(append([]string{"eval", "--resume", dir}, resumePass...))
				runErr = root.ExecuteContext(cmd.Context())
			default:
				fmt.Fprintf(stderr, "eval set %s [%d] %s on %s\n", name, i+1, model, id)
				var rf *evalFlags
				if rf, err = entryFlags(cmd, f, e, id, model, st.RunID, out); err == nil {
					runErr = runEval(cmd, rf)
				} else {
					runErr = err
				}
			}
			st.Dir, _ = findSetRunDir(out, id, model, st.RunID)
			st.Status = "completed"
			if runErr != nil {
				st.Status, st.Error = "stopped", runErr.Error()
				failed++
				if cmd.Context().Err() != nil {
					statuses = append(statuses, st)
					_ = writeEvalSetStatus(out, setID, statuses)
					return runErr
				}
			}
			statuses = append(statuses, st)
			if err := writeEvalSetStatus(out, setID, statuses); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(cmd.OutOrStdout(), "\neval set %s: %d run(s), status in %s\n", name, len(statuses), filepath.Join(out, "eval-sets", setID+".json"))
	for _, s := range statuses {
		fmt.Fprintf(cmd.OutOrStdout(), "  [%d] %-28s %-20s %-26s %s\n", s.Entry, s.Model, s.Env, s.Status, s.Dir)
	}
	if failed > 0 {
		return fmt.Errorf("%d run(s) of the set did not complete; run the same command again to resume them", failed)
	}
	return nil
}

// entryFlags are the flags of one new run of entry e: the set's own
// (where the model is served, caches, the split, …, as on its command
// line), with what the entry decides in their place, its configuration
// and sampling handed over as decoded values. The environments' shorthand
// flags on the set's command line (--policy-pack, …) apply to the entry's
// parameters as eval applies them; a concurrency on the command line wins
// over the entry's, as before.
func entryFlags(cmd *cobra.Command, f *evalFlags, e evalSetEntry, id, model, runID, out string) (*evalFlags, error) {
	rf := *f
	rf.config, rf.resume = "", ""
	rf.envName, rf.models, rf.runID, rf.out = id, model, runID, out
	rf.n, rf.rollouts, rf.rubric, rf.datasetPath = e.N, max(e.R, 1), e.Rubric, e.Dataset
	if e.Concurrency > 0 && !cmd.Flags().Changed("concurrency") {
		rf.concurrency = e.Concurrency
	}
	conf := e.Config
	if params, err := f.envFlags.apply(id, e.Params); err != nil {
		return nil, err
	} else if !maps.Equal(params, e.Params) {
		if conf, err = configureEnv(id, params); err != nil {
			return nil, err
		}
	}
	sampling, err := e.sampling(f.model.extra)
	if err != nil {
		return nil, err
	}
	rf.entry = &entryRun{conf: conf, sampling: sampling}
	return &rf, nil
}

// entryArgs is entry e as eval's flags: the text its run id's hash is
// taken over (entryHash) and what evalSetDiffs compares with an earlier
// run as --resume would.
func entryArgs(e evalSetEntry, id, model, runID, out string) []string {
	args := []string{"eval", "--env", id, "-m", model, "--run-id", runID, "--out", out}
	if e.N > 0 {
		args = append(args, "-n", strconv.Itoa(e.N))
	}
	if e.R > 0 {
		args = append(args, "-r", strconv.Itoa(e.R))
	}
	if e.Rubric != "" {
		args = append(args, "--rubric", e.Rubric)
	}
	if e.Dataset != "" {
		args = append(args, "--dataset", e.Dataset)
	}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range e.Params {
			if !yield(k) {
				return
			}
		}
	}) {
		args = append(args, "--param", k+"="+e.Params[k])
	}
	if e.Temperature != nil {
		args = append(args, "-T", strconv.FormatFloat(*e.Temperature, 'g', -1, 64))
	}
	if e.TopP != nil {
		args = append(args, "--top-p", strconv.FormatFloat(*e.TopP, 'g', -1, 64))
	}
	if e.MaxTokens > 0 {
		args = append(args, "--max-tokens", strconv.Itoa(e.MaxTokens))
	}
	if e.Seed != nil {
		args = append(args, "--sampling-seed", strconv.FormatInt(*e.Seed, 10))
	}
	if e.Concurrency > 0 {
		args = append(args, "-c", strconv.Itoa(e.Concurrency))
	}
	return args
}

// evalSetDiffs names each setting of entry e that differs from the run
// in dir, by the same comparison --resume makes. --resume reads a flag
// left out as "as the run had it"; in an entry, a key left out means the
// default, so those are given explicitly (or compared here).
func evalSetDiffs(e evalSetEntry, id, model, runID, out, dir string) ([]string, error) {
	args := entryArgs(e, id, model, runID, out)[1:]
	args = append(args, "-n", strconv.Itoa(e.N), "-r", strconv.Itoa(max(e.R, 1)), "--dataset="+e.Dataset,
		"--max-tokens", strconv.Itoa(e.MaxTokens))
	cmd, f := newEvalCommand()
	if err := cmd.ParseFlags(args); err != nil {
		return nil, err
	}
	f.resume = dir
	meta, rec, diffs, err := resumeSettings(cmd, f)
	if err != nil {
		return nil, err
	}
	if len(e.Params) == 0 && !maps.Equal(env.Default.Resolved(id, nil), meta.Conditions()) {
		diffs = append(diffs, fmt.Sprintf("--param (none), but the run used %s", showParams(meta.Params)))
	}
	if e.Temperature == nil && rec.Temperature != nil {
		diffs = append(diffs, fmt.Sprintf("--temperature (not sent), but the run used %s", optF(rec.Temperature)))
	}
	if e.TopP == nil && rec.TopP != nil {
		diffs = append(diffs, fmt.Sprintf("--top-p (not sent), but the run used %s", optF(rec.TopP)))
	}
	if e.Seed == nil && rec.Seed != nil {
		diffs = append(diffs, "--sampling-seed (not sent), but the run sent one")
	}
	return diffs, nil
}

// entryHash names an entry's settings in its run id: 8 hex digits of the
// arguments it runs with.
func entryHash(e evalSetEntry, id, model string) string {
	h := sha256.Sum256([]byte(strings.Join(entryArgs(e, id, model, "", ""), "\x00")))
	return hex.EncodeToString(h[:4])
}

func describeNewRun(runID string, meta *artifact.Metadata) string {
	switch {
	case meta == nil:
		return "starting run " + runID
	case meta.Status == artifact.StatusCompleted:
		return "run " + runID + " has these settings"
	default:
		return "resuming run " + runID + ", which has these settings"
	}
}

// changedFlags re-renders the flags given on the command line that keep
// says to pass on.
func changedFlags(fs *pflag.FlagSet, keep func(string) bool) []string {
	var out []string
	fs.Visit(func(fl *pflag.Flag) {
		if !keep(fl.Name) {
			return
		}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+fl.Name+"="+v)
			}
			return
		}
		out = append(out, "--"+fl.Name+"="+fl.Value.String())
	})
	return out
}

// findSetRun finds the run of an eval set: the directory named runID
// under out/evals whose metadata names the environment and the model.
func findSetRun(out, envID, model, runID string) (string, *artifact.Metadata) {
	dirs, _ := filepath.Glob(filepath.Join(out, "evals", "*", runID))
	for _, d := range dirs {
		m, err := artifact.ReadMetadata(d)
		if err == nil && m != nil && m.Environment == envID && m.Model == model {
			return d, m
		}
	}
	return "", nil
}

func findSetRunDir(out, envID, model, runID string) (string, bool) {
	d, m := findSetRun(out, envID, model, runID)
	return d, m != nil
}

func writeEvalSetStatus(out, setID string, statuses []evalSetStatus) error {
	dir := filepath.Join(out, "eval-sets")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(statuses, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, setID+".json"), append(b, '\n'), 0o644)
}

// sanitizeRunID keeps the characters a run id may hold.
func sanitizeRunID(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_', r == '.':
			b.WriteRune(r)
		default:
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "evalset"
	}
	if err := runner.CheckRunID(b.String()); err != nil {
		return "evalset"
	}
	return b.String()
}
