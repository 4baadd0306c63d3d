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

// maxLine bounds one results row; larger lines are refused, not buffered.
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
	var (
		rows  []artifact.Result
		lines []int
	)
	br := bufio.NewReaderSize(f, 1<<20)
	for line := 1; ; line++ {
		b, err := readLine(br)
		tail := errors.Is(err, io.EOF)
		if err != nil && !tail {
			return nil, nil, fmt.Errorf("%s: line %d: %w", path, line, err)
		}
		b = bytes.TrimSpace(dataset.TrimBOM(b))
		if len(b) > 0 {
			r, perr := decodeRow(b)
			switch {
			case perr != nil && tail:
				// Partial row of a killed writer.
			case perr != nil:
				return nil, nil, fmt.Errorf("%s: line %d: %w", path, line, perr)
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

func readLine(br *bufio.Reader) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		buf = append(buf, chunk...)
		if len(buf) > maxLine {
			return nil, fmt.Errorf("row longer than %d MiB", maxLine>>20)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return buf, err
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
