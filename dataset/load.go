package dataset

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strconv"

	"github.com/svbench/svbench/env"
)

// Embedded is a dataset compiled into the binary (an environment's public
// mini set).
type Embedded struct {
	Name string // e.g. "embedded:e1-mini"
	Data []byte
}

// Load reads an environment's JSONL dataset eagerly: path "" means the
// embedded set. parse turns a row into an Example (and returns RowErrors for
// bad fields); rows without an id are named "line-N". Errors name the file,
// line and field; an empty dataset is an error. parse runs on several
// goroutines at once (ParseLines).
func Load(ctx context.Context, path string, embedded Embedded, parse func(raw []byte) (env.Example, error)) (*env.Dataset, error) {
	ds := &env.Dataset{}
	parseLine := func(line int, raw []byte) (env.Example, error) {
		if err := ctx.Err(); err != nil {
			return env.Example{}, err
		}
		ex, err := parse(raw)
		if err != nil {
			return ex, err
		}
		if ex.ID == "" {
			ex.ID = "line-" + strconv.Itoa(line)
		}
		return ex, nil
	}
	emit := func(_ int, ex env.Example) error {
		ds.Examples = append(ds.Examples, ex)
		return nil
	}
	if path == "" {
		if err := ParseLines(bytes.NewReader(embedded.Data), embedded.Name, parseLine, emit); err != nil {
			return nil, err
		}
		ds.Info = env.DatasetInfo{ID: embedded.Name, Revision: Revision(embedded.Data)}
	} else {
		rev, err := readHashed(path, func(r io.Reader) error { return ParseLines(r, path, parseLine, emit) })
		if err != nil {
			return nil, err
		}
		ds.Info = env.DatasetInfo{ID: path, Revision: rev}
	}
	if len(ds.Examples) == 0 {
		return nil, fmt.Errorf("dataset %s has no rows", ds.Info.ID)
	}
	ds.Info.Rows = len(ds.Examples)
	return ds, nil
}
