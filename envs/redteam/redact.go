package redteam

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// RedactedPrefix opens every redacted message.
const RedactedPrefix = "[REDACTED unsafe content"

// redacted is the stand-in for a message judged unsafe: enough to count,
// deduplicate and audit it (a hash, the category, the length), nothing to
// reuse it.
func redacted(raw, category string) string {
	sum := sha256.Sum256([]byte(raw))
	return fmt.Sprintf("%s sha256:%s category:%s chars:%d]", RedactedPrefix, hex.EncodeToString(sum[:]), category, len([]rune(raw)))
}

// IsRedacted reports whether a message is a redaction stand-in.
func IsRedacted(s string) bool { return strings.HasPrefix(s, RedactedPrefix) }
