package ingest

import (
	"encoding/json"
	"path/filepath"
)

// HostedMetadataFile is the hosted training platform's record of a run, as
// the reference's collector downloads it: {"run": {base_model, batch_size,
// rollouts_per_example, max_tokens, max_steps, lora_alpha, learning_rate,
// environments: [{id, version, args}], eval_config, buffer_config: {seed}}}.
// svbench's own runs use the same file name for artifact.Metadata; the two
// are told apart by the "run" object.
const HostedMetadataFile = "metadata.json"

// HostedRun is the part of the hosted record a study compares.
type HostedRun struct {
	ID                 string          `json:"id"`
	Name               string          `json:"name"`
	Status             string          `json:"status"`
	BaseModel          string          `json:"base_model"`
	BatchSize          *int            `json:"batch_size"`
	RolloutsPerExample *int            `json:"rollouts_per_example"`
	MaxTokens          *int            `json:"max_tokens"`
	MaxSteps           *int            `json:"max_steps"`
	LoraAlpha          *float64        `json:"lora_alpha"`
	LearningRate       *float64        `json:"learning_rate"`
	SeqLen             *int            `json:"seq_len"`
	Environments       []HostedEnv     `json:"environments"`
	EvalConfig         json.RawMessage `json:"eval_config"`
	BufferConfig       struct {
		Seed *int64 `json:"seed"`
	} `json:"buffer_config"`
}

// HostedEnv is one environment of a hosted run.
type HostedEnv struct {
	ID      string         `json:"id"`
	Version string         `json:"version"`
	Args    map[string]any `json:"args"`
}

// ReadHostedRun reads the hosted record from dir; (nil, nil) when there is
// no metadata.json or it is not a hosted record.
func ReadHostedRun(dir string) (*HostedRun, error) {
	b, err := readUpTo(filepath.Join(dir, HostedMetadataFile), 8<<20)
	if b == nil || err != nil {
		return nil, err
	}
	var wrap struct {
		Run *HostedRun `json:"run"`
	}
	if err := json.Unmarshal(b, &wrap); err != nil {
		return nil, nil // svbench's own metadata.json or something else
	}
	return wrap.Run, nil
}
