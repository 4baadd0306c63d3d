package cli

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
)

// applyResume fills every flag the user did not give from the run's
// metadata.json, and refuses flags that were given with a different value,
// naming each difference: `svbench eval --resume DIR` alone finishes a run.
func applyResume(cmd *cobra.Command, f *evalFlags) (*artifact.Metadata, llm.Sampling, error) {
	meta, rec, diffs, err := resumeSettings(cmd, f)
	if err != nil {
		return nil, rec, err
	}
	if len(diffs) > 0 {
		return nil, rec, usagef("cannot resume %s with different settings:\n  %s\n(drop these flags to finish the run as it was started, or start a new run without --resume)", meta.RunID, strings.Join(diffs, "\n  "))
	}
	return meta, rec, nil
}

// resumeSettings is applyResume without the refusal: it names each given
// flag whose value differs from the run's (an eval set uses the list to
// tell a changed entry from its earlier run).
func resumeSettings(cmd *cobra.Command, f *evalFlags) (*artifact.Metadata, llm.Sampling, []string, error) {
	var rec llm.Sampling
	meta, err := artifact.ReadMetadata(f.resume)
	if err != nil {
		return nil, rec, nil, usagef("--resume %s: %v (give a run directory written by svbench eval)", f.resume, err)
	}
	fs := cmd.Flags()
	var diffs []string
	check := func(flag, given, recorded string) {
		if fs.Changed(flag) && given != recorded {
			diffs = append(diffs, fmt.Sprintf("--%s %s, but the run used %s", flag, show(given), show(recorded)))
		}
	}

	if fs.Changed("env") {
		given, err := env.Default.Resolve(f.envName)
		if err != nil {
			return nil, rec, nil, usageError(err)
		}
		check("env", given, meta.Environment)
	}
	f.envName = meta.Environment
	check("model", f.models, meta.Model)
	f.models = meta.Model

	l := meta.Launch
	if l.DatasetPath == "" && meta.Dataset != "" && !strings.HasPrefix(meta.Dataset, "embedded:") {
		// Runs written before Launch existed name their file in Dataset.
		l.DatasetPath = meta.Dataset
	}
	check("dataset", cleanPath(f.datasetPath), cleanPath(l.DatasetPath))
	f.datasetPath = l.DatasetPath
	if fs.Changed("split") && cmp.Or(f.split, env.SplitTest) != cmp.Or(l.Split, env.SplitTest) {
		check("split", f.split, l.Split)
	}
	f.split = l.Split
	if fs.Changed("rubric") && f.rubric != meta.Rubric && f.rubric != "" {
		check("rubric", f.rubric, meta.Rubric)
	}
	f.rubric = meta.Rubric
	if f.params.changed(fs) {
		given, err := f.params.parse()
		if err != nil {
			return nil, rec, nil, err
		}
		// Compared as configurations in force, so a parameter given at its
		// default is the run's own condition, not a difference.
		have := meta.Conditions()
		if want := env.Default.Resolved(meta.Environment, given); want == nil || !maps.Equal(want, have) {
			diffs = append(diffs, fmt.Sprintf("--param %s, but the run used %s", showParams(given), showParams(meta.Params)))
		}
	}
	f.params = paramFlags{resumed: maps.Clone(meta.Params)}
	if fs.Changed("num-examples") && f.n != meta.NumExamples && !(f.n == 0 && meta.NumExamples == meta.DatasetRows) {
		check("num-examples", strconv.Itoa(f.n), strconv.Itoa(meta.NumExamples))
	}
	check("rollouts", strconv.Itoa(f.rollouts), strconv.Itoa(meta.Rollouts))
	check("seed", strconv.FormatUint(f.seed, 10), strconv.FormatUint(meta.Seed, 10))
	check("shard", f.shard, meta.Shard)
	check("max-turns", strconv.Itoa(f.maxTurns), strconv.Itoa(l.MaxTurns))
	f.maxTurns = l.MaxTurns
	check("judge-model", f.judgeModel, l.JudgeModel)
	f.judgeModel = l.JudgeModel
	check("system-prompt-file", cleanPath(f.systemPromptFile), cleanPath(l.SystemPromptFile))
	f.systemPromptFile = l.SystemPromptFile
	check("run-id", f.runID, meta.RunID)
	if !fs.Changed("prices") {
		f.prices = l.PricesFile
	}

	// Where the model is served is not part of what the numbers mean: a
	// resumed run may move to a new --base-url, --endpoints file or key
	// variable (a vLLM server restarted on another port), and a run that
	// took its URL from $OPENAI_BASE_URL reads the corrected variable. Each
	// session's endpoint is recorded in metadata.json (segments); the
	// served model is checked by the runner and must not change.
	m := &f.model
	if !strings.HasPrefix(meta.Model, "builtin:") {
		switch {
		case fs.Changed("base-url"), fs.Changed("endpoints"):
		case l.BaseURLFromEnv && os.Getenv("OPENAI_BASE_URL") != "":
			m.baseURL = "" // read again from the variable
			f.baseURLFromEnv = true
		case l.EndpointsFile == "":
			m.baseURL = meta.BaseURL
			// A shell without the variable falls back to the recorded URL
			// but the run still came from the variable: keep saying so.
			f.baseURLFromEnv = l.BaseURLFromEnv
		}
	}
	if !fs.Changed("api-key-env") && l.APIKeyEnv != "" {
		m.apiKeyEnv = l.APIKeyEnv
	}
	if !fs.Changed("endpoints") && !fs.Changed("base-url") {
		m.endpoints = l.EndpointsFile
	}

	if len(meta.Sampling) > 0 {
		if err := json.Unmarshal(meta.Sampling, &rec); err != nil {
			return nil, rec, nil, fmt.Errorf("%s: field \"sampling\": %w", filepath.Join(f.resume, artifact.MetadataFile), err)
		}
	}
	given, err := m.sampling(cmd)
	if err != nil {
		return nil, rec, nil, err
	}
	if fs.Changed("temperature") && !reflect.DeepEqual(given.Temperature, rec.Temperature) {
		diffs = append(diffs, fmt.Sprintf("--temperature %s, but the run used %s", optF(given.Temperature), optF(rec.Temperature)))
	}
	if fs.Changed("top-p") && !reflect.DeepEqual(given.TopP, rec.TopP) {
		diffs = append(diffs, fmt.Sprintf("--top-p %s, but the run used %s", optF(given.TopP), optF(rec.TopP)))
	}
	if fs.Changed("sampling-seed") && !reflect.DeepEqual(given.Seed, rec.Seed) {
		diffs = append(diffs, "--sampling-seed differs from the run's")
	}
	check("max-tokens", strconv.Itoa(given.MaxTokens), strconv.Itoa(rec.MaxTokens))
	if fs.Changed("sampling-args") && !reflect.DeepEqual(given.Extra, rec.Extra) {
		diffs = append(diffs, fmt.Sprintf("-S %s, but the run used %s", jsonText(given.Extra), jsonText(rec.Extra)))
	}
	return meta, rec, diffs, nil
}

// readSystemPrompt loads --system-prompt-file and its content hash.
func readSystemPrompt(path string) (text, sum string, err error) {
	if path == "" {
		return "", "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", "", usagef("--system-prompt-file: %v", err)
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", "", usagef("--system-prompt-file %s is empty; drop the flag to keep the environment's system prompt", path)
	}
	h := sha256.Sum256(b)
	return string(b), hex.EncodeToString(h[:]), nil
}

func cleanPath(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

func show(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func showParams(m map[string]string) string {
	if len(m) == 0 {
		return "(none)"
	}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kv = append(kv, k+"="+m[k])
	}
	return strings.Join(kv, ",")
}

func optF(p *float64) string {
	if p == nil {
		return "(not sent)"
	}
	return strconv.FormatFloat(*p, 'g', -1, 64)
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil || string(b) == "null" {
		return "(none)"
	}
	return string(b)
}
