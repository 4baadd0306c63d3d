package env

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// The three splits of an environment's data. Test is the evaluation set
// (the embedded set Load("") returns, the one every report and leaderboard
// entry is computed on); train is what trainers are served; dev is for
// model selection during training. They are disjoint: each environment's
// tests check exact and near-duplicate leakage between them
// (envtest.SplitLeakage).
const (
	SplitTrain = "train"
	SplitDev   = "dev"
	SplitTest  = "test"
)

// SplitNames lists the splits in the order tables show them.
func SplitNames() []string { return []string{SplitTrain, SplitDev, SplitTest} }

// ErrNoSplit says an environment ships no embedded rows for a split.
var ErrNoSplit = errors.New("no embedded rows for this split")

// SplitLoader is implemented by environments that ship data for training
// beside their evaluation set. LoadSplit returns the named embedded split
// with DatasetInfo.Split set; SplitTest must be what Load(ctx, "") returns.
// A split the environment does not ship is an error wrapping ErrNoSplit
// whose text says where such rows come from (an importer, a generator).
type SplitLoader interface {
	LoadSplit(ctx context.Context, split string) (*Dataset, error)
}

// CheckSplit refuses a split name other than train, dev or test ("" is
// allowed: the caller's default).
func CheckSplit(split string) error {
	if split == "" || slices.Contains(SplitNames(), split) {
		return nil
	}
	return Usagef("unknown split %q: want train, dev or test", split)
}

// LoadDataset loads what a command asked for: the file or directory at
// path when one is given, else the environment's embedded split (""
// means test, the evaluation set). A file's split is read from its name
// (data build writes train.jsonl, dev.jsonl, test.jsonl); any other name
// leaves DatasetInfo.Split empty, which reports call "unnamed".
func LoadDataset(ctx context.Context, e Environment, path, split string) (*Dataset, error) {
	if err := CheckSplit(split); err != nil {
		return nil, err
	}
	if path != "" {
		ds, err := e.Load(ctx, path)
		if err != nil {
			return nil, err
		}
		if ds.Info.Split == "" {
			ds.Info.Split = SplitFromPath(path)
		}
		return ds, nil
	}
	if split == "" {
		split = SplitTest
	}
	if sl, ok := e.(SplitLoader); ok {
		ds, err := sl.LoadSplit(ctx, split)
		if err != nil {
			return nil, err
		}
		ds.Info.Split = split
		return ds, nil
	}
	if split != SplitTest {
		return nil, fmt.Errorf("%s ships only its evaluation set (split test): %w; pass --dataset with rows of your own", e.Info().ID, ErrNoSplit)
	}
	ds, err := e.Load(ctx, "")
	if err != nil {
		return nil, err
	}
	ds.Info.Split = SplitTest
	return ds, nil
}

// SplitFromPath names the split a dataset file holds by the convention
// `svbench data build` writes: train.jsonl, dev.jsonl, test.jsonl (also
// e1-train.jsonl, validation.jsonl). "" when the name says nothing.
func SplitFromPath(path string) string {
	base := strings.ToLower(filepath.Base(path))
	for _, ext := range []string{".gz", ".jsonl", ".json"} {
		base = strings.TrimSuffix(base, ext)
	}
	for _, sep := range []string{"-", "_", "."} {
		if i := strings.LastIndex(base, sep); i >= 0 {
			base = base[i+1:]
		}
	}
	switch base {
	case "train", "training":
		return SplitTrain
	case "dev", "val", "valid", "validation":
		return SplitDev
	case "test", "eval", "mini":
		return SplitTest
	}
	return ""
}

// PromptText is the text split leakage is judged on: every prompt message
// a model sees, role and content, in order. Two examples a model cannot
// tell apart leak whatever their ids and labels say; the conformance
// suite's check and every environment's split filter read this one
// definition, so they never disagree on what counts as the same prompt.
func PromptText(ex Example) string {
	var b strings.Builder
	for _, m := range ex.Prompt {
		b.WriteString(string(m.Role))
		b.WriteByte('\n')
		b.WriteString(m.Content)
		b.WriteByte('\n')
	}
	return b.String()
}
