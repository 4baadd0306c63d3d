package web

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/tidwall/gjson"

	"github.com/svbench/svbench/artifact"
)

// rowInfo is what the transcript list needs of one results.jsonl line
// without decoding it again: where it is, and what filters and sorting read.
type rowInfo struct {
	off     int64
	n       int64 // bytes, newline included
	index   int32
	rollout int32
	reward  float64
	flags   uint8
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
type fileIndex struct {
	mu sync.Mutex
	// name is the file under the dashboard's root; open opens it there.
	name   string
	open   func() (*os.File, error)
	maxRow int64
	info   os.FileInfo
	// end is the offset just past the last complete line indexed.
	end  int64
	rows []rowInfo
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
	if ix.info == nil || !os.SameFile(ix.info, st) || st.Size() < ix.end {
		ix.rows, ix.end = nil, 0
		ix.gen++
	}
	ix.info = st
	if st.Size() == ix.end {
		return ix.rows, nil
	}
	if _, err := f.Seek(ix.end, io.SeekStart); err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(f, 1<<20)
	off := ix.end
	for {
		line, n, err := readIndexLine(br, ix.maxRow)
		if err != nil {
			// EOF with a partial line: a writer mid-row; read it next time.
			break
		}
		if n > ix.maxRow {
			ix.rows = append(ix.rows, rowInfo{off: off, n: n, index: -1, rollout: -1, flags: flagTooLarge})
		} else {
			ix.add(off, n, line)
		}
		off += n
	}
	ix.end = off
	return ix.rows, nil
}

// readIndexLine returns the next line and its size. A line longer than max
// is read to its end but not kept: a 200 MiB row costs the index a scan,
// never 200 MiB.
func readIndexLine(br *bufio.Reader, max int64) ([]byte, int64, error) {
	line, err := br.ReadSlice('\n')
	n := int64(len(line))
	if !errors.Is(err, bufio.ErrBufferFull) {
		return line, n, err
	}
	var buf []byte
	if n <= max {
		buf = append(buf, line...)
	}
	for errors.Is(err, bufio.ErrBufferFull) {
		line, err = br.ReadSlice('\n')
		n += int64(len(line))
		if n <= max {
			buf = append(buf, line...)
		} else {
			buf = nil
		}
	}
	return buf, n, err
}

func (ix *fileIndex) add(off, n int64, line []byte) {
	trimmed := len(line)
	for trimmed > 0 && (line[trimmed-1] == '\n' || line[trimmed-1] == '\r' || line[trimmed-1] == ' ') {
		trimmed--
	}
	if trimmed == 0 {
		return
	}
	ri := rowInfo{off: off, n: n}
	body := line[:trimmed]
	// gjson reads the few fields the index keeps without decoding the
	// whole row (transcripts dominate a row's size); ValidBytes keeps
	// malformed lines out.
	if !gjson.ValidBytes(body) || body[0] != '{' {
		ri.flags = flagUnreadable
		ri.index, ri.rollout = -1, -1
		ix.rows = append(ix.rows, ri)
		return
	}
	var failed, hasRecorded bool
	var recorded float64
	// One pass over the top-level keys; values not needed are skipped.
	gjson.ParseBytes(body).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "index":
			ri.index = int32(v.Int())
		case "rollout":
			ri.rollout = int32(v.Int())
		case "reward":
			ri.reward = v.Float()
		case "error":
			if v.Str != "" {
				failed = true
				ri.flags |= flagError
			}
		case "score_error":
			if v.Str != "" {
				ri.flags |= flagScoreErr
			}
		case "solved":
			switch v.Type {
			case gjson.True:
				ri.flags |= flagSolved
			case gjson.False:
				ri.flags |= flagUnsolved
			}
		case "trainer":
			if r := v.Get("recorded_reward"); r.Exists() {
				hasRecorded, recorded = true, r.Float()
			}
		}
		return true
	})
	if hasRecorded && !failed && abs(recorded-ri.reward) > 1e-9 {
		ri.flags |= flagDisagree
	}
	ix.rows = append(ix.rows, ri)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
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
	var r artifact.Result
	if err := json.Unmarshal(buf, &r); err != nil {
		return nil, fmt.Errorf("%s at offset %d: %w", ix.name, ri.off, err)
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
