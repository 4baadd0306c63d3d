package runner

import (
	"context"
	"fmt"
	"os"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
)

// Examples is the dataset a run reads: in memory, or indexed on disk.
type Examples interface {
	Info() env.DatasetInfo
	Len() int
	Example(i int) (env.Example, error)
}

// InMemory wraps a loaded dataset.
func InMemory(ds *env.Dataset) Examples { return memExamples{ds} }

type memExamples struct{ ds *env.Dataset }

func (m memExamples) Info() env.DatasetInfo { return m.ds.Info }
func (m memExamples) Len() int              { return len(m.ds.Examples) }
func (m memExamples) Example(i int) (env.Example, error) {
	return m.ds.Examples[i], nil
}

// LazyThreshold is the file size above which OpenDataset indexes a dataset
// instead of loading it: small sets load eagerly (the environment's own
// loader), large ones stay on disk so memory does not grow with the file.
const LazyThreshold = 32 << 20

// OpenDataset loads path with the environment, or without a path the
// environment's embedded split ("" = test, the evaluation set; see
// env.LoadDataset), or indexes the file lazily when it is larger than
// LazyThreshold. Either way every row is validated up front, with errors
// naming the file and line.
func OpenDataset(ctx context.Context, e env.Environment, path, split string, forceLazy bool) (Examples, func() error, error) {
	if path != "" {
		st, err := os.Stat(path)
		if err != nil {
			return nil, nil, fmt.Errorf("dataset: %w", err)
		}
		if forceLazy || st.Size() > LazyThreshold {
			ix, err := dataset.OpenIndexed(path, func(raw []byte) (env.Example, error) {
				ex, err := e.ParseExample(raw)
				if err != nil {
					return ex, err
				}
				if len(ex.Prompt) == 0 {
					return ex, dataset.FieldError("", "row has no prompt for the model (is the question/content field missing?)")
				}
				return ex, nil
			})
			if err != nil {
				return nil, nil, err
			}
			return ix, ix.Close, nil
		}
	}
	ds, err := env.LoadDataset(ctx, e, path, split)
	if err != nil {
		return nil, nil, err
	}
	return InMemory(ds), func() error { return nil }, nil
}
