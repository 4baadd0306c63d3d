// Package tabular streams delimited text (CSV, TSV, Zeek logs) from plain or
// gzip-compressed input in constant memory: one line buffer, reused field
// slices, line numbers for every row and a bounded line length, so a
// multi-gigabyte capture costs the same memory as a small one.
package tabular

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
)

// MaxLine bounds one input line; longer lines are reported as malformed and
// skipped rather than buffered.
const MaxLine = 1 << 20

// gzipMagic starts every gzip member (RFC 1952).
var gzipMagic = []byte{0x1f, 0x8b}

// Decompress returns r itself, or a gzip reader over it when the stream starts
// with the gzip magic bytes, whatever the file is called. The returned
// closer releases the decompressor (it does not close r).
func Decompress(r io.Reader) (io.Reader, func() error, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	head, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	if bytes.Equal(head, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, nil, fmt.Errorf("gzip header: %w (the file looks gzip-compressed but its header is damaged)", err)
		}
		return zr, zr.Close, nil
	}
	return br, func() error { return nil }, nil
}

// Lines reads lines with their 1-based numbers. Line terminators (\n, \r\n)
// are stripped. The returned slice is valid until the next call.
type Lines struct {
	name    string
	br      *bufio.Reader
	line    int
	buf     []byte
	gz      bool
	partial bool
}

// NewLines reads lines from r (already decompressed); name is used in errors.
func NewLines(r io.Reader, name string) *Lines {
	_, gz := r.(*gzip.Reader)
	return &Lines{name: name, br: bufio.NewReaderSize(r, 256<<10), gz: gz}
}

// ErrLineTooLong is returned (wrapped in a LineError) for a line longer than
// MaxLine; reading can continue with the next line.
var ErrLineTooLong = errors.New("line too long")

// LineError locates a problem in the input.
type LineError struct {
	File string
	Line int
	Err  error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s: line %d: %v", e.File, e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// Next returns the next line. At the end it returns io.EOF. A line over
// MaxLine yields a *LineError wrapping ErrLineTooLong (the line is skipped;
// call Next again). A truncated gzip stream or a read failure is a
// *LineError that ends reading.
func (l *Lines) Next() ([]byte, error) {
	l.buf = l.buf[:0]
	tooLong := false
	for {
		chunk, err := l.br.ReadSlice('\n')
		if !tooLong {
			if len(l.buf)+len(chunk) > MaxLine {
				tooLong = true
				l.buf = l.buf[:0]
			} else if len(l.buf) == 0 && err == nil {
				// Fast path: the whole line is in bufio's buffer.
				l.line++
				return trimEOL(chunk), nil
			} else {
				l.buf = append(l.buf, chunk...)
			}
		}
		switch {
		case err == nil:
			l.line++
			if tooLong {
				return nil, &LineError{l.name, l.line, fmt.Errorf("%w: over %d bytes (is this a text log?)", ErrLineTooLong, MaxLine)}
			}
			return trimEOL(l.buf), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(l.buf) == 0 && !tooLong {
				return nil, io.EOF
			}
			l.line++
			l.partial = true
			if tooLong {
				return nil, &LineError{l.name, l.line, fmt.Errorf("%w: over %d bytes", ErrLineTooLong, MaxLine)}
			}
			return trimEOL(l.buf), nil
		default:
			msg := err
			if errors.Is(err, io.ErrUnexpectedEOF) && l.gz {
				msg = fmt.Errorf("gzip stream is truncated (%w): the file is incomplete, re-download or re-compress it", err)
			} else if errors.Is(err, gzip.ErrChecksum) {
				msg = fmt.Errorf("gzip checksum mismatch (%w): the file is corrupt", err)
			}
			return nil, &LineError{l.name, l.line + 1, msg}
		}
	}
}

// Line is the number of the line last returned.
func (l *Lines) Line() int { return l.line }

// EndedWithoutNewline reports whether the last line had no terminator, the
// usual sign of a file cut off mid-write.
func (l *Lines) EndedWithoutNewline() bool { return l.partial }

func trimEOL(b []byte) []byte {
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b
}

// Split cuts a line at delim into dst (reused). Fields are sub-slices of line.
// Double-quoted CSV fields ("a,b", "say ""hi""") are supported within one
// line; quoted fields are unquoted into scratch space. ok is false for an
// unterminated quote.
func Split(dst [][]byte, line []byte, delim byte) (fields [][]byte, ok bool) {
	dst = dst[:0]
	if bytes.IndexByte(line, '"') < 0 {
		for {
			i := bytes.IndexByte(line, delim)
			if i < 0 {
				return append(dst, line), true
			}
			dst = append(dst, line[:i])
			line = line[i+1:]
		}
	}
	return splitQuoted(dst, line, delim)
}

func splitQuoted(dst [][]byte, line []byte, delim byte) ([][]byte, bool) {
	for {
		if len(line) > 0 && line[0] == '"' {
			var f []byte
			i := 1
			for {
				j := bytes.IndexByte(line[i:], '"')
				if j < 0 {
					return dst, false
				}
				f = append(f, line[i:i+j]...)
				i += j + 1
				if i < len(line) && line[i] == '"' {
					f = append(f, '"')
					i++
					continue
				}
				break
			}
			dst = append(dst, f)
			if i >= len(line) {
				return dst, true
			}
			if line[i] != delim {
				return dst, false
			}
			line = line[i+1:]
			continue
		}
		i := bytes.IndexByte(line, delim)
		if i < 0 {
			return append(dst, line), true
		}
		dst = append(dst, line[:i])
		line = line[i+1:]
	}
}

// SniffDelimiter guesses the delimiter of a header line among comma, tab,
// semicolon and pipe: the most frequent wins.
func SniffDelimiter(header []byte) byte {
	best, bestN := byte(','), 0
	for _, d := range []byte{',', '\t', ';', '|'} {
		if n := bytes.Count(header, []byte{d}); n > bestN {
			best, bestN = d, n
		}
	}
	return best
}

// DelimName names a delimiter for messages.
func DelimName(d byte) string {
	switch d {
	case ',':
		return "comma"
	case '\t':
		return "tab"
	case ';':
		return "semicolon"
	case '|':
		return "pipe"
	}
	return fmt.Sprintf("%q", d)
}
