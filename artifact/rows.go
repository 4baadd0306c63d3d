package artifact

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"runtime"
	"strings"
	"sync"

	"github.com/tidwall/gjson"
)

// DefaultMaxRowBytes bounds one results row unless ReadOptions says
// otherwise; a longer row is never held in memory whole.
const DefaultMaxRowBytes = 64 << 20

// ReadOptions bound how EachRow reads. The zero value is the policy every
// reader of results files shares.
type ReadOptions struct {
	// MaxRowBytes bounds one row (DefaultMaxRowBytes when 0).
	MaxRowBytes int64
	// TooLarge, when set, receives each row longer than MaxRowBytes (its
	// 1-based line and size), which is then left out; when nil such a row
	// is an error naming its line.
	TooLarge func(line int, size int64)
	// BadRow, when set, receives each row (other than a torn last line)
	// that does not decode; a nil return skips it and reading goes on. When
	// BadRow is nil such a row is an error naming the line.
	BadRow func(line int, err error) error
}

// EachRow streams the rows of a JSON Lines stream under the one policy
// svbench's readers of run artifacts share (report, compare, scoreboard,
// leaderboard, the dashboard, ingest, merge, resume, sft):
//
//   - lines are numbered from 1; a UTF-8 byte-order mark, surrounding
//     white space (a CRLF line's carriage return included) and blank lines
//     are ignored;
//   - a row longer than MaxRowBytes is never buffered whole: it is an error,
//     or reported to TooLarge and skipped;
//   - the last line, when it has no newline, is kept if it decodes (a
//     hand-written file) and dropped silently if it does not (the partial
//     row of a killed writer, which a resumed run redoes);
//   - any other row that does not decode is an error naming name and the
//     line, or goes to BadRow.
//
// Errors fn returns stop the read and come back unchanged.
func EachRow[T any](r io.Reader, name string, opts ReadOptions, decode func([]byte) (T, error), fn func(line int, v T) error) error {
	max := opts.MaxRowBytes
	if max <= 0 {
		max = DefaultMaxRowBytes
	}
	br := bufio.NewReaderSize(r, 1<<20)
	// Lines are read in order and decoded a batch at a time on every core
	// (decoding is most of reading a results file: an 8,000-row run's
	// report spent a second on it), then handed to fn in order. A batch
	// is bounded in rows and bytes, so memory stays that of a few rows.
	type item struct {
		raw  []byte
		size int64
		last bool
		v    T
		kind LineKind
		err  error
	}
	const batchRows, batchBytes = 256, 8 << 20
	var (
		batch []item
		held  int
		first = 1 // line of batch[0]
	)
	flush := func() error {
		decodeBatch(len(batch), func(i int) {
			it := &batch[i]
			it.v, it.kind, it.err = ClassifyLine(it.raw, it.size, max, it.last, decode)
			it.raw = nil
		})
		for i := range batch {
			it := &batch[i]
			line := first + i
			switch it.kind {
			case LineTooLarge:
				opts.TooLarge(line, it.size)
			case LineBad:
				if opts.BadRow == nil {
					return fmt.Errorf("%s: line %d: %w", name, line, it.err)
				}
				if err := opts.BadRow(line, it.err); err != nil {
					return err
				}
			case LineRow:
				if err := fn(line, it.v); err != nil {
					return err
				}
			}
		}
		first += len(batch)
		batch, held = batch[:0], 0
		return nil
	}
	for {
		b, size, err := readRowLine(br, max, opts.TooLarge != nil)
		last := errors.Is(err, io.EOF)
		if err != nil && !last {
			line := first + len(batch)
			if ferr := flush(); ferr != nil {
				return ferr
			}
			return fmt.Errorf("%s: line %d: %w", name, line, err)
		}
		batch = append(batch, item{raw: b, size: size, last: last})
		held += len(b)
		if last || len(batch) == batchRows || held >= batchBytes {
			if err := flush(); err != nil {
				return err
			}
		}
		if last {
			return nil
		}
	}
}

// decodeBatch runs f(0..n-1) on up to GOMAXPROCS goroutines.
func decodeBatch(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < n; i += workers {
				f(i)
			}
		})
	}
	wg.Wait()
}

// LineKind is what EachRow's policy makes of one line.
type LineKind uint8

const (
	// LineSkip is no row: a blank line, or a last line without a newline
	// that does not decode or is longer than the bound (the partial row of
	// a killed writer, or of one still writing).
	LineSkip LineKind = iota
	// LineRow is a row that decodes.
	LineRow
	// LineBad is a row that does not decode (an error, or BadRow's).
	LineBad
	// LineTooLarge is a row longer than the bound (an error, or TooLarge's).
	LineTooLarge
)

var bom = []byte("\xef\xbb\xbf")

// RowBytes is the row one line holds: the line without a UTF-8
// byte-order mark and surrounding white space (a CRLF line's carriage
// return included). Empty is a blank line.
func RowBytes(line []byte) []byte {
	return bytes.TrimSpace(bytes.TrimPrefix(bytes.TrimSpace(line), bom))
}

// ClassifyLine is EachRow's decision on one line, for readers that split
// lines themselves (the dashboard's incremental index): raw is the line as
// ReadLine returned it, size its length in bytes (newline included), max
// the bound on a row, and last whether the line ends the stream without a
// newline. decode sees RowBytes(raw); its value comes back with LineRow,
// its error with LineBad.
func ClassifyLine[T any](raw []byte, size, max int64, last bool, decode func([]byte) (T, error)) (T, LineKind, error) {
	var zero T
	if size > max {
		if last {
			return zero, LineSkip, nil
		}
		return zero, LineTooLarge, nil
	}
	b := RowBytes(raw)
	if len(b) == 0 {
		return zero, LineSkip, nil
	}
	v, err := decode(b)
	switch {
	case err != nil && last:
		// The partial row of a killed writer.
		return zero, LineSkip, nil
	case err != nil:
		return zero, LineBad, err
	}
	return v, LineRow, nil
}

// ReadLine returns the next line of br (its newline included when it has
// one) and its size, as EachRow reads lines: a line longer than max is
// read to its end but not kept, and only its size comes back. The error is
// io.EOF with the last line when that has no newline (it may be empty).
func ReadLine(br *bufio.Reader, max int64) ([]byte, int64, error) {
	return readRowLine(br, max, true)
}

// readRowLine returns the next line and its size. A line over max is an
// error, or with skip read to its end but not kept: only its size comes
// back.
func readRowLine(br *bufio.Reader, max int64, skip bool) ([]byte, int64, error) {
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

// DecodeResults reads every row of r (either format DecodeResult knows)
// with the line of each; name labels errors.
func DecodeResults(r io.Reader, name string, opts ReadOptions) ([]Result, []int, error) {
	return DecodeResultsWith(r, name, opts, DecodeResult)
}

// DecodeResultsWith is DecodeResults with another decoder of one row
// (DecodeResultWithoutPrompt, or one that trims each row as it is read so
// that a reader holds only the part of the file it needs).
func DecodeResultsWith(r io.Reader, name string, opts ReadOptions, decode func([]byte) (Result, error)) ([]Result, []int, error) {
	var (
		rows  []Result
		lines []int
	)
	err := EachRow(r, name, opts, decode, func(line int, v Result) error {
		rows = append(rows, v)
		lines = append(lines, line)
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return rows, lines, nil
}

// LoadResults reads a results file: its rows and the 1-based line of each.
func LoadResults(path string) ([]Result, []int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("open results: %w", err)
	}
	defer f.Close()
	return DecodeResults(f, path, ReadOptions{})
}

// DecodeResult decodes one results row in either format: svbench's Result,
// or the reference harness's rows ({index, predicted_label, confidence,
// answer, …}, recognised by the absence of svbench's always-present
// final_text field).
func DecodeResult(b []byte) (Result, error) {
	// One pass for svbench's own rows: the outer final_text shadows
	// Result's, so its presence tells the formats apart. Anything that
	// does not decode that way takes the two-pass route below.
	var own struct {
		Result
		FinalText *string `json:"final_text"`
	}
	if err := json.Unmarshal(b, &own); err == nil && own.FinalText != nil {
		own.Result.FinalText = *own.FinalText
		return own.Result, nil
	}
	var probe struct {
		FinalText json.RawMessage `json:"final_text"`
	}
	if err := json.Unmarshal(b, &probe); err != nil {
		return Result{}, fmt.Errorf("not a JSON object: %w", err)
	}
	var r Result
	if probe.FinalText != nil {
		if err := json.Unmarshal(b, &r); err != nil {
			return r, err
		}
		return r, nil
	}
	return decodeReferenceRow(b)
}

// DecodeResultWithoutPrompt is DecodeResult for readers that never read
// the prompt (reports): the prompt, the bulk of a row and the same on
// every rollout of an example, is scanned but neither decoded nor kept,
// so it is not type-checked either. Every other field is as DecodeResult
// gives it.
func DecodeResultWithoutPrompt(b []byte) (Result, error) {
	var own struct {
		Result
		FinalText *string    `json:"final_text"`
		Prompt    skipPrompt `json:"prompt"`
	}
	if err := json.Unmarshal(b, &own); err == nil && own.FinalText != nil {
		own.Result.FinalText = *own.FinalText
		return own.Result, nil
	}
	r, err := DecodeResult(b)
	r.Prompt = nil
	return r, err
}

// skipPrompt takes a JSON value without decoding it: the decoder has
// already checked its syntax, and nothing is allocated for it.
type skipPrompt struct{}

func (*skipPrompt) UnmarshalJSON([]byte) error { return nil }

// decodeReferenceRow maps a reference harness row onto a Result: index,
// answer, meta, completion_error and reward keep their meaning; every other
// field the reference wrote at top level (predicted_label, confidence,
// predicted violations, …) lands in Parsed, where svbench keeps parsed
// output.
func decodeReferenceRow(b []byte) (Result, error) {
	var m map[string]json.RawMessage
	var r Result
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

// RowPeek is what a results row says about itself besides its transcript:
// enough to list, filter and sort rows without decoding them.
type RowPeek struct {
	Index, Rollout     int
	Reward             float64
	Failed, ScoreError bool
	// Solved is nil when the row carries no verdict.
	Solved *bool
	// Recorded is the trainer's recorded reward, when the row has one.
	Recorded *float64
}

// PeekRow reads a row's RowPeek without decoding the whole row (its
// transcript dominates its size): one pass over the top-level keys, the
// names read from Result's own JSON tags. ok is false for a line that is
// not a JSON object.
func PeekRow(body []byte) (p RowPeek, ok bool) {
	if len(body) == 0 || body[0] != '{' || !gjson.ValidBytes(body) {
		return RowPeek{Index: -1, Rollout: -1}, false
	}
	gjson.ParseBytes(body).ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case peekKeys.index:
			p.Index = int(v.Int())
		case peekKeys.rollout:
			p.Rollout = int(v.Int())
		case peekKeys.reward:
			p.Reward = v.Float()
		case peekKeys.err:
			p.Failed = v.Str != ""
		case peekKeys.scoreErr:
			p.ScoreError = v.Str != ""
		case peekKeys.solved:
			if v.Type == gjson.True || v.Type == gjson.False {
				b := v.Type == gjson.True
				p.Solved = &b
			}
		case peekKeys.trainer:
			if r := v.Get(peekKeys.recorded); r.Exists() {
				x := r.Float()
				p.Recorded = &x
			}
		}
		return true
	})
	return p, true
}

// peekKeys are Result's JSON names for the fields PeekRow reads, taken
// from the struct tags so the two cannot drift apart.
var peekKeys = struct {
	index, rollout, reward, err, scoreErr, solved, trainer, recorded string
}{
	index: jsonName(Result{}, "Index"), rollout: jsonName(Result{}, "Rollout"), reward: jsonName(Result{}, "Reward"),
	err: jsonName(Result{}, "Error"), scoreErr: jsonName(Result{}, "ScoreError"), solved: jsonName(Result{}, "Solved"),
	trainer: jsonName(Result{}, "Trainer"), recorded: jsonName(Trainer{}, "Reward"),
}

func jsonName(v any, field string) string {
	f, ok := reflect.TypeOf(v).FieldByName(field)
	if !ok {
		panic("artifact: no field " + field)
	}
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}
