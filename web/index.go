package web

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"sync"

	"github.com/svbench/svbench/artifact"
)

// rowInfo is what the transcript list needs of one results.jsonl line
// without decoding it again: where it is, and what filters and sorting read.
type rowInfo struct {
	off     int64
	n       int64 // bytes, its newline included when it has one
	index   int32
	rollout int32
	reward  float64
	flags   uint8
	line    int32 // 1-based, as artifact.EachRow numbers lines
}

const (
	flagError      = 1 << iota // the model call failed
	flagScoreErr               // scoring failed
	flagSolved                 // the environment judged it solved
	flagUnsolved               // the environment judged it not solved
	flagDisagree               // a recorded reward differs from svbench's
	flagUnreadable             // the line is not a results row
	flagTooLarge               // the line is longer than the dashboard reads
)

// unscored are the flags of rows without a reward to sort by.
const unscored = flagError | flagUnreadable | flagTooLarge

// fileIndex is an offset index of one results file, built once and
// extended as the file grows: an open dashboard reads only the appended
// tail of a run in progress. A rewritten file (a resumed run compacts its
// results) is noticed by identity and size, and indexed again.
//
// Which lines are rows is artifact's policy (artifact.ClassifyLine, as
// artifact.EachRow and so report apply it), with the dashboard's bound on
// a row: a too-large row or a line that is not a results row is listed
// (flagged) where the report sets it aside; a blank line is not a row; the
// last line, while it has no newline, is a row if it decodes (a finished
// run whose writer left no final newline) and is left out if it does not
// (a writer mid-row, or a killed one). Only newline-terminated lines are
// final: such a last line is read again, whole, when the file grows.
type fileIndex struct {
	mu sync.Mutex
	// name is the file under the dashboard's root; open opens it there.
	name   string
	open   func() (*os.File, error)
	maxRow int64
	info   os.FileInfo
	// end is the offset just past the last newline-terminated line read,
	// and lines the number of lines before it.
	end   int64
	lines int
	// read is the offset the last update read to (end, plus an
	// unterminated last line): the file has not changed while its size is
	// read.
	read int64
	rows []rowInfo
	// tail: the last entry of rows is the unterminated last line at end.
	tail bool
	// gen counts rebuilds, so cached selections of a rewritten file are
	// never reused.
	gen int
	// sel caches filtered and sorted row positions (pagination walks the
	// same selection page after page).
	sel map[selKey][]int32
}

type selKey struct {
	filter, order string
	gen, n        int
}

// selection returns the positions of rows kept by filter in order,
// computed once per state of the file.
func (ix *fileIndex) selection(filter, order string, rows []rowInfo, compute func() []int32) []int32 {
	ix.mu.Lock()
	k := selKey{filter, order, ix.gen, len(rows)}
	if s, ok := ix.sel[k]; ok {
		ix.mu.Unlock()
		return s
	}
	ix.mu.Unlock()
	s := compute()
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.sel == nil || len(ix.sel) > 32 {
		ix.sel = map[selKey][]int32{}
	}
	ix.sel[k] = s
	return s
}

// update brings the index up to date with the file and returns a snapshot
// of its rows (safe to read without the lock: entries are never modified,
// only appended or replaced wholesale).
func (ix *fileIndex) update() ([]rowInfo, error) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	f, err := ix.open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if ix.info == nil || !os.SameFile(ix.info, st) || st.Size() < ix.read {
		ix.rows, ix.end, ix.lines, ix.read, ix.tail = nil, 0, 0, 0, false
		ix.gen++
	}
	ix.info = st
	if st.Size() == ix.read {
		return ix.rows, nil
	}
	if ix.tail {
		// The unterminated last line has grown: it is read again whole.
		// Clipped, so appending never writes into a snapshot handed out.
		ix.rows = slices.Clip(ix.rows[:len(ix.rows)-1])
		ix.tail = false
		ix.gen++
	}
	if _, err := f.Seek(ix.end, io.SeekStart); err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	off := ix.end
	for {
		raw, n, err := artifact.ReadLine(br, ix.maxRow)
		last := errors.Is(err, io.EOF)
		if err != nil && !last {
			// Read again from this line next time.
			ix.end, ix.read = off, off
			return ix.rows, nil
		}
		line := ix.lines + 1
		decode := func(b []byte) (rowInfo, error) { return rowOf(b), nil }
		if last {
			// Whether an unterminated last line is a row is artifact's
			// decision (it decodes), not the index's cheaper reading.
			decode = func(b []byte) (rowInfo, error) {
				if _, err := artifact.DecodeResult(b); err != nil {
					return rowInfo{}, err
				}
				return rowOf(b), nil
			}
		}
		ri, kind, _ := artifact.ClassifyLine(raw, n, ix.maxRow, last, decode)
		switch kind {
		case artifact.LineTooLarge:
			ri = rowInfo{index: -1, rollout: -1, flags: flagTooLarge}
		case artifact.LineBad:
			ri = rowInfo{index: -1, rollout: -1, flags: flagUnreadable}
		}
		if kind != artifact.LineSkip {
			ri.off, ri.n, ri.line = off, n, int32(line)
			ix.rows = append(ix.rows, ri)
		}
		if last {
			ix.tail = kind != artifact.LineSkip
			ix.end, ix.read = off, off+n
			return ix.rows, nil
		}
		off += n
		ix.lines = line
	}
}

// rowOf reads what the index keeps of one row (body is
// artifact.RowBytes of its line, not empty).
func rowOf(body []byte) rowInfo {
	p, ok := artifact.PeekRow(body)
	if !ok {
		return rowInfo{index: -1, rollout: -1, flags: flagUnreadable}
	}
	ri := rowInfo{index: int32(p.Index), rollout: int32(p.Rollout), reward: p.Reward}
	if p.Failed {
		ri.flags |= flagError
	}
	if p.ScoreError {
		ri.flags |= flagScoreErr
	}
	if p.Solved != nil {
		ri.flags |= map[bool]uint8{true: flagSolved, false: flagUnsolved}[*p.Solved]
	}
	if p.Recorded != nil && !p.Failed && math.Abs(*p.Recorded-p.Reward) > 1e-9 {
		ri.flags |= flagDisagree
	}
	return ri
}

// readRow decodes the row at ri; a row over the index's bound is a
// *tooLargeRow and is not read.
func (ix *fileIndex) readRow(ri rowInfo) (*artifact.Result, error) {
	if ri.flags&flagTooLarge != 0 || ri.n > ix.maxRow {
		return nil, &tooLargeRow{size: ri.n}
	}
	f, err := ix.open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]byte, ri.n)
	if _, err := f.ReadAt(buf, ri.off); err != nil {
		return nil, fmt.Errorf("%s at offset %d: %w (the file changed; reload)", ix.name, ri.off, err)
	}
	// Decoded as artifact's readers decode it (a byte-order mark or CRLF
	// ending is not part of the row; a reference harness row is mapped).
	r, err := artifact.DecodeResult(artifact.RowBytes(buf))
	if err != nil {
		return nil, fmt.Errorf("%s: line %d (offset %d): %w", ix.name, ri.line, ri.off, err)
	}
	return &r, nil
}

// indexes holds one fileIndex per results file.
type indexes struct {
	mu sync.Mutex
	m  map[string]*fileIndex
}

// get returns the index of the file name under the root, which open
// opens; rows longer than maxRow are indexed as too large.
func (x *indexes) get(name string, open func() (*os.File, error), maxRow int64) *fileIndex {
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.m == nil {
		x.m = map[string]*fileIndex{}
	}
	ix := x.m[name]
	if ix == nil {
		ix = &fileIndex{name: name, open: open, maxRow: maxRow}
		x.m[name] = ix
	}
	return ix
}
