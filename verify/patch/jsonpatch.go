package patch

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"sigs.k8s.io/yaml"

	"github.com/svbench/svbench/verify/nesting"
	"github.com/svbench/svbench/verify/yamlsafe"
)

// ApplyJSONPatch applies an RFC 6902 JSON Patch to a YAML or JSON file.
//
// Addressing: a file holding one document is the patch's root ("/spec/
// replicas"). A YAML file holding several documents is addressed as an array
// of documents, so every path starts with the document's index:
// "/1/spec/template/spec/containers/0/image". Adding or removing whole
// documents ("/-", "/2") is allowed and changes the file's document list.
//
// The result is re-serialised: JSON input gives indented JSON, YAML input
// gives YAML with keys in sorted order and without comments (the verifiers
// read structure, not layout). Negative array indices are not accepted, copy
// operations may not grow the document by more than Limits.MaxBytes, and the
// patch may hold at most Limits.MaxHunks operations.
func ApplyJSONPatch(original []byte, patch string, limits Limits) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, rejectf("malformed JSON Patch (%v)", r)
		}
	}()
	limits = limits.withDefaults()
	if len(patch) > limits.MaxBytes {
		return nil, rejectf("JSON Patch is %d bytes, over the %d-byte limit", len(patch), limits.MaxBytes)
	}
	// encoding/json stops at 10,000 levels, but the values a patch adds
	// become the file's nesting, which the verifiers walk recursively.
	if err := nesting.JSON("JSON Patch", []byte(patch), limits.MaxDepth); err != nil {
		return nil, &RejectError{Reason: err.Error(), Err: err}
	}
	var ops []json.RawMessage
	if err := json.Unmarshal([]byte(patch), &ops); err != nil {
		return nil, rejectf("JSON Patch is not a JSON array of operations: %v", err)
	}
	if len(ops) == 0 {
		return nil, rejectf("JSON Patch has no operations")
	}
	if len(ops) > limits.MaxHunks {
		return nil, rejectf("JSON Patch has %d operations, over the limit of %d", len(ops), limits.MaxHunks)
	}
	p, err := jsonpatch.DecodePatch([]byte(patch))
	if err != nil {
		return nil, rejectf("invalid JSON Patch: %v", err)
	}
	for i, op := range p {
		switch op.Kind() {
		case "add", "remove", "replace", "move", "copy", "test":
		default:
			return nil, rejectf("operation %d: unknown op %q", i, op.Kind())
		}
	}

	return applyOps(original, p, limits)
}

// Canonical is the file as a JSON Patch leaves it when it changes nothing:
// read as YAML (or JSON) and written back the way ApplyJSONPatch writes its
// result. Comparing a patched file with it shows what the operations
// changed, not the re-serialisation.
func Canonical(original []byte, limits Limits) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, rejectf("malformed file (%v)", r)
		}
	}()
	return applyOps(original, nil, limits.withDefaults())
}

func applyOps(original []byte, p jsonpatch.Patch, limits Limits) (out []byte, err error) {
	isJSON := bytes.HasPrefix(bytes.TrimSpace(original), []byte("{"))
	var doc []byte
	multi := false
	if isJSON {
		if !json.Valid(original) {
			return nil, rejectf("the target file is not valid JSON")
		}
		doc = original
	} else {
		docs, err := yamlsafe.Split("", original, yamlsafe.Limits{})
		if err != nil {
			return nil, rejectf("the target file cannot be read as YAML: %v", err)
		}
		var values []any
		for _, d := range docs {
			if d.Empty() {
				continue
			}
			v, err := yamlsafe.Value(d.Node)
			if err != nil {
				return nil, rejectf("the target file cannot be read as YAML: %v", err)
			}
			values = append(values, v)
		}
		var root any = values
		switch len(values) {
		case 0:
			root = map[string]any{}
		case 1:
			root = values[0]
		default:
			multi = true
		}
		if doc, err = json.Marshal(root); err != nil {
			return nil, rejectf("the target file cannot be converted to JSON: %v", err)
		}
	}

	opts := jsonpatch.NewApplyOptions()
	opts.SupportNegativeIndices = false
	opts.AccumulatedCopySizeLimit = int64(limits.MaxBytes)
	res := doc
	if len(p) > 0 {
		res, err = p.ApplyWithOptions(doc, opts)
	}
	if err != nil {
		hint := ""
		if multi {
			hint = " (the file holds several YAML documents: paths start with the document index, e.g. /0/spec)"
		}
		return nil, rejectf("JSON Patch does not apply: %v%s", err, hint)
	}
	if isJSON {
		var buf bytes.Buffer
		if err := json.Indent(&buf, res, "", "  "); err != nil {
			return nil, fmt.Errorf("formatting patched JSON: %w", err)
		}
		buf.WriteByte('\n')
		return buf.Bytes(), nil
	}
	if !multi {
		return yaml.JSONToYAML(res)
	}
	var docs []json.RawMessage
	if err := json.Unmarshal(res, &docs); err != nil {
		return nil, rejectf("JSON Patch replaced the document list of a multi-document file with a non-array")
	}
	var b strings.Builder
	for i, d := range docs {
		y, err := yaml.JSONToYAML(d)
		if err != nil {
			return nil, fmt.Errorf("converting document %d back to YAML: %w", i, err)
		}
		if i > 0 {
			b.WriteString("---\n")
		}
		b.Write(y)
	}
	return []byte(b.String()), nil
}
