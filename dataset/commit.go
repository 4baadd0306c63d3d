package dataset

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
)

// RowHash is the sha256 of a row's canonical JSON (object keys sorted,
// insignificant whitespace removed), so reformatting a file or reordering
// keys does not change it. Rows that are not valid JSON hash as raw bytes.
func RowHash(raw []byte) [32]byte {
	return sha256.Sum256(Canonical(raw))
}

// Canonical re-encodes a JSON value with sorted object keys and no HTML
// escaping; invalid JSON is returned trimmed but otherwise unchanged.
func Canonical(raw []byte) []byte {
	raw = bytes.TrimSpace(raw)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return raw
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// Commitment is a content commitment to a set of rows: "sha256:" + the hex
// sha256 over the sorted 32-byte row hashes. It does not depend on row order
// or formatting, so the holder of a gated dataset can publish the commitment
// and later prove which rows were evaluated without releasing them early;
// publishing the row hashes as well lets anyone check single rows.
type Commitment struct {
	hashes [][32]byte
}

// Add records one row.
func (c *Commitment) Add(raw []byte) { c.hashes = append(c.hashes, RowHash(raw)) }

// Rows is how many rows were added.
func (c *Commitment) Rows() int { return len(c.hashes) }

// SortedHashes returns the row hashes in the order the commitment hashes
// them.
func (c *Commitment) SortedHashes() [][32]byte {
	hs := slices.Clone(c.hashes)
	slices.SortFunc(hs, func(a, b [32]byte) int { return bytes.Compare(a[:], b[:]) })
	return hs
}

// Sum returns the commitment string.
func (c *Commitment) Sum() string {
	h := sha256.New()
	for _, x := range c.SortedHashes() {
		h.Write(x[:])
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil))
}

// CommitReader computes the commitment of a JSONL stream; name is used in
// errors.
func CommitReader(r io.Reader, name string) (string, int, error) {
	var c Commitment
	err := EachLine(r, name, func(_ int, raw []byte) error {
		c.Add(raw)
		return nil
	})
	if err != nil {
		return "", 0, fmt.Errorf("commit: %w", err)
	}
	return c.Sum(), c.Rows(), nil
}
