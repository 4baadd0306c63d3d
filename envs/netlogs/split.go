package netlogs

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/dataset/integrity"
	"github.com/svbench/svbench/env"
)

var _ env.SplitLoader = (*Environment)(nil)

// MiniOptions are the generator settings the embedded mini set (the
// evaluation set, split test) was built with.
var MiniOptions = GenerateOptions{N: 150, Seed: 20240304, Difficulty: DifficultyMixed, Render: "rich"}

// SplitSpec says how a generated split is made: Size rows, half of each
// label, from Generate(Options).
type SplitSpec struct {
	Size    int
	Options GenerateOptions
}

// GeneratedSplits are the splits E1 generates at load time beside its
// evaluation set (the embedded mini set, split test). The seeds are fixed
// so a split is the same bytes on every machine; they differ from the mini
// set's (MiniOptions) so the splits are fresh draws. Options.N is larger
// than Size because rows that repeat a held-out prompt are dropped before
// the split is cut to size.
var GeneratedSplits = map[string]SplitSpec{
	env.SplitTrain: {Size: 2000, Options: GenerateOptions{N: 2800, Seed: 20240401, Difficulty: DifficultyMixed, Render: "rich"}},
	env.SplitDev:   {Size: 300, Options: GenerateOptions{N: 900, Seed: 20240402, Difficulty: DifficultyMixed, Render: "rich"}},
}

// LoadSplit implements env.SplitLoader: test is the embedded mini set
// (what Load(ctx, "") returns); train and dev are generated on first use
// and kept for the life of the process.
func (e *Environment) LoadSplit(ctx context.Context, split string) (*env.Dataset, error) {
	if split == env.SplitTest {
		ds, err := e.Load(ctx, "")
		if err != nil {
			return nil, err
		}
		ds.Info.Split = split
		return ds, nil
	}
	if _, ok := GeneratedSplits[split]; !ok {
		return nil, fmt.Errorf("%s: unknown split %q (want train, dev or test): %w", ID, split, env.ErrNoSplit)
	}
	data, err := generatedSplits()
	if err != nil {
		return nil, err
	}
	ds, err := dataset.Load(ctx, "", dataset.Embedded{Name: "embedded:e1-" + split, Data: data[split]}, func(raw []byte) (env.Example, error) {
		return parseRow(raw, true)
	})
	if err != nil {
		return nil, err
	}
	ds.Info.Split = split
	return ds, nil
}

// generatedSplits serialises train and dev once: Load runs concurrently
// (the server, the conformance suite) and the rows never change within a
// build.
var generatedSplits = sync.OnceValues(func() (map[string][]byte, error) {
	test, err := New().Load(context.Background(), "")
	if err != nil {
		return nil, err
	}
	// Held-out prompts: a generated row may repeat none of them, exactly
	// or once numbers, case and spacing are ignored (integrity.Normalise,
	// the rule data validate and the conformance suite apply). Dev is
	// held out from train as well, so train is made first.
	heldOut := map[string]bool{}
	hold := func(q string) {
		heldOut[q] = true
		heldOut[integrity.Normalise(q)] = true
	}
	for _, ex := range test.Examples {
		hold(lastUser(ex.Prompt))
	}
	out := map[string][]byte{}
	for _, name := range []string{env.SplitTrain, env.SplitDev} {
		rows, err := generateSplit(name, GeneratedSplits[name], heldOut)
		if err != nil {
			return nil, err
		}
		for _, r := range rows {
			hold(r.Question)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		for _, r := range rows {
			if err := enc.Encode(r); err != nil {
				return nil, err
			}
		}
		out[name] = buf.Bytes()
	}
	return out, nil
})

// generateSplit draws a split's rows in generation order, skipping any
// whose prompt is held out, until it has Size/2 of each label. Ids take the
// split's name in place of "synth-" so they never collide with the
// evaluation set's; meta gains "split".
func generateSplit(name string, spec SplitSpec, heldOut map[string]bool) ([]Row, error) {
	rows, err := Generate(spec.Options)
	if err != nil {
		return nil, err
	}
	want := map[string]int{LabelMalicious: spec.Size / 2, LabelBenign: spec.Size - spec.Size/2}
	kept := make([]Row, 0, spec.Size)
	for _, r := range rows {
		if want[r.Answer] == 0 || heldOut[r.Question] || heldOut[integrity.Normalise(r.Question)] {
			continue
		}
		want[r.Answer]--
		r.ID = name + "-" + strings.TrimPrefix(r.ID, "synth-")
		meta := make(map[string]any, len(r.Meta)+1)
		for k, v := range r.Meta {
			meta[k] = v
		}
		meta["split"] = name
		r.Meta = meta
		kept = append(kept, r)
	}
	if len(kept) != spec.Size {
		return nil, fmt.Errorf("%s split: only %d of %d rows left after dropping held-out prompts; raise its N", name, len(kept), spec.Size)
	}
	return kept, nil
}
