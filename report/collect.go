package report

import (
	"os"
	"path/filepath"
	"sync"

	"github.com/svbench/svbench/artifact"
)

// Collector holds the rows a run writes, decoded and trimmed as
// LoadForReport would read them back, so that the report at the end of a
// run costs no second pass over results.jsonl: an eval of 8,000 rows spent
// a third of a second of its wall time on that pass. Each row is decoded
// from the bytes written to the file under EachRow's line policy
// (artifact.ClassifyLine), so the report sees what a reader of the file
// sees, not the runner's in-memory values.
//
// Add is runner.Config.Written. A Collector only stands for the file when
// the run started it: a resumed run's file holds earlier sessions' rows.
type Collector struct {
	mu    sync.Mutex
	rows  []artifact.Result
	have  []bool
	n     int
	bytes int64 // the lines' size on disk, newlines included
	whole bool  // every line added decoded as a row
}

// NewCollector returns an empty Collector.
func NewCollector() *Collector { return &Collector{whole: true} }

// Add decodes one written row; safe for concurrent use, in any order.
func (c *Collector) Add(line int, row []byte) {
	v, kind, _ := artifact.ClassifyLine(row, int64(len(row))+1, artifact.DefaultMaxRowBytes, false, decodeSlim)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bytes += int64(len(row)) + 1
	if kind != artifact.LineRow || line < 1 {
		// A row the file's reader would refuse or skip: leave it to that
		// reader, which says what is wrong with it and where.
		c.whole = false
		return
	}
	if line > len(c.rows) {
		c.rows = append(c.rows, make([]artifact.Result, line-len(c.rows))...)
		c.have = append(c.have, make([]bool, line-len(c.have))...)
	}
	if c.have[line-1] {
		c.whole = false
		return
	}
	c.rows[line-1], c.have[line-1] = v, true
	c.n++
}

// Rows returns the rows and their lines when every line from 1 to the
// last one added is a row, and ok false otherwise.
func (c *Collector) Rows() (rows []artifact.Result, lines []int, ok bool) {
	rows, lines, _, ok = c.rowsAndSize()
	return rows, lines, ok
}

func (c *Collector) rowsAndSize() ([]artifact.Result, []int, int64, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.whole || c.n != len(c.rows) {
		return nil, nil, 0, false
	}
	lines := make([]int, len(c.rows))
	for i := range lines {
		lines[i] = i + 1
	}
	return c.rows, lines, c.bytes, true
}

// Report builds the report of the run in dir from the collected rows, as
// FromRun(dir, envID, opts) would from the file; when the Collector does
// not hold the whole file (nil, a row it could not keep, or a file of
// another size than the lines added: a resumed run's) it is FromRun.
func (c *Collector) Report(dir, envID string, opts Options) (*Report, error) {
	if c == nil {
		return FromRun(dir, envID, opts)
	}
	rows, lines, size, ok := c.rowsAndSize()
	path := artifact.ResultsPath(dir)
	if st, err := os.Stat(path); !ok || err != nil || st.Size() != size {
		return FromRun(dir, envID, opts)
	}
	return fromRows(filepath.Dir(path), envID, opts, func() ([]artifact.Result, []int, error) {
		return rows, lines, nil
	})
}
