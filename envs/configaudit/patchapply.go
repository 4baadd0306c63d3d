package configaudit

import (
	"errors"
	"strings"

	"github.com/svbench/svbench/verify/patch"
)

// applyFixPatch applies the model's patch to the fixture through
// verify/patch: a unified diff that may touch only the fixture's own path,
// or (text starting with '[') an RFC 6902 JSON Patch. Two model habits are
// forgiven first: a markdown fence around the diff, and a bare @@ hunk
// without ---/+++ headers.
func applyFixPatch(fx *fixture, p string) ([]byte, string, error) {
	p = strings.TrimSpace(p)
	if strings.HasPrefix(p, "```") {
		if nl := strings.IndexByte(p, '\n'); nl >= 0 {
			p = p[nl+1:]
		}
		p = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(p), "```"))
	}
	if strings.HasPrefix(p, "@@") {
		p = "--- a/" + fx.Path + "\n+++ b/" + fx.Path + "\n" + p
	}
	if !strings.HasPrefix(p, "[") && !strings.Contains(p, "@@") {
		return nil, string(patch.KindUnifiedDiff), errors.New("patch is neither a unified diff (no @@ hunk) nor a JSON Patch array")
	}
	if !strings.HasSuffix(p, "\n") {
		p += "\n"
	}
	out, kind, err := patch.Apply(fx.Path, fx.Content, p, patch.Limits{MaxBytes: MaxPatchBytes})
	if err == nil && len(out) > MaxFixtureBytes {
		return nil, string(kind), errors.New("patched file is over the size limit")
	}
	return out, string(kind), err
}
