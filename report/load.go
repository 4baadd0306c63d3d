package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/dataset"
)

// maxLine bounds one results row by default; larger lines are refused,
// not buffered.
const maxLine = 64 << 20

// LoadResults reads a results file in either format, row by row:
// svbench's artifact.Result, or the reference harness's rows
// ({index, predicted_label, confidence, answer, …}, recognised by the absence
// of svbench's always-present final_text field). It returns the rows and
// the 1-based line of each.
//
// A last line without a newline is kept when it is a complete JSON object
// (a hand-written file) and dropped otherwise (a writer killed mid-row; the
// run resumes it).
func LoadResults(path string) ([]artifact.Result, []int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open results: %w", err)
	}
	defer f.Close()
	return DecodeResults(f, path, LoadOptions{})
}

// LoadOptions bound how DecodeResults reads.
type LoadOptions struct {
	// MaxRowBytes bounds one row (64 MiB when 0). A longer row is never
	// held in memory whole.
	MaxRowBytes int64
	// TooLarge, when set, receives each row longer than MaxRowBytes (its
	// 1-based line and size), which is then left out; when nil such a row
	// is an error. Readers that show what they can (the dashboard) set it.
	TooLarge func(line int, size int64)
}

// DecodeResults reads rows from r as LoadResults reads a file; name labels
// errors.
func DecodeResults(r io.Reader, name string, opts LoadOptions) ([]artifact.Result, []int, error) {
	if opts.MaxRowBytes <= 0 {
		opts.MaxRowBytes = maxLine
	}
	var (
		rows  []artifact.Result
		lines []int
	)
	br := bufio.NewReaderSize(r, 1<<20)
	for line := 1; ; line++ {
		b, size, err := readLine(br, opts.MaxRowBytes, opts.TooLarge != nil)
		tail := errors.Is(err, io.EOF)
		if err != nil && !tail {
			return nil, nil, fmt.Errorf("%s: line %d: %w", name, line, err)
		}
		if size > opts.MaxRowBytes && !tail {
			opts.TooLarge(line, size)
		}
		b = bytes.TrimSpace(dataset.TrimBOM(b))
		if len(b) > 0 {
			r, perr := decodeRow(b)
			switch {
			case perr != nil && tail:
				// Partial row of a killed writer.
			case perr != nil:
				return nil, nil, fmt.Errorf("%s: line %d: %w", name, line, perr)
			default:
				rows = append(rows, r)
				lines = append(lines, line)
			}
		}
		if tail {
			return rows, lines, nil
		}
	}
}

// readLine returns the next line and its size. A line over max is an
// error, or with skip read to its end but not kept: only its size comes
// back.
func readLine(br *bufio.Reader, max int64, skip bool) ([]byte, int64, error) {
	var buf []byte
	var size int64
	for {
		chunk, err := br.ReadSlice('\n')
		size += int64(len(chunk))
		switch {
		case size <= max:
			buf = append(buf, chunk...)
		case !skip:
			return nil, size, fmt.Errorf("row longer than %d MiB", max>>20)
		default:
			buf = nil
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return buf, size, err
	}
}

// decodeRow detects the row's format and decodes it.
func decodeRow(b []byte) (artifact.Result, error) {
	var probe struct {
		FinalText json.RawMessage `json:"final_text"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return artifact.Result{}, fmt.Errorf("not a JSON object: %w", err)
	}
	var r artifact.Result
	if probe.FinalText != nil {
		if err := json.Unmarshal(b, &r); err != nil {
			return r, err
		}
		return r, nil
	}
	return decodeReferenceRow(b)
}

// decodeReferenceRow maps a reference harness row onto a Result: index,
// answer, meta, completion_error and reward keep their meaning; every other
// field the reference wrote at top level (predicted_label, confidence,
// predicted violations, …) lands in Parsed, where svbench keeps parsed
// output.
func decodeReferenceRow(b []byte) (artifact.Result, error) {
	var m map[string]json.RawMessage
	var r artifact.Result
	if err := json.Unmarshal(b, &m); err != nil {
		return r, err
	}
	r.Parsed = map[string]any{}
	for k, v := range m {
		var err error
		switch k {
		case "index":
			err = json.Unmarshal(v, &r.Index)
		case "answer":
			r.Answer = v
		case "meta":
			err = json.Unmarshal(v, &r.Meta)
		case "model":
			_ = json.Unmarshal(v, &r.Model) // informative only
		case "completion_error", "error":
			var s any
			if json.Unmarshal(v, &s) == nil && s != nil && s != "" {
				r.Error = fmt.Sprint(s)
			}
		case "completion":
			_ = json.Unmarshal(v, &r.FinalText) // a string in the reference; anything else is not needed
		case "reward":
			var f float64
			if json.Unmarshal(v, &f) == nil {
				r.Reward = f
			}
		case "prompt":
		default:
			var x any
			if err := json.Unmarshal(v, &x); err == nil {
				r.Parsed[k] = x
			}
		}
		if err != nil {
			return r, fmt.Errorf("field %q: %w", k, err)
		}
	}
	return r, nil
}
