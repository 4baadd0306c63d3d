package codevuln

import (
	"bytes"
	"encoding/json"
	"fmt"
	textclip "github.com/svbench/svbench/base/clip"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/svbench/svbench/envs/codevuln/taskset"
	"github.com/svbench/svbench/verify/patch"
)

// Bounds on model output.
const (
	MaxAnswerBytes = 512 << 10
	MaxDiffBytes   = 256 << 10
	MaxFileBytes   = taskset.MaxFileBytes
)

// Answer forms.
const (
	FormJSON = "json"
	FormDiff = "diff"
	FormCode = "code"
	FormNone = "none"
)

// Answer is what the parser read from the model's final message.
type Answer struct {
	Form string
	// Diff is a unified diff over the task's editable files.
	Diff string
	// Code is a whole patched file (for File, or the only editable file).
	Code string
	File string
	// Reference schema fields, when a JSON object was given.
	TestsPassed    any
	HasTestsPassed bool
	HasDiff        bool
	Explanation    string
	HasExplanation bool
	// Err says why nothing usable was found.
	Err string
	raw string // the text parsed, for the reference rubric's own parser
}

var fenceRe = regexp.MustCompile("(?s)```([A-Za-z0-9_+-]*)[ \t]*\r?\n(.*?)```")

// ParseAnswer reads an answer: a JSON object in the reference's schema
// {diff, tests_passed, explanation, patched_code?} (bare or fenced), a
// fenced or bare unified diff, or a fenced whole file.
func ParseAnswer(text string) Answer {
	if len(text) > MaxAnswerBytes {
		return Answer{Form: FormNone, Err: fmt.Sprintf("answer is %d bytes, over the %d-byte limit", len(text), MaxAnswerBytes)}
	}
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	a := parseText(text)
	a.raw = text
	return a
}

func parseText(text string) Answer {
	trimmed := strings.TrimSpace(text)
	if a, ok := parseJSONAnswer(trimmed); ok {
		return a
	}
	fences := fenceRe.FindAllStringSubmatch(text, 8)
	for _, f := range fences {
		if l := strings.ToLower(f[1]); l == "json" || l == "" {
			if a, ok := parseJSONAnswer(strings.TrimSpace(f[2])); ok {
				return a
			}
		}
	}
	for _, f := range fences {
		if l := strings.ToLower(f[1]); l == "diff" || l == "patch" || looksLikeDiff(f[2]) {
			return Answer{Form: FormDiff, Diff: f[2], HasDiff: true}
		}
	}
	if looksLikeDiff(trimmed) {
		return Answer{Form: FormDiff, Diff: trimmed + "\n", HasDiff: true}
	}
	for _, f := range fences {
		switch strings.ToLower(f[1]) {
		case "python", "py", "python3", "go", "golang", "c", "cpp", "c++", "cc", "cxx", "javascript", "js", "":
			return Answer{Form: FormCode, Code: f[2]}
		}
	}
	return Answer{Form: FormNone, Err: "no JSON answer, unified diff or fenced patched file found"}
}

func looksLikeDiff(s string) bool {
	s = strings.TrimLeft(s, "\r\n")
	return (strings.HasPrefix(s, "--- ") || strings.HasPrefix(s, "diff --git ")) && strings.Contains(s, "\n@@ ") ||
		strings.Contains(s, "\n--- ") && strings.Contains(s, "\n+++ ") && strings.Contains(s, "\n@@ ")
}

func parseJSONAnswer(s string) (Answer, bool) {
	if !strings.HasPrefix(s, "{") {
		return Answer{}, false
	}
	var raw map[string]json.RawMessage
	dec := json.NewDecoder(strings.NewReader(s))
	if err := dec.Decode(&raw); err != nil {
		return Answer{}, false
	}
	a := Answer{Form: FormJSON}
	str := func(k string) (string, bool) {
		v, ok := raw[k]
		if !ok {
			return "", false
		}
		var out string
		if json.Unmarshal(v, &out) != nil {
			return "", true
		}
		return out, true
	}
	a.Diff, a.HasDiff = str("diff")
	a.Explanation, a.HasExplanation = str("explanation")
	if v, ok := raw["tests_passed"]; ok {
		a.HasTestsPassed = true
		var x any
		_ = json.Unmarshal(v, &x)
		a.TestsPassed = x
	}
	for _, k := range []string{"patched_code", "code", "patched_file"} {
		if c, _ := str(k); strings.TrimSpace(c) != "" {
			a.Code = c
			break
		}
	}
	a.File, _ = str("file")
	if strings.TrimSpace(a.Code) == "" && strings.TrimSpace(a.Diff) == "" {
		a.Err = `JSON answer has neither a "diff" nor a "patched_code"`
	}
	return a, true
}

// Candidate is a task's source tree after applying an answer.
type Candidate struct {
	Files Files
	// Changed lists the editable files the answer changed.
	Changed []string
	// Reject says why the answer could not be applied ("" when applied).
	Reject string
}

// ApplyAnswer applies an answer to a task's sources. Whole files replace the
// only editable file (or the named one); diffs may touch editable files only.
func ApplyAnswer(t *taskset.Task, a Answer) Candidate {
	files := Files{}
	for k, v := range t.Src {
		files[k] = v
	}
	c := Candidate{Files: files}
	switch {
	case a.Form == FormJSON && strings.TrimSpace(a.Code) == "" && strings.TrimSpace(a.Diff) == "":
		// The reference's rule: a blank diff leaves the original, which
		// is scored (as a no-op), not refused.
	case a.Form == FormNone || a.Err != "":
		c.Reject = a.Err
	case strings.TrimSpace(a.Code) != "":
		target := a.File
		if target == "" {
			if len(t.Files) != 1 {
				c.Reject = fmt.Sprintf("a whole patched file needs a \"file\" field: this task has %d editable files (%s); or send a unified diff", len(t.Files), strings.Join(t.Files, ", "))
				return c
			}
			target = t.Files[0]
		}
		target = path.Clean(strings.TrimPrefix(target, "./"))
		if !contains(t.Files, target) {
			c.Reject = fmt.Sprintf("file %q is not editable in this task (editable: %s)", textclip.Bytes(target, 100, textclip.Ellipsis), strings.Join(t.Files, ", "))
			return c
		}
		if len(a.Code) > MaxFileBytes {
			c.Reject = fmt.Sprintf("patched file is %d bytes, over the %d-byte limit", len(a.Code), MaxFileBytes)
			return c
		}
		code := a.Code
		if !strings.HasSuffix(code, "\n") {
			code += "\n"
		}
		files[target] = []byte(code)
	case strings.TrimSpace(a.Diff) != "":
		if len(a.Diff) > MaxDiffBytes {
			c.Reject = fmt.Sprintf("diff is %d bytes, over the %d-byte limit", len(a.Diff), MaxDiffBytes)
			return c
		}
		parts, err := splitDiff(a.Diff, t.Files)
		if err != nil {
			c.Reject = err.Error()
			return c
		}
		for _, p := range parts {
			out, err := patch.ApplyUnified(p.file, files[p.file], p.text, patch.Limits{MaxBytes: MaxDiffBytes})
			if err != nil {
				c.Reject = fmt.Sprintf("%s: %v", p.file, err)
				return c
			}
			if len(out) > MaxFileBytes {
				c.Reject = fmt.Sprintf("%s would grow to %d bytes, over the %d-byte limit", p.file, len(out), MaxFileBytes)
				return c
			}
			files[p.file] = out
		}
	default:
		c.Reject = "empty answer: no diff and no patched code"
		return c
	}
	for _, f := range t.Files {
		if !bytes.Equal(files[f], t.Src[f]) {
			c.Changed = append(c.Changed, f)
		}
	}
	return c
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

type diffPart struct{ file, text string }

// splitDiff cuts a multi-file unified diff into per-file diffs and maps each
// onto an editable file by its header names (a/, b/ prefixes and base names
// accepted; anything else refused).
func splitDiff(diff string, editable []string) ([]diffPart, error) {
	diff = strings.ReplaceAll(diff, "\r\n", "\n")
	lines := strings.SplitAfter(diff, "\n")
	var starts []int
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "diff --git ") {
			starts = append(starts, i)
			// Skip the --- line of this file: it belongs to the same part.
			for i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "@@") && !strings.HasPrefix(lines[i+1], "diff --git ") {
				i++
			}
			continue
		}
		if strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ ") {
			starts = append(starts, i)
			i++
		}
	}
	if len(starts) == 0 {
		return nil, fmt.Errorf("no file diff found (expected ---/+++ headers and @@ hunks)")
	}
	var parts []diffPart
	seen := map[string]bool{}
	for k, s := range starts {
		end := len(lines)
		if k+1 < len(starts) {
			end = starts[k+1]
		}
		text := strings.Join(lines[s:end], "")
		file, err := diffTarget(lines[s:end], editable)
		if err != nil {
			return nil, err
		}
		if seen[file] {
			return nil, fmt.Errorf("diff patches %s twice; send one section per file", file)
		}
		seen[file] = true
		parts = append(parts, diffPart{file: file, text: text})
	}
	return parts, nil
}

func diffTarget(lines []string, editable []string) (string, error) {
	var names []string
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "+++ "):
			names = append(names, headerName(l[4:]))
		case strings.HasPrefix(l, "--- "):
			names = append(names, headerName(l[4:]))
		case strings.HasPrefix(l, "@@"):
			goto done
		}
	}
done:
	for _, n := range names {
		if n == "/dev/null" || n == "" {
			continue
		}
		c := path.Clean(n)
		for _, p := range []string{"a/", "b/"} {
			if strings.HasPrefix(c, p) && contains(editable, c[2:]) {
				return c[2:], nil
			}
		}
		if contains(editable, c) {
			return c, nil
		}
		for _, e := range editable {
			if path.Base(e) == path.Base(c) && !strings.Contains(c, "..") && !strings.HasPrefix(c, "/") {
				return e, nil
			}
		}
		return "", fmt.Errorf("diff header names %q, which is not an editable file of this task (editable: %s)", textclip.Bytes(n, 100, textclip.Ellipsis), strings.Join(editable, ", "))
	}
	return "", fmt.Errorf("diff section without file names")
}

func headerName(h string) string {
	h = strings.TrimRight(h, "\n")
	if i := strings.IndexByte(h, '\t'); i >= 0 {
		h = h[:i]
	}
	h = strings.TrimSpace(h)
	if len(h) >= 2 && h[0] == '"' {
		var s string
		if json.Unmarshal([]byte(h), &s) == nil {
			return s
		}
	}
	return h
}
