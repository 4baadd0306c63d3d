package configaudit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"
	jsonpatch "github.com/evanphx/json-patch/v5"
	"sigs.k8s.io/yaml"

	"github.com/svbench/svbench/verify/yamlsafe"
)

// Patch kinds.
const (
	PatchUnified  = "unified_diff"
	PatchJSON     = "json_patch"
	maxPatchedOut = MaxFixtureBytes
)

// applyFixPatch applies the model's patch to the fixture: a unified diff
// that must touch only the fixture's own path, or (when the text starts with
// '[') an RFC 6902 JSON Patch over the YAML document(s). Hostile input: the
// result is bounded and every failure is an error naming the reason.
func applyFixPatch(fx *fixture, patch string) ([]byte, string, error) {
	p := strings.TrimSpace(patch)
	if strings.HasPrefix(p, "```") {
		// Models often fence the diff inside the JSON string.
		p = strings.TrimPrefix(p, "```diff")
		p = strings.TrimPrefix(p, "```patch")
		p = strings.TrimPrefix(p, "```json")
		p = strings.TrimPrefix(p, "```")
		p = strings.TrimSuffix(strings.TrimSpace(p), "```")
		p = strings.TrimSpace(p)
	}
	if strings.HasPrefix(p, "[") {
		out, err := applyJSONPatch(fx, p)
		return out, PatchJSON, err
	}
	out, err := applyUnified(fx, p+"\n")
	return out, PatchUnified, err
}

func applyUnified(fx *fixture, diff string) ([]byte, error) {
	if !strings.Contains(diff, "@@") {
		return nil, errors.New("patch is neither a unified diff (no @@ hunk) nor a JSON Patch array")
	}
	if !strings.Contains(diff, "\n--- ") && !strings.HasPrefix(diff, "--- ") {
		// A bare hunk: give it the fixture's headers.
		diff = "--- a/" + fx.Path + "\n+++ b/" + fx.Path + "\n" + diff
	}
	files, _, err := gitdiff.Parse(strings.NewReader(diff))
	if err != nil {
		return nil, fmt.Errorf("patch does not parse as a unified diff: %v", err)
	}
	if len(files) != 1 {
		return nil, fmt.Errorf("patch touches %d files; it may change only %s", len(files), fx.Path)
	}
	f := files[0]
	if f.IsBinary || f.IsDelete || f.IsNew || f.IsRename || f.IsCopy {
		return nil, fmt.Errorf("patch must edit %s in place (no create, delete, rename or binary change)", fx.Path)
	}
	for _, name := range []string{f.OldName, f.NewName} {
		if err := patchTarget(name, fx.Path); err != nil {
			return nil, err
		}
	}
	var out bytes.Buffer
	if err := gitdiff.Apply(&out, bytes.NewReader(fx.Content), f); err != nil {
		return nil, fmt.Errorf("patch does not apply to %s: %v", fx.Path, err)
	}
	if out.Len() > maxPatchedOut {
		return nil, fmt.Errorf("patched file is %d bytes, over the %d-byte limit", out.Len(), maxPatchedOut)
	}
	return out.Bytes(), nil
}

// patchTarget accepts the fixture path with or without git's a/ b/ prefix,
// and nothing else: no traversal, no absolute path, no other file.
func patchTarget(name, want string) error {
	n := strings.TrimSpace(name)
	if strings.Contains(n, "..") || path.IsAbs(n) {
		return fmt.Errorf("patch names %q: paths with .. or absolute paths are refused; use %s", truncate(n, 200), want)
	}
	for _, cand := range []string{n, strings.TrimPrefix(n, "a/"), strings.TrimPrefix(n, "b/")} {
		if cand == want || path.Base(want) == cand {
			return nil
		}
	}
	return fmt.Errorf("patch names %q, but only %s may be changed", truncate(n, 200), want)
}

func applyJSONPatch(fx *fixture, p string) ([]byte, error) {
	if fx.Type != FixtureK8s {
		return nil, errors.New("JSON Patch applies to Kubernetes YAML only; send a unified diff for Terraform")
	}
	ops, err := jsonpatch.DecodePatch([]byte(p))
	if err != nil {
		return nil, fmt.Errorf("JSON Patch does not parse: %v", err)
	}
	if len(ops) > 500 {
		return nil, fmt.Errorf("JSON Patch has %d operations; the limit is 500", len(ops))
	}
	docs, err := yamlsafe.Split(fx.Path, fx.Content, yamlsafe.Limits{MaxBytes: MaxFixtureBytes})
	if err != nil {
		return nil, fmt.Errorf("original is not valid YAML: %v", err)
	}
	var vals []any
	for _, d := range docs {
		if d.Empty() {
			continue
		}
		v, err := yamlsafe.Value(d.Node)
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
	}
	// One document is patched as itself; several as a list (/0/..., /1/...).
	var target any = vals
	if len(vals) == 1 {
		target = vals[0]
	}
	js, err := json.Marshal(target)
	if err != nil {
		return nil, err
	}
	opts := jsonpatch.NewApplyOptions()
	opts.EnsurePathExistsOnAdd = true
	patched, err := ops.ApplyWithOptions(js, opts)
	if err != nil {
		return nil, fmt.Errorf("JSON Patch does not apply: %v", err)
	}
	if len(patched) > maxPatchedOut {
		return nil, fmt.Errorf("patched document is over the %d-byte limit", maxPatchedOut)
	}
	var parts [][]byte
	if len(vals) == 1 {
		parts = [][]byte{patched}
	} else {
		var list []json.RawMessage
		if err := json.Unmarshal(patched, &list); err != nil {
			return nil, fmt.Errorf("JSON Patch must keep the document list: %v", err)
		}
		for _, d := range list {
			parts = append(parts, d)
		}
	}
	var out bytes.Buffer
	for i, part := range parts {
		y, err := yaml.JSONToYAML(part)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			out.WriteString("---\n")
		}
		out.Write(y)
	}
	return out.Bytes(), nil
}
