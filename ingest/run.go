package ingest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
)

// ManifestFile is the run manifest a trainer's run keeps beside its rows
// (the same file and schema svbench writes, artifact.ManifestFile).
const ManifestFile = artifact.ManifestFile

// maxLine bounds one row; trainer rows carry whole transcripts.
const maxLine = dataset.MaxLine

// ReadManifest loads run_manifest.json from dir; (nil, nil) when absent.
func ReadManifest(dir string) (*artifact.Manifest, error) {
	p := filepath.Join(dir, ManifestFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var m artifact.Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &m, nil
}

// ManifestMetadata maps a trainer's manifest onto svbench's run metadata so
// reports and the scoreboard can treat its run like one of svbench's. envID
// is the canonical environment id; rubric is the one the rows were
// re-scored with.
func ManifestMetadata(m *artifact.Manifest, envID, rubric string) *artifact.Metadata {
	md := &artifact.Metadata{
		RunID: m.RunID, Environment: envID, EnvVersion: m.EnvironmentVersion, Rubric: rubric,
		Model: m.ModelID, EffectiveModel: m.ModelID, Dataset: m.DatasetID, DatasetRev: m.DatasetRevision,
		Rollouts: m.RolloutsPerExample, Sampling: m.SamplingParams, GitCommit: m.GitSHA, Seed: m.Seed,
		Status: artifact.StatusCompleted, Source: "trainer:" + orNone(m.Trainer),
	}
	if t, err := time.Parse(time.RFC3339, m.TimestampUTC); err == nil {
		md.Started = t
	}
	return md
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// IsTrainerFile reports whether the first non-empty row of a results file
// is a trainer row.
func IsTrainerFile(path string) (bool, error) {
	if IsParquet(path) || IsVerlDir(path) {
		return true, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 1<<16)
	for {
		b, err := readLine(br)
		b = bytes.TrimSpace(b)
		if len(b) > 0 {
			var m map[string]json.RawMessage
			if json.Unmarshal(b, &m) != nil {
				return false, nil
			}
			return IsTrainerRow(m), nil
		}
		if err != nil {
			return false, nil
		}
	}
}

// LoadRun re-scores every row of a trainer's output with the environment
// and rubric, in file order (Load with only a rubric). lines holds each
// row's 1-based line number.
func LoadRun(ctx context.Context, path string, e env.Environment, rubric string) (rows []artifact.Result, lines []int, err error) {
	run, err := Load(ctx, path, e, Options{Rubric: rubric})
	if err != nil {
		return nil, nil, err
	}
	return run.Rows, run.Lines, nil
}

// ResultsPath is artifact.ResultsPath for a trainer's output: a directory
// holding results.jsonl gives that file; one holding TRL completions
// tables (or TRL's output_dir, with its completions/ folder) gives the
// directory itself, which Load reads table by table; so does a verl
// rollout_data_dir of {step}.jsonl files, read step by step.
func ResultsPath(input string) string {
	p := artifact.ResultsPath(input)
	if p != input {
		if _, err := os.Stat(p); err != nil && (IsParquet(input) || IsVerlDir(input)) {
			return input
		}
	}
	return p
}

var errLongLine = fmt.Errorf("row longer than %d MiB; skipped", maxLine>>20)

// readLine reads one line, draining (not buffering) a line over maxLine so
// the rows after it are still read.
func readLine(br *bufio.Reader) ([]byte, error) {
	b, long, err := dataset.ReadLine(br, maxLine)
	if long && err == nil {
		return nil, errLongLine
	}
	return b, err
}
