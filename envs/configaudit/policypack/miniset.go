package policypack

import (
	"bufio"
	"bytes"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
)

// The embedded mini set is Generate(MiniSetSeed, MiniSetSize): 12 rows per
// pack. TestMiniSetReproducible holds data/mini.jsonl equal to it.
const (
	MiniSetSeed = 20261123
	MiniSetSize = 96
)

//go:embed data/mini.jsonl
var miniJSONL []byte

// MiniSet returns the embedded mini set's rows.
func MiniSet() ([]Row, error) { return ReadRows(bytes.NewReader(miniJSONL)) }

// MiniSetJSONL is the embedded mini set as JSON lines.
func MiniSetJSONL() []byte { return bytes.Clone(miniJSONL) }

// WriteRows writes rows as JSON lines.
func WriteRows(w io.Writer, rows []Row) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return err
		}
	}
	return nil
}

// ReadRows reads JSON-lines rows written by WriteRows.
func ReadRows(r io.Reader) ([]Row, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 8<<20)
	var out []Row
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var row Row
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&row); err != nil {
			return nil, fmt.Errorf("policypack rows: line %d: %w", n, err)
		}
		out = append(out, row)
	}
	return out, sc.Err()
}
