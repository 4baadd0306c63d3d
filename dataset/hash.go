package dataset

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
)

// HashKey identifies a tuple of strings: 16 hex digits of sha256 over the
// parts, each prefixed with its length so that ("ab","c") and ("a","bc")
// differ. Builders use it for row ids, dedup keys and per-stratum seeds.
func HashKey(parts ...string) string {
	sum := hashParts(parts)
	return hex.EncodeToString(sum[:8])
}

func hashParts(parts []string) [32]byte {
	h := sha256.New()
	var n [8]byte
	for _, p := range parts {
		binary.BigEndian.PutUint64(n[:], uint64(len(p)))
		h.Write(n[:])
		h.Write([]byte(p))
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// HashKey64 is HashKey as an integer, for seeds and sampling priorities.
func HashKey64(parts ...string) uint64 {
	sum := hashParts(parts)
	return binary.BigEndian.Uint64(sum[:8])
}
