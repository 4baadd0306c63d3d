package phishing

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/dataset/integrity"
	"github.com/svbench/svbench/env"
)

// Seeds and sizes of the generated training splits. They differ from every
// seed the package uses elsewhere (4: the mini set, 7, 11, 99: tests, 1234:
// the baseline's calibration), so no split shares a PCG stream with the
// evaluation set or with rows a test or the baseline was tuned on. Each
// split also draws on template families of its own (families.go), so no
// split shares a template with another. Changing any of them changes the
// splits' revisions.
const (
	TrainSeed = 3101
	TrainRows = 1000
	DevSeed   = 3102
	DevRows   = 200
)

var _ env.SplitLoader = (*Environment)(nil)

// LoadSplit returns train or dev (generated, see buildSplits) or test, the
// embedded mini set that Load("") returns and every report is scored on.
func (e *Environment) LoadSplit(ctx context.Context, split string) (*env.Dataset, error) {
	if err := env.CheckSplit(split); err != nil {
		return nil, err
	}
	if split == "" || split == env.SplitTest {
		ds, err := e.Load(ctx, "")
		if err != nil {
			return nil, err
		}
		ds.Info.Split = env.SplitTest
		return ds, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s, err := builtSplits()
	if err != nil {
		return nil, err
	}
	ds := s[split]
	// Callers set Info.Split and may edit Meta; the cached set must stay
	// as built for the next caller. Payloads are shared on purpose: their
	// email analysis is computed once behind a sync.Once.
	out := &env.Dataset{Info: ds.Info, Examples: slices.Clone(ds.Examples)}
	for i := range out.Examples {
		out.Examples[i].Meta = maps.Clone(out.Examples[i].Meta)
	}
	out.Info.Split = split
	return out, nil
}

// builtSplits generates train and dev once per process: they depend on no
// configuration, and the server and runner load them from many goroutines.
var builtSplits = sync.OnceValues(buildSplits)

// SplitRows returns the rows of a generated split (train or dev) as
// LoadSplit serves them, for `data` commands and tests that write them out.
func SplitRows(split string) ([]Row, error) {
	rows, _, err := splitRows()
	if err != nil {
		return nil, err
	}
	r, ok := rows[split]
	if !ok {
		return nil, fmt.Errorf("E4 generates only train and dev, not %q", split)
	}
	return r, nil
}

// splitDrops says how many generated rows each split lost, and why.
type splitDrops struct {
	Generated, TestExact, TestNear, SplitNear int
}

// splitRows generates train, then dev, dropping every row whose prompt
// (system and user message, as a model sees it) equals a test prompt or an
// already kept prompt, exactly or after integrity.Normalise, the rule
// `svbench data validate` and envtest.SplitLeaks apply between splits.
// Train is filtered first, so dev gives way to train, never the reverse.
func splitRows() (map[string][]Row, map[string]splitDrops, error) {
	test, err := dataset.Load(context.Background(), "", dataset.Embedded{Name: "embedded:e4-mini", Data: miniSet}, func(raw []byte) (env.Example, error) {
		return parseRow(raw, true)
	})
	if err != nil {
		return nil, nil, err
	}
	testExact, testKeys := map[string]bool{}, map[string]bool{}
	for _, ex := range test.Examples {
		k := env.PromptText(ex)
		testExact[k] = true
		testKeys[integrity.Normalise(k)] = true
	}
	seen := map[string]bool{}
	rows := map[string][]Row{}
	drops := map[string]splitDrops{}
	for _, sp := range []struct {
		name string
		seed uint64
		n    int
	}{{env.SplitTrain, TrainSeed, TrainRows}, {env.SplitDev, DevSeed, DevRows}} {
		d := splitDrops{Generated: sp.n}
		kept := make([]Row, 0, sp.n)
		gen, err := GenerateSplit(sp.name, sp.seed, sp.n)
		if err != nil {
			return nil, nil, err
		}
		for _, r := range gen {
			r.ID = sp.name + "-" + r.ID
			raw, err := json.Marshal(r)
			if err != nil {
				return nil, nil, err
			}
			ex, err := parseRow(raw, true)
			if err != nil {
				return nil, nil, fmt.Errorf("generated %s row %s: %w", sp.name, r.ID, err)
			}
			// Normalise only merges texts (it never splits equal ones), so
			// the normalised key alone catches exact copies too; exact ones
			// are counted apart because they mean a seed collision.
			pk := env.PromptText(ex)
			k := integrity.Normalise(pk)
			switch {
			case testExact[pk]:
				d.TestExact++
			case testKeys[k]:
				d.TestNear++
			case seen[k]:
				d.SplitNear++
			default:
				seen[k] = true
				kept = append(kept, r)
				continue
			}
		}
		rows[sp.name] = kept
		drops[sp.name] = d
	}
	return rows, drops, nil
}

// buildSplits serialises the kept rows exactly as the mini set is written
// (no HTML escaping), so a split's revision is the hash of the JSONL
// `svbench data generate` would produce for the same rows.
func buildSplits() (map[string]*env.Dataset, error) {
	rows, _, err := splitRows()
	if err != nil {
		return nil, err
	}
	out := map[string]*env.Dataset{}
	for name, rs := range rows {
		data, err := encodeRows(rs)
		if err != nil {
			return nil, err
		}
		ds, err := dataset.Load(context.Background(), "", dataset.Embedded{Name: "embedded:e4-" + name, Data: data}, func(raw []byte) (env.Example, error) {
			return parseRow(raw, true)
		})
		if err != nil {
			return nil, fmt.Errorf("E4 %s split: %w", name, err)
		}
		out[name] = ds
	}
	return out, nil
}

// encodeRows writes rows as JSONL the way data/mini.jsonl is written.
func encodeRows(rows []Row) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}
