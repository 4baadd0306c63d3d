package credstore

import (
	"bytes"
	"crypto/md5"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// OWASP Password Storage Cheat Sheet (2023): the least PBKDF2 iteration
// counts per HMAC digest.
var owaspPBKDF2 = map[string]int{"sha1": 1_300_000, "sha256": 600_000, "sha512": 210_000}

var digests = map[string]func() hash.Hash{"sha1": sha1.New, "sha256": sha256.New, "sha512": sha512.New}

// Self-describing PBKDF2 formats whose digest and count can be read back
// from the stored value: pbkdf2-sha512$N$salt$key (passlib writes it with a
// leading $), Django's pbkdf2_sha256$N$salt$key, Werkzeug's
// pbkdf2:sha256:N$salt$key.
var storedPBKDF2 = regexp.MustCompile(`^\$?pbkdf2[-_:](sha1|sha256|sha512)[$:](\d+)\$([^$]+)\$([^$]+)$`)

// Bytes of salt given to the KDF and of derived key stored, at least.
const minSalt, minKey = 16, 16

func fastDigests(pw string) []string {
	m, s1, s256, s512 := md5.Sum([]byte(pw)), sha1.Sum([]byte(pw)), sha256.Sum256([]byte(pw)), sha512.Sum512([]byte(pw))
	var out []string
	for _, d := range [][]byte{m[:], s1[:], s256[:], s512[:]} {
		out = append(out, hex.EncodeToString(d), base64.StdEncoding.EncodeToString(d), base64.RawStdEncoding.EncodeToString(d))
	}
	return out
}

// decodings lists the byte strings s may stand for: base64 (standard or
// URL-safe, padded or not, passlib's "." for "+"), hex, or s itself (Django
// and Werkzeug hand the salt string to the KDF as it is).
func decodings(s string) [][]byte {
	var out [][]byte
	add := func(b []byte, err error) {
		if err != nil {
			return
		}
		for _, o := range out {
			if bytes.Equal(o, b) {
				return
			}
		}
		out = append(out, b)
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		add(enc.DecodeString(s))
	}
	add(base64.RawStdEncoding.DecodeString(strings.TrimRight(strings.ReplaceAll(s, ".", "+"), "=")))
	add(hex.DecodeString(s))
	add([]byte(s), nil)
	return out
}

// stored is a stored value read back: the digest, the count (and where it
// is written) and the salt and key as written.
type stored struct {
	value, digest, salt, key string
	n, countAt, countEnd     int
}

func readStored(h string) (stored, bool) {
	m := storedPBKDF2.FindStringSubmatchIndex(h)
	if m == nil {
		return stored{}, false
	}
	n, err := strconv.Atoi(h[m[4]:m[5]])
	if err != nil {
		return stored{}, false
	}
	return stored{value: h, digest: h[m[2]:m[3]], n: n, countAt: m[4], countEnd: m[5], salt: h[m[6]:m[7]], key: h[m[8]:m[9]]}, true
}

// derivedFrom reports whether the stored key is PBKDF2 of pw under the
// stored digest, count and salt, computed here: nothing the code does
// about timing or constants enters the verdict.
func (s stored) derivedFrom(pw string) bool {
	var keys [][]byte
	size := 0
	for _, k := range decodings(s.key) {
		if len(k) >= minKey {
			keys = append(keys, k)
			size = max(size, len(k))
		}
	}
	if len(keys) == 0 {
		return false
	}
	for _, salt := range decodings(s.salt) {
		if len(salt) < minSalt {
			continue
		}
		got, err := pbkdf2.Key(digests[s.digest], pw, salt, s.n, size)
		if err != nil {
			continue
		}
		for _, k := range keys {
			// PBKDF2 keys of different lengths share a prefix.
			if bytes.Equal(got[:len(k)], k) {
				return true
			}
		}
	}
	return false
}

// The property is read off the stored value: it must name PBKDF2, its
// digest and count; the count must reach OWASP's for the digest; and
// recomputing PBKDF2 here from the password and the stored salt must give
// the stored key. A salted fast digest, a stated count that was not the
// one used, or time spent on anything but this password fail.
func TestStoredValueIsASlowKDF(t *testing.T) {
	for _, pw := range []string{"Tr0ub4dor&3x é"} {
		h, err := HashPassword(pw)
		if err != nil {
			t.Fatal(err)
		}
		s, ok := readStored(h)
		if !ok {
			t.Fatalf("%q does not name PBKDF2, its digest and count in a format these tests read (e.g. pbkdf2-sha512$<iterations>$<salt>$<key>)", h)
		}
		if s.n < owaspPBKDF2[s.digest] {
			t.Errorf("%q: %d PBKDF2-HMAC-%s iterations, OWASP asks for %d", h, s.n, strings.ToUpper(s.digest), owaspPBKDF2[s.digest])
			continue
		}
		if !s.derivedFrom(pw) {
			t.Errorf("%q is not PBKDF2-HMAC-%s of the password with the stored salt (at least %d bytes) and count", h, strings.ToUpper(s.digest), minSalt)
		}
		if NeedsUpgrade(h) {
			t.Errorf("a fresh hash %q needs an upgrade", h)
		}
		if weaker := h[:s.countAt] + "1000" + h[s.countEnd:]; !NeedsUpgrade(weaker) {
			t.Errorf("a 1000-iteration hash %q is not upgraded", weaker)
		}
	}
}

func TestNotFastDigest(t *testing.T) {
	for _, pw := range []string{"password123", "Tr0ub4dor&3x"} {
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
	if sa, ok := readStored(a); ok {
		if sb, ok := readStored(b); ok && sa.salt == sb.salt {
			t.Fatalf("the same salt for two hashes: %s, %s", a, b)
		}
	}
	if !CheckPassword("same password here", b) {
		t.Fatal("a salted hash does not verify")
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
	// One password: every hash and check is a deliberately slow KDF, and
	// each test's process has the same time limit.
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
