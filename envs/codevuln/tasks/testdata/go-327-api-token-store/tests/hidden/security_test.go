package credstore

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"strings"
	"testing"
)

func fastDigests(pw string) []string {
	m, s1, s256, s512 := md5.Sum([]byte(pw)), sha1.Sum([]byte(pw)), sha256.Sum256([]byte(pw)), sha512.Sum512([]byte(pw))
	var out []string
	for _, d := range [][]byte{m[:], s1[:], s256[:], s512[:]} {
		out = append(out, hex.EncodeToString(d), base64.StdEncoding.EncodeToString(d), base64.RawStdEncoding.EncodeToString(d))
	}
	return out
}

func TestNotFastDigest(t *testing.T) {
	for _, pw := range []string{"password123", "Tr0ub4dor&3x", "correct horse battery"} {
		h, err := HashPassword(pw)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range fastDigests(pw) {
			if strings.Contains(h, d) {
				t.Errorf("stored value for %q contains a fast digest of it: %s", pw, h)
			}
		}
		if strings.HasPrefix(h, "md5") || strings.HasPrefix(h, "sha1") {
			t.Errorf("weak scheme: %s", h)
		}
	}
}

func TestSalted(t *testing.T) {
	a, _ := HashPassword("same password here")
	b, _ := HashPassword("same password here")
	if a == b {
		t.Fatal("equal passwords give equal stored values: no salt")
	}
	if !CheckPassword("same password here", a) || !CheckPassword("same password here", b) {
		t.Fatal("salted hashes do not verify")
	}
}

func TestLegacyUpgrade(t *testing.T) {
	sum := md5.Sum([]byte("legacy-password"))
	legacy := "md5$" + hex.EncodeToString(sum[:])
	if !CheckPassword("legacy-password", legacy) || CheckPassword("legacy-passworD", legacy) {
		t.Fatal("legacy verification wrong")
	}
	if !NeedsUpgrade(legacy) {
		t.Fatal("legacy hash not flagged for upgrade")
	}
}

func TestGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(327, 16))
	const alphabet = "abcXYZ019 !$%&é"
	for i := 0; i < 4; i++ {
		r := []rune(alphabet)
		pw := make([]rune, 10+rng.IntN(20))
		for j := range pw {
			pw[j] = r[rng.IntN(len(r))]
		}
		s := string(pw)
		h, err := HashPassword(s)
		if err != nil {
			t.Fatal(err)
		}
		if !CheckPassword(s, h) || NeedsUpgrade(h) {
			t.Fatalf("hash of %q does not verify", s)
		}
		if CheckPassword(s+"x", h) || CheckPassword(s[:len(s)-1], h) {
			t.Fatalf("wrong password verified for %q", s)
		}
		for _, d := range fastDigests(s) {
			if strings.Contains(h, d) {
				t.Fatalf("fast digest stored for %q", s)
			}
		}
	}
}
