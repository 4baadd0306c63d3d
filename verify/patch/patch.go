// Package patch applies model-written patches to one configuration file:
// unified diffs (parsed and applied with github.com/bluekeyes/go-gitdiff) and
// RFC 6902 JSON Patches over YAML or JSON documents.
//
// Patches are hostile input. Every rejection is a *RejectError with a reason
// a model (or its author) can act on: absolute paths, ".." components,
// headers that name a file other than the target, binary patches, file
// creation, deletion, renames and copies, diffs touching more than one file,
// and patches over the size or hunk limits are refused before anything is
// applied.
//
// # Context and offsets
//
// Context and removed lines must match the original exactly: there is no
// fuzz factor, whitespace is significant, and a hunk whose lines cannot be
// found is rejected. A hunk whose lines are found at a different line number
// than its header states is accepted at the nearest matching position
// (searching forward from the previous hunk, nearest to the stated line, ties
// to the earlier line), as GNU patch does with "Hunk #1 succeeded at 12
// (offset 3 lines)". Offsets are accepted because models count lines badly
// while copying context faithfully, and because the reference environment
// applied patches with GNU patch, so rejecting them would score correct
// fixes as failures; exact context keeps a hunk from landing on unrelated
// text, and the search never moves a hunk before the end of the previous one.
//
// # Nesting
//
// A JSON Patch is measured by nesting.JSON before it is decoded: one
// nested deeper than Limits.MaxDepth is refused with a *RejectError that
// matches nesting.ErrTooDeep. A unified diff is read line by line and
// nests nothing. Neither form says how deep the patched file nests: that
// depends on the file's syntax, so callers measure the result (package
// nesting) before a parser of that syntax reads it.
package patch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/svbench/svbench/verify/nesting"
)

// Kind names the form of a patch.
type Kind string

// Patch forms Apply recognises.
const (
	KindUnifiedDiff Kind = "unified-diff"
	KindJSONPatch   Kind = "json-patch"
)

// Default limits: a fix to one manifest is a few hunks.
const (
	DefaultMaxBytes = 256 << 10
	DefaultMaxHunks = 64
)

// Limits bound a patch. Zero fields take the defaults. MaxHunks also bounds
// the number of JSON Patch operations; MaxDepth bounds how deeply a JSON
// Patch nests (nesting.DefaultMax).
type Limits struct {
	MaxBytes int
	MaxHunks int
	MaxDepth int
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxHunks <= 0 {
		l.MaxHunks = DefaultMaxHunks
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = nesting.DefaultMax
	}
	return l
}

// RejectError is a patch refused on policy or because it does not apply.
type RejectError struct {
	Reason string
	// Err is the cause when another package's error decided the refusal
	// (a *nesting.Error), so errors.Is and errors.As reach it.
	Err error
}

func (e *RejectError) Error() string { return "patch rejected: " + e.Reason }

// Unwrap returns Err.
func (e *RejectError) Unwrap() error { return e.Err }

func rejectf(format string, args ...any) error {
	return &RejectError{Reason: fmt.Sprintf(format, args...)}
}

// IsReject reports whether err is a *RejectError.
func IsReject(err error) bool {
	var r *RejectError
	return errors.As(err, &r)
}

// Apply applies patch to original: a JSON Patch when the patch text starts
// with "[", a unified diff otherwise.
func Apply(target string, original []byte, patch string, limits Limits) ([]byte, Kind, error) {
	if strings.HasPrefix(strings.TrimSpace(patch), "[") {
		out, err := ApplyJSONPatch(original, patch, limits)
		return out, KindJSONPatch, err
	}
	out, err := ApplyUnified(target, original, patch, limits)
	return out, KindUnifiedDiff, err
}

// ApplyUnified applies a single-file unified diff to original, which is the
// content of target. See the package documentation for what is accepted.
func ApplyUnified(target string, original []byte, diff string, limits Limits) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, rejectf("malformed diff (%v)", r)
		}
	}()
	limits = limits.withDefaults()
	if len(diff) > limits.MaxBytes {
		return nil, rejectf("diff is %d bytes, over the %d-byte limit", len(diff), limits.MaxBytes)
	}
	// Line endings are not content: a diff written with CRLF (Windows
	// clients, some chat UIs) applies to an LF file, and an LF diff to a
	// CRLF file, whose endings the result keeps.
	diff = strings.ReplaceAll(diff, "\r\n", "\n")
	if bytes.Contains(original, []byte("\r\n")) {
		lf, err := ApplyUnified(target, bytes.ReplaceAll(original, []byte("\r\n"), []byte("\n")), diff, limits)
		if err != nil {
			return nil, err
		}
		return bytes.ReplaceAll(lf, []byte("\n"), []byte("\r\n")), nil
	}
	if strings.TrimSpace(diff) == "" {
		return nil, rejectf("empty diff")
	}
	if strings.Contains(diff, "GIT binary patch") || strings.Contains(diff, "\nBinary files ") || strings.HasPrefix(diff, "Binary files ") {
		return nil, rejectf("binary patches are not accepted")
	}
	if err := checkHeaderNames(target, diff); err != nil {
		return nil, err
	}
	files, _, err := gitdiff.Parse(strings.NewReader(diff))
	if err != nil {
		return nil, rejectf("cannot parse diff: %v", err)
	}
	switch {
	case len(files) == 0:
		return nil, rejectf("no file diff found (expected ---/+++ headers and @@ hunks)")
	case len(files) > 1:
		return nil, rejectf("diff touches %d files; send one diff for %s only", len(files), target)
	}
	f := files[0]
	switch {
	case f.IsBinary || f.BinaryFragment != nil:
		return nil, rejectf("binary patches are not accepted")
	case f.IsDelete:
		return nil, rejectf("diff deletes %s; fix the configuration instead", target)
	case f.IsNew:
		return nil, rejectf("diff creates a new file; patch the existing %s", target)
	case f.IsRename || f.IsCopy:
		return nil, rejectf("renames and copies are not accepted")
	case len(f.TextFragments) == 0:
		return nil, rejectf("diff has no hunks")
	case len(f.TextFragments) > limits.MaxHunks:
		return nil, rejectf("diff has %d hunks, over the limit of %d", len(f.TextFragments), limits.MaxHunks)
	}
	for _, name := range []string{f.OldName, f.NewName} {
		if name != "" {
			if err := checkName(target, name); err != nil {
				return nil, err
			}
		}
	}
	lines := splitLines(original)
	next := 0 // first original line (0-based) not consumed by an earlier hunk
	for i, frag := range f.TextFragments {
		if err := frag.Validate(); err != nil {
			return nil, rejectf("hunk %d: %v", i+1, err)
		}
		pos, ok := locate(lines, frag, next)
		if !ok {
			return nil, rejectf("hunk %d (@@ -%d,%d @@) does not apply: its context and removed lines are not in %s", i+1, frag.OldPosition, frag.OldLines, target)
		}
		frag.OldPosition = int64(pos + 1)
		next = pos + int(frag.OldLines)
	}
	var buf bytes.Buffer
	if err := gitdiff.Apply(&buf, bytes.NewReader(original), f); err != nil {
		return nil, rejectf("does not apply: %v", err)
	}
	return buf.Bytes(), nil
}

// locate finds where a hunk's preimage (context and removed lines) matches,
// at or after line next, nearest to the line its header states.
func locate(lines [][]byte, frag *gitdiff.TextFragment, next int) (int, bool) {
	var pre [][]byte
	for _, l := range frag.Lines {
		if l.Old() {
			pre = append(pre, []byte(l.Line))
		}
	}
	stated := int(frag.OldPosition) - 1
	if stated < 0 {
		stated = 0
	}
	if len(pre) == 0 {
		// Pure insertion: nothing to match, so the stated line is all there is.
		if stated < next || stated > len(lines) {
			return 0, false
		}
		return stated, true
	}
	if stated > len(lines) {
		stated = len(lines)
	}
	matches := func(at int) bool {
		if at < next || at+len(pre) > len(lines) {
			return false
		}
		for j, p := range pre {
			if !bytes.Equal(lines[at+j], p) {
				return false
			}
		}
		return true
	}
	for d := 0; d <= len(lines); d++ {
		if matches(stated - d) {
			return stated - d, true
		}
		if d > 0 && matches(stated+d) {
			return stated + d, true
		}
		if stated-d < next && stated+d+len(pre) > len(lines) {
			break
		}
	}
	return 0, false
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

// checkHeaderNames validates every file name the diff's headers mention,
// read from the raw text: go-gitdiff keeps only one name of a traditional
// ---/+++ pair, and the other must not escape either.
func checkHeaderNames(target, diff string) error {
	sc := bufio.NewScanner(strings.NewReader(diff))
	sc.Buffer(make([]byte, 64<<10), len(diff)+1)
	var prev []string
	for sc.Scan() {
		prev = append(prev, sc.Text())
	}
	for i, l := range prev {
		switch {
		case strings.HasPrefix(l, "diff --git "):
			for _, n := range strings.Fields(strings.TrimPrefix(l, "diff --git ")) {
				if err := checkName(target, unquote(n)); err != nil {
					return err
				}
			}
		case strings.HasPrefix(l, "--- ") && i+2 < len(prev) && strings.HasPrefix(prev[i+1], "+++ ") && strings.HasPrefix(prev[i+2], "@@ "):
			for _, h := range []string{l[4:], prev[i+1][4:]} {
				name := h
				if j := strings.IndexByte(name, '\t'); j >= 0 {
					name = name[:j]
				}
				name = unquote(strings.TrimSpace(name))
				if name == "/dev/null" {
					continue
				}
				if err := checkName(target, name); err != nil {
					return err
				}
			}
		case strings.HasPrefix(l, "rename from ") || strings.HasPrefix(l, "rename to ") ||
			strings.HasPrefix(l, "copy from ") || strings.HasPrefix(l, "copy to "):
			return rejectf("renames and copies are not accepted")
		}
	}
	return nil
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '"' {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

// checkName accepts a header name that is the target path, the target with
// git's a/ or b/ prefix, or the target's base name.
func checkName(target, name string) error {
	if name == "" {
		return rejectf("diff header without a file name")
	}
	n := strings.ReplaceAll(name, "\\", "/")
	if strings.HasPrefix(n, "/") || (len(n) >= 2 && n[1] == ':') {
		return rejectf("absolute path %q in diff header", name)
	}
	for _, part := range strings.Split(n, "/") {
		if part == ".." {
			return rejectf("path %q in diff header leaves the working directory", name)
		}
	}
	t := path.Clean(strings.ReplaceAll(target, "\\", "/"))
	t = strings.TrimPrefix(t, "/")
	c := path.Clean(n)
	if c == t || c == path.Base(t) {
		return nil
	}
	for _, p := range []string{"a/", "b/"} {
		if strings.HasPrefix(c, p) && (c[2:] == t || c[2:] == path.Base(t)) {
			return nil
		}
	}
	return rejectf("diff header names %q, not the target file %s", name, target)
}
