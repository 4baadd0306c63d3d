package ingest

import (
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/svbench/svbench/artifact"
)

// VFEvalMetadata is the metadata.json vf-eval (verifiers' eval) writes
// beside its results.jsonl (verifiers.utils.save_utils.save_metadata: the
// run's GenerateMetadata less path_to_save and date). The same file name
// holds svbench's own artifact.Metadata and the hosted platform's
// {"run": …}; vf-eval's is told apart by env_id with rollouts_per_example.
type VFEvalMetadata struct {
	EnvID              string             `json:"env_id"`
	EnvArgs            map[string]any     `json:"env_args"`
	Model              string             `json:"model"`
	BaseURL            string             `json:"base_url"`
	NumExamples        int                `json:"num_examples"`
	RolloutsPerExample int                `json:"rollouts_per_example"`
	SamplingArgs       json.RawMessage    `json:"sampling_args"`
	Seconds            float64            `json:"time"`
	AvgReward          *float64           `json:"avg_reward"`
	AvgMetrics         map[string]float64 `json:"avg_metrics"`
	VersionInfo        json.RawMessage    `json:"version_info"`
}

// ReadVFEvalMetadata reads vf-eval's metadata.json from dir; (nil, nil)
// when there is none or it is another writer's.
func ReadVFEvalMetadata(dir string) (*VFEvalMetadata, error) {
	p := filepath.Join(dir, HostedMetadataFile)
	b, err := readUpTo(p, 8<<20)
	if b == nil || err != nil {
		return nil, err
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(b, &keys) != nil {
		return nil, nil
	}
	_, hasEnv := keys["env_id"]
	_, hasR := keys["rollouts_per_example"]
	if !hasEnv || !hasR {
		return nil, nil
	}
	var m VFEvalMetadata
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: vf-eval metadata: %w", p, err)
	}
	return &m, nil
}

// Metadata maps vf-eval's record onto svbench's run metadata. envID is the
// canonical environment id; rubric the one the rows were re-scored with.
func (m *VFEvalMetadata) Metadata(envID, rubric string) *artifact.Metadata {
	md := &artifact.Metadata{
		Environment: envID, Rubric: rubric, Model: m.Model, EffectiveModel: m.Model, BaseURL: m.BaseURL,
		NumExamples: m.NumExamples, Rollouts: m.RolloutsPerExample, Sampling: m.SamplingArgs,
		DurationS: m.Seconds, Status: artifact.StatusCompleted, Source: "trainer:vf-eval",
	}
	return md
}
