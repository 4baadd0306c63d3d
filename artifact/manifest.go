package artifact

import (
	"cmp"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"
)

// ManifestFile is written beside every run: the reference's run manifest
// (reference-bench/schemas/run_manifest.schema.json), so runs of both
// projects can be checked for budget parity by the same tools.
const ManifestFile = "run_manifest.json"

// UnboundedTokens stands for "no max_tokens was sent" in a manifest, whose
// schema needs a positive integer there.
const UnboundedTokens = math.MaxInt32

// Manifest is run_manifest.json.
type Manifest struct {
	RunID              string          `json:"run_id"`
	GitSHA             string          `json:"git_sha"`
	TimestampUTC       string          `json:"timestamp_utc"`
	EnvironmentID      string          `json:"environment_id"`
	EnvironmentVersion string          `json:"environment_version"`
	DatasetID          string          `json:"dataset_id"`
	DatasetRevision    string          `json:"dataset_revision"`
	Split              string          `json:"split"`
	ModelID            string          `json:"model_id"`
	ModelRevision      string          `json:"model_revision_or_digest"`
	SamplingParams     json.RawMessage `json:"sampling_params"`
	RewardConfigID     string          `json:"reward_config_id"`
	RewardConfigHash   string          `json:"reward_config_hash"`
	RewardSource       string          `json:"reward_source"`
	Seed               uint64          `json:"seed"`
	PlatformMode       string          `json:"platform_mode"`
	Trainer            string          `json:"trainer"`
	MaxSteps           int             `json:"max_steps"`
	RolloutsPerExample int             `json:"rollouts_per_example"`
	MaxTokens          int             `json:"max_tokens"`
	MaxTurns           int             `json:"max_turns"`
	ToolBudget         int             `json:"tool_budget"`
	BudgetGroup        string          `json:"budget_group"`
	InputArtifacts     []string        `json:"input_artifacts"`
	OutputArtifacts    []string        `json:"output_artifacts"`
	MetricsSummaryPath string          `json:"metrics_summary_path"`
	ResultsJSONLPath   string          `json:"results_jsonl_path"`
	MetadataJSONPath   string          `json:"metadata_json_path"`
	Notes              string          `json:"notes"`
}

// ManifestFor derives a run's manifest from its metadata. maxTurns and
// toolBudget are the episode limits in force (the environment's defaults
// when not overridden).
func ManifestFor(m *Metadata, maxTurns, toolBudget int) *Manifest {
	var notes []string
	var s struct {
		MaxTokens int `json:"max_tokens"`
	}
	_ = json.Unmarshal(m.Sampling, &s)
	maxTokens := s.MaxTokens
	if maxTokens <= 0 {
		maxTokens = UnboundedTokens
		notes = append(notes, "max_tokens was not sent (the server's default applied); recorded as 2147483647")
	}
	sampling := m.SamplingSent
	if len(sampling) == 0 {
		sampling = m.Sampling
	}
	if len(sampling) == 0 {
		sampling = json.RawMessage("{}")
	}
	source := m.RewardSource()
	commit := m.GitCommit
	if commit == "" {
		commit = "unknown"
		notes = append(notes, "git commit unknown (built outside a checkout without make build)")
	}
	model := m.EffectiveModel
	if model == "" {
		model = m.Model
	}
	// The reference's vocabulary: its public mini set is our embedded
	// test split; any other named split keeps its name.
	split := cmp.Or(m.Split, "custom")
	if strings.HasPrefix(m.Dataset, "embedded:") && (m.Split == "" || m.Split == "test") {
		split = "public_mini"
	}
	return &Manifest{
		RunID: m.RunID, GitSHA: commit, TimestampUTC: m.Started.UTC().Format(time.RFC3339),
		EnvironmentID: "sv-env-" + m.Environment, EnvironmentVersion: orUnknown(m.EnvVersion),
		DatasetID: orUnknown(m.Dataset), DatasetRevision: orUnknown(m.DatasetRev), Split: split,
		ModelID: orUnknown(model), ModelRevision: "unknown", SamplingParams: sampling,
		RewardConfigID: m.Environment + "/" + orUnknown(m.Rubric), RewardConfigHash: RewardConfigHash(m),
		RewardSource: source, Seed: m.Seed, PlatformMode: "local", Trainer: "none", MaxSteps: 0,
		RolloutsPerExample: max(m.Rollouts, 1), MaxTokens: maxTokens, MaxTurns: max(maxTurns, 1), ToolBudget: max(toolBudget, 0),
		BudgetGroup:    budgetGroup(m, maxTokens, maxTurns, toolBudget),
		InputArtifacts: []string{m.Dataset}, OutputArtifacts: []string{ResultsFile, MetadataFile, SummaryFile, ReportFile},
		MetricsSummaryPath: SummaryFile, ResultsJSONLPath: ResultsFile, MetadataJSONPath: MetadataFile,
		Notes: strings.Join(notes, "; "),
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// RewardConfigHash pins what decides the rewards: environment and its
// version, rubric, parameters and the system prompt.
func RewardConfigHash(m *Metadata) string {
	h := sha256.New()
	h.Write([]byte(m.Environment + "\x00" + m.EnvVersion + "\x00" + m.Rubric + "\x00" + m.Launch.SystemPromptSHA256))
	cond := m.Conditions()
	for _, k := range slices.Sorted(maps.Keys(cond)) {
		h.Write([]byte("\x00" + k + "=" + cond[k]))
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))[:16]
}

// budgetGroup ties runs that must be comparable: same environment, dataset
// revision, rubric configuration and budgets.
func budgetGroup(m *Metadata, maxTokens, maxTurns, toolBudget int) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%s|%s|%s|%d|%d|%d|%d", m.Environment, m.DatasetRev, RewardConfigHash(m), max(m.Rollouts, 1), maxTokens, maxTurns, toolBudget))
	return m.Environment + "-" + hex.EncodeToString(h[:])[:12]
}

// ManifestSchema is the JSON Schema of run_manifest.json.
//
//go:embed schema/run_manifest.schema.json
var ManifestSchema []byte
