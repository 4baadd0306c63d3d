package configaudit

import (
	"errors"
	"fmt"
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
	if !strings.HasPrefix(p, "[") {
		p += missingTrailingContext(p)
	}
	out, kind, err := patch.Apply(fx.Path, fx.Content, p, patch.Limits{MaxBytes: MaxPatchBytes})
	if err == nil && len(out) > MaxFixtureBytes {
		return nil, string(kind), errors.New("patched file is over the size limit")
	}
	return out, string(kind), err
}

// missingTrailingContext restores the blank context lines a diff's last
// hunk ends with when they were trimmed away (a context line for an empty
// line is a single space, which answers, JSON round trips and the
// TrimSpace above all drop). It returns the lines to append, at most the
// three context lines a hunk ends with, and only when the old and new
// sides are short by the same count, so a hunk that is wrong in any other
// way still fails.
func missingTrailingContext(p string) string {
	i := strings.LastIndex(p, "\n@@ ")
	if i < 0 {
		if !strings.HasPrefix(p, "@@ ") {
			return ""
		}
	} else {
		p = p[i+1:]
	}
	header, body, _ := strings.Cut(p, "\n")
	var oldStart, oldN, newStart, newN int
	if _, err := fmt.Sscanf(header, "@@ -%d,%d +%d,%d @@", &oldStart, &oldN, &newStart, &newN); err != nil {
		return ""
	}
	gotOld, gotNew := 0, 0
	for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "+"):
			gotNew++
		case strings.HasPrefix(l, "-"):
			gotOld++
		case strings.HasPrefix(l, "\\"):
		default:
			gotOld++
			gotNew++
		}
	}
	d := oldN - gotOld
	if d <= 0 || d > 3 || newN-gotNew != d {
		return ""
	}
	return strings.Repeat(" \n", d)
}
