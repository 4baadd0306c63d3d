package ingest

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"

	"github.com/svbench/svbench/env"
)

// TRL's GRPOTrainer (log_completions=True) writes one table per logging
// step to <output_dir>/completions/completions_<step:05d>.parquet, from a
// pandas DataFrame of: "step", "prompt" and "completion" (the decoded
// texts, chat template included for conversational prompts), one float
// column per reward function named after the function (NaN where it
// returned None), the columns reward functions added with log_extra, and
// "advantage". Nothing in it names the dataset row: the row is found by an
// example-id column the reward function logs (DefaultIDColumn).
const (
	TRLCompletionsDir  = "completions"
	trlCompletionsGlob = "completions_*.parquet"
	// DefaultIDColumn is the column a TRL table is joined to the dataset by.
	DefaultIDColumn = "example_id"
)

// IsParquet reports whether path names a parquet file or a directory of
// TRL completions tables.
func IsParquet(path string) bool {
	if strings.EqualFold(filepath.Ext(path), ".parquet") {
		return true
	}
	files, _ := trlFiles(path)
	return len(files) > 0
}

// trlFiles lists the completions tables under dir (dir itself, or its
// completions/ folder: TRL's output_dir), in step order (the zero-padded
// step sorts as text).
func trlFiles(dir string) ([]string, error) {
	st, err := os.Stat(dir)
	if err != nil || !st.IsDir() {
		return nil, err
	}
	for _, d := range []string{dir, filepath.Join(dir, TRLCompletionsDir)} {
		m, err := filepath.Glob(filepath.Join(d, trlCompletionsGlob))
		if err != nil {
			return nil, err
		}
		if len(m) > 0 {
			slices.Sort(m)
			return m, nil
		}
	}
	return nil, nil
}

func parquetRow(r parquet.Row, names []string, nested []bool) map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(names))
	lists := map[string][]json.RawMessage{}
	r.Range(func(col int, vals []parquet.Value) bool {
		if col >= len(names) {
			return true
		}
		name := names[col]
		if nested[col] {
			for _, v := range vals {
				if !v.IsNull() {
					lists[name] = append(lists[name], parquetValue(v))
				}
			}
			if _, ok := lists[name]; !ok {
				lists[name] = []json.RawMessage{}
			}
			return true
		}
		m[name] = json.RawMessage("null")
		if len(vals) > 0 {
			m[name] = parquetValue(vals[0])
		}
		return true
	})
	for k, l := range lists {
		b, _ := json.Marshal(l)
		m[k] = b
	}
	return m
}

func parquetValue(v parquet.Value) json.RawMessage {
	if v.IsNull() {
		return json.RawMessage("null")
	}
	var x any
	switch v.Kind() {
	case parquet.Boolean:
		x = v.Boolean()
	case parquet.Int32:
		x = v.Int32()
	case parquet.Int64:
		x = v.Int64()
	case parquet.Float:
		x = float64(v.Float())
	case parquet.Double:
		x = v.Double()
	case parquet.ByteArray, parquet.FixedLenByteArray:
		b := v.ByteArray()
		if !utf8.Valid(b) {
			return json.RawMessage("null")
		}
		x = string(b)
	default:
		return json.RawMessage("null")
	}
	if f, ok := x.(float64); ok && (math.IsNaN(f) || math.IsInf(f, 0)) {
		return json.RawMessage("null")
	}
	b, err := json.Marshal(x)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// MissingIDError says a TRL table cannot be joined to the dataset: it has
// no column naming the example each completion answered.
type MissingIDError struct {
	Path     string
	Column   string
	Columns  []string
	Explicit bool // the column was asked for (--id-column), not the default
}

func (e *MissingIDError) Error() string {
	how := fmt.Sprintf(`TRL's table holds only step, prompt, completion, one column per reward function, advantage and what reward functions add with log_extra; have a reward function log the id (log_extra(%q, kwargs[%q]) with the dataset's example_id column) or pass --id-column NAME for a column that holds it`, e.Column, e.Column)
	return fmt.Sprintf("%s: no example-id column %q to join the completions to the dataset by (columns: %s); %s",
		e.Path, e.Column, strings.Join(e.Columns, ", "), how)
}

// decodeTRL reads one row of a completions table. The prompt and the
// completion are text (TRL logs the decoded strings); the example is
// looked up by idColumn, which must be present.
func decodeTRL(m map[string]json.RawMessage, idColumn string) (*Row, error) {
	in, okIn := stringValue(m["prompt"])
	out, okOut := stringValue(m["completion"])
	if !okIn || !okOut {
		return nil, fmt.Errorf(`TRL completions row: columns "prompt" and "completion" must be text`)
	}
	id, err := idField(m, idColumn)
	if err != nil {
		return nil, err
	}
	msg := func(role env.Role, text string) json.RawMessage {
		b, _ := json.Marshal([]env.Message{{Role: role, Content: text}})
		return b
	}
	m["prompt"], m["completion"] = msg(env.RoleUser, in), msg(env.RoleAssistant, out)
	row, err := decodeMap(m)
	if err != nil {
		return nil, err
	}
	row.JoinID = id
	row.Format = FormatTRL
	return row, nil
}
