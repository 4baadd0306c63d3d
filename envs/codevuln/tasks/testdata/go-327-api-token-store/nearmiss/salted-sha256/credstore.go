package credstore

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
)

// MinLength is the shortest accepted password.
const MinLength = 10

const (
	scheme    = "ssha256"
	saltBytes = 16
)

// ErrWeak is returned for passwords that are too short.
var ErrWeak = errors.New("credstore: password too short")

var b64 = base64.RawStdEncoding

// A salt defeats lookup tables; one fast digest is still one guess per hash.
func derive(pw string, salt []byte) []byte {
	sum := sha256.Sum256(append(append([]byte{}, salt...), pw...))
	return sum[:]
}

// HashPassword returns the value to store for pw: ssha256$<salt>$<hash>.
func HashPassword(pw string) (string, error) {
	if len(pw) < MinLength {
		return "", ErrWeak
	}
	salt := make([]byte, saltBytes)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	return scheme + "$" + b64.EncodeToString(salt) + "$" + b64.EncodeToString(derive(pw, salt)), nil
}

// CheckPassword reports whether pw matches stored.
func CheckPassword(pw, stored string) bool {
	parts := strings.Split(stored, "$")
	if len(parts) == 2 && parts[0] == "md5" {
		// Legacy rows still verify so that the login flow can upgrade them.
		sum := md5.Sum([]byte(pw))
		return subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), []byte(parts[1])) == 1
	}
	if len(parts) != 3 || parts[0] != scheme {
		return false
	}
	salt, err1 := b64.DecodeString(parts[1])
	want, err2 := b64.DecodeString(parts[2])
	if err1 != nil || err2 != nil {
		return false
	}
	return subtle.ConstantTimeCompare(derive(pw, salt), want) == 1
}

// NeedsUpgrade reports whether stored should be re-hashed at next login.
func NeedsUpgrade(stored string) bool {
	return !strings.HasPrefix(stored, scheme+"$")
}
