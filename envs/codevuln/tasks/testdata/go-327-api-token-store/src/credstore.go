package credstore

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"strings"
)

// MinLength is the shortest accepted password.
const MinLength = 10

// ErrWeak is returned for passwords that are too short.
var ErrWeak = errors.New("credstore: password too short")

// HashPassword returns the value to store for pw.
func HashPassword(pw string) (string, error) {
	if len(pw) < MinLength {
		return "", ErrWeak
	}
	sum := md5.Sum([]byte(pw))
	return "md5$" + hex.EncodeToString(sum[:]), nil
}

// CheckPassword reports whether pw matches stored.
func CheckPassword(pw, stored string) bool {
	scheme, digest, ok := strings.Cut(stored, "$")
	if !ok || scheme != "md5" {
		return false
	}
	sum := md5.Sum([]byte(pw))
	return hex.EncodeToString(sum[:]) == digest
}

// NeedsUpgrade reports whether stored should be re-hashed at next login.
func NeedsUpgrade(stored string) bool {
	return !strings.HasPrefix(stored, "md5$")
}
