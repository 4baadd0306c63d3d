package configaudit

import (
	"bytes"
	"compress/gzip"
	"context"
	_ "embed"
	"fmt"
	"io"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/dataset/integrity"
	"github.com/svbench/svbench/env"
)

// The train and dev splits are rows of E2's own generator, committed
// (compressed) because generating them runs trivy over every Terraform row
// (seconds per hundred rows): TestSplitsAreReproducible regenerates them
// with splitOptions. Every baseline+mutation-set group the test split (the
// mini set) holds is left out of them, so a policy is never trained on
// the file it is evaluated on with other names; dev also leaves out
// train's groups.
//
//go:embed data/train.jsonl.gz
var trainJSONLGz []byte

//go:embed data/dev.jsonl.gz
var devJSONLGz []byte

// splitOptions are the generator options each split is drawn with; the
// draws are larger than the splits, since whole groups are dropped.
func splitOptions(split string) GenOptions {
	if split == env.SplitDev {
		return DefaultGenOptions(600, 20261127)
	}
	return DefaultGenOptions(2400, 20261126)
}

// LoadSplit serves E2's splits (env.SplitLoader). The policy condition
// (mode=policy) ships only its evaluation set.
func (e *Env) LoadSplit(ctx context.Context, split string) (*env.Dataset, error) {
	if split == env.SplitTest {
		return e.Load(ctx, "")
	}
	if err := env.CheckSplit(split); err != nil {
		return nil, err
	}
	if e.mode == ModePolicy {
		return nil, fmt.Errorf("e2 in mode=policy ships only its evaluation set: %w", env.ErrNoSplit)
	}
	gz := trainJSONLGz
	if split == env.SplitDev {
		gz = devJSONLGz
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return nil, fmt.Errorf("e2: embedded %s split: %w", split, err)
	}
	data, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("e2: embedded %s split: %w", split, err)
	}
	return dataset.Load(ctx, "", dataset.Embedded{Name: "embedded:e2-" + split, Data: data}, func(raw []byte) (env.Example, error) {
		row, err := parseRow(raw)
		if err != nil {
			return env.Example{}, err
		}
		return e.rowExample(row)
	})
}

// splitRows draws a split's rows: the generator's output with every row
// whose group, or whose content once numbers, case and spacing are
// ignored, is in held dropped, and ids prefixed with the split.
func (e *Env) splitRows(ctx context.Context, split string, held []Row) ([]Row, error) {
	rows, _, err := e.Generate(ctx, splitOptions(split))
	if err != nil {
		return nil, err
	}
	groups, texts := map[string]bool{}, map[string]bool{}
	for _, r := range held {
		if g, ok := r.Meta["group"].(string); ok {
			groups[g] = true
		}
		texts[integrity.Normalise(r.Content)] = true
	}
	var out []Row
	for _, r := range rows {
		g, _ := r.Meta["group"].(string)
		if groups[g] || texts[integrity.Normalise(r.Content)] {
			continue
		}
		r.ID = split + "-" + r.ID
		if r.Meta == nil {
			r.Meta = map[string]any{}
		}
		r.Meta["split"] = split
		out = append(out, r)
	}
	return out, nil
}
