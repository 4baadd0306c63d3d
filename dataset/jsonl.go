// Package dataset reads and writes JSONL rows, identifies datasets by content
// hash, and provides the deterministic shuffles, splits and de-duplication
// that data builders and the runner share.
package dataset

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
)

// MaxLine bounds one JSONL row (E2 rows carry whole manifests).
const MaxLine = 64 << 20

// RowError names the file, line and field of a bad row and what to do.
type RowError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *RowError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc = fmt.Sprintf("%s: line %d", loc, e.Line)
	}
	msg := e.Msg
	if e.Field != "" {
		msg = fmt.Sprintf("field %q %s", e.Field, e.Msg)
	}
	if loc == "" {
		// Not yet placed in a file (FieldError): no empty "file: " prefix.
		return msg
	}
	return loc + ": " + msg
}

// FieldError builds a RowError for callers that know only the field; the
// reader fills in file and line.
func FieldError(field, format string, args ...any) error {
	return &RowError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// EachLine calls fn for every non-blank line of a JSONL stream with its
// 1-based line number. A RowError returned by fn gets file and line filled in;
// any other error is wrapped with them.
func EachLine(r io.Reader, name string, fn func(line int, raw []byte) error) error {
	return scanLines(r, name, func(line int, raw []byte) error {
		if !json.Valid(raw) {
			return notJSON(name, line)
		}
		if err := fn(line, raw); err != nil {
			return locate(err, name, line)
		}
		return nil
	}, nil)
}

// ParseLines is EachLine for a reader whose parse is most of the cost (a
// dataset of thousands of rows): lines are read in order and parsed a batch
// at a time on GOMAXPROCS goroutines, and emit sees the values in line
// order. Errors are EachLine's: the first bad line's, placed in its file
// and line, with nothing after it emitted.
func ParseLines[T any](r io.Reader, name string, parse func(line int, raw []byte) (T, error), emit func(line int, v T) error) error {
	const batchLines, batchBytes = 512, 4 << 20
	type item struct {
		line int
		raw  []byte
		v    T
		err  error
	}
	var (
		batch []item
		held  int
	)
	flush := func() error {
		workers := min(runtime.GOMAXPROCS(0), len(batch))
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := w; i < len(batch); i += workers {
					it := &batch[i]
					if !json.Valid(it.raw) {
						it.err = notJSON(name, it.line)
						continue
					}
					if v, err := parse(it.line, it.raw); err != nil {
						it.err = locate(err, name, it.line)
					} else {
						it.v = v
					}
				}
			})
		}
		wg.Wait()
		for i := range batch {
			it := &batch[i]
			if it.err != nil {
				return it.err
			}
			if err := emit(it.line, it.v); err != nil {
				return locate(err, name, it.line)
			}
		}
		clear(batch) // drop the values' references before reuse
		batch, held = batch[:0], 0
		return nil
	}
	return scanLines(r, name, func(line int, raw []byte) error {
		batch = append(batch, item{line: line, raw: bytes.Clone(raw)})
		held += len(raw)
		if len(batch) >= batchLines || held >= batchBytes {
			return flush()
		}
		return nil
	}, flush)
}

// scanLines calls fn for every non-blank line, trimmed, and then end (when
// not nil) before a read error is returned: the lines read before a line
// too long are dealt with first, as a reader in order would.
func scanLines(r io.Reader, name string, fn func(line int, raw []byte) error, end func() error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(TrimBOM(sc.Bytes()))
		if len(raw) == 0 {
			continue
		}
		if err := fn(line, raw); err != nil {
			return err
		}
	}
	if end != nil {
		if err := end(); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return &RowError{File: name, Line: line + 1, Msg: fmt.Sprintf("is longer than %d bytes", MaxLine)}
		}
		return fmt.Errorf("%s: line %d: %w", name, line+1, err)
	}
	return nil
}

func notJSON(name string, line int) error {
	return &RowError{File: name, Line: line, Msg: "is not valid JSON (each line must be one JSON object)"}
}

// ReadFile reads a JSONL file, returning its revision alongside.
func ReadFile(path string, fn func(line int, raw []byte) error) (revision string, err error) {
	return readHashed(path, func(r io.Reader) error { return EachLine(r, path, fn) })
}

// readHashed opens path and hands read its content, hashing what it reads.
func readHashed(path string, read func(io.Reader) error) (revision string, err error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("open dataset: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if err := read(io.TeeReader(f, h)); err != nil {
		return "", err
	}
	return formatRevision(h.Sum(nil)), nil
}

// Revision is the reference's dataset_revision: "sha256:" + 16 hex digits of
// the file's content hash.
func Revision(content []byte) string {
	sum := sha256.Sum256(content)
	return formatRevision(sum[:])
}

func formatRevision(sum []byte) string {
	return "sha256:" + hex.EncodeToString(sum)[:16]
}

// TrimBOM drops a UTF-8 byte-order mark, which Windows editors put at the
// start of a file and JSON decoders refuse.
func TrimBOM(b []byte) []byte { return bytes.TrimPrefix(b, []byte("\xef\xbb\xbf")) }

// ReadLine reads one line of at most max bytes; past max it drains the rest
// of the line without keeping it and reports long, so one oversized row
// costs no memory and the rows after it are still read.
func ReadLine(br *bufio.Reader, max int) (line []byte, long bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !long {
			line = append(line, chunk...)
			if len(line) > max {
				long, line = true, nil
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, long, err
	}
}
