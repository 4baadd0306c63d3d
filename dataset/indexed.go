package dataset

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/svbench/svbench/env"
)

// ParseFunc turns one row into an Example (an environment's ParseExample
// plus whatever checks evaluation needs).
type ParseFunc func(raw []byte) (env.Example, error)

// Indexed is a JSONL dataset read lazily: opening it validates every row and
// records where each one starts, and Example(i) re-reads and parses row i on
// demand. Memory is 12 bytes per row instead of the parsed rows, which is
// what lets a 100k-example evaluation run in constant memory.
type Indexed struct {
	f     *os.File
	path  string
	info  env.DatasetInfo
	off   []int64
	size  []int32
	line  []int32
	parse ParseFunc
}

// OpenIndexed scans path once: it validates each row with parse (errors name
// the file, line and field), computes the revision, and indexes the rows.
func OpenIndexed(path string, parse ParseFunc) (*Indexed, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open dataset: %w", err)
	}
	d := &Indexed{f: f, path: path, parse: parse}
	if err := d.scan(); err != nil {
		f.Close()
		return nil, err
	}
	if len(d.off) == 0 {
		f.Close()
		return nil, fmt.Errorf("dataset %s has no rows", path)
	}
	return d, nil
}

func (d *Indexed) scan() error {
	h := sha256.New()
	br := bufio.NewReaderSize(io.TeeReader(d.f, h), 1<<20)
	var pos int64
	line := 0
	for {
		b, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long row: gather it whole.
			full := append([]byte(nil), b...)
			for errors.Is(err, bufio.ErrBufferFull) {
				b, err = br.ReadSlice('\n')
				full = append(full, b...)
				if len(full) > MaxLine {
					return &RowError{File: d.path, Line: line + 1, Msg: fmt.Sprintf("is longer than %d bytes", MaxLine)}
				}
			}
			b = full
		}
		if len(b) > 0 {
			line++
			raw := bytes.TrimSpace(b)
			if len(raw) > 0 {
				if _, perr := d.parse(raw); perr != nil {
					return locate(perr, d.path, line)
				}
				d.off = append(d.off, pos)
				d.size = append(d.size, int32(len(b)))
				d.line = append(d.line, int32(line))
			}
			pos += int64(len(b))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: line %d: %w", d.path, line+1, err)
		}
	}
	d.info = env.DatasetInfo{ID: d.path, Revision: formatRevision(h.Sum(nil)), Rows: len(d.off), Split: env.SplitFromPath(d.path)}
	return nil
}

// locate fills a RowError's file and line, or wraps another error with
// them.
func locate(err error, file string, line int) error {
	var re *RowError
	if errors.As(err, &re) {
		cp := *re
		cp.File, cp.Line = file, line
		return &cp
	}
	return fmt.Errorf("%s: line %d: %w", file, line, err)
}

// Info describes the dataset.
func (d *Indexed) Info() env.DatasetInfo { return d.info }

// Len is the number of rows.
func (d *Indexed) Len() int { return len(d.off) }

// Example reads and parses row i; it is safe for concurrent use (pread).
// Rows without an id get "line-N", as eager loaders name them.
func (d *Indexed) Example(i int) (env.Example, error) {
	buf := make([]byte, d.size[i])
	if _, err := d.f.ReadAt(buf, d.off[i]); err != nil && !errors.Is(err, io.EOF) {
		return env.Example{}, fmt.Errorf("%s: line %d: %w", d.path, d.line[i], err)
	}
	ex, err := d.parse(bytes.TrimSpace(buf))
	if err != nil {
		return env.Example{}, locate(err, d.path, int(d.line[i]))
	}
	if ex.ID == "" {
		ex.ID = "line-" + strconv.Itoa(int(d.line[i]))
	}
	return ex, nil
}

// Close releases the file.
func (d *Indexed) Close() error { return d.f.Close() }
