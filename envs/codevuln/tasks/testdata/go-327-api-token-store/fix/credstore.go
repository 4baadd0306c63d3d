package credstore

import (
	"crypto/md5"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// MinLength is the shortest accepted password.
const MinLength = 10

// Parameters of new hashes.
const (
	scheme     = "pbkdf2-sha512"
	iterations = 210_000 // OWASP Password Storage Cheat Sheet (2023) for PBKDF2-HMAC-SHA512
	saltBytes  = 16
	keyBytes   = 32
)

// ErrWeak is returned for passwords that are too short.
var ErrWeak = errors.New("credstore: password too short")

var b64 = base64.RawStdEncoding

// HashPassword returns the value to store for pw:
// pbkdf2-sha512$<iterations>$<salt>$<key>.
func HashPassword(pw string) (string, error) {
	if len(pw) < MinLength {
		return "", ErrWeak
	}
	salt := make([]byte, saltBytes)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	key, err := pbkdf2.Key(sha512.New, pw, salt, iterations, keyBytes)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s$%d$%s$%s", scheme, iterations, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// CheckPassword reports whether pw matches stored.
func CheckPassword(pw, stored string) bool {
	parts := strings.Split(stored, "$")
	if len(parts) == 2 && parts[0] == "md5" {
		// Legacy rows still verify so that the login flow can upgrade them.
		sum := md5.Sum([]byte(pw))
		return subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(parts[1])) == 1
	}
	if len(parts) != 4 || parts[0] != scheme {
		return false
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n < 10_000 || n > 10_000_000 {
		return false
	}
	salt, err1 := b64.DecodeString(parts[2])
	want, err2 := b64.DecodeString(parts[3])
	if err1 != nil || err2 != nil || len(want) == 0 {
		return false
	}
	got, err := pbkdf2.Key(sha512.New, pw, salt, n, len(want))
	return err == nil && subtle.ConstantTimeCompare(got, want) == 1
}

// NeedsUpgrade reports whether stored should be re-hashed at next login.
func NeedsUpgrade(stored string) bool {
	parts := strings.Split(stored, "$")
	return len(parts) != 4 || parts[0] != scheme || parts[1] != strconv.Itoa(iterations)
}
