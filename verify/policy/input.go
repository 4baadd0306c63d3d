package policy

import (
	"fmt"

	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/yamlsafe"
)

// KubernetesDocument is one object of a manifest, as the Kubernetes
// policies see it: the YAML document decoded to JSON.
type KubernetesDocument struct {
	// Line is the 1-based line where the document's content starts.
	Line   int
	Object map[string]any
}

// KubernetesInputs splits a manifest as VerifyKubernetes does and returns
// the documents that are objects with a kind, in file order. Other packages
// use it to evaluate their own Rego over exactly the input svbench.kubernetes
// rules see.
func KubernetesInputs(path string, content []byte, lim Limits) ([]KubernetesDocument, error) {
	docs, err := yamlsafe.Split(path, content, lim.YAML)
	if err != nil {
		return nil, err
	}
	var out []KubernetesDocument
	for _, d := range docs {
		if d.Empty() {
			continue
		}
		v, err := yamlsafe.Value(d.Node)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, d.Line, err)
		}
		obj, ok := v.(map[string]any)
		if !ok {
			continue
		}
		if kind, _ := obj["kind"].(string); kind == "" {
			continue
		}
		out = append(out, KubernetesDocument{Line: d.Line, Object: obj})
	}
	return out, nil
}

// Location is where a Terraform block starts.
type Location struct {
	File string
	Line int
}

// TerraformInput is the .tf files of one lint context as svbench.terraform
// rules see it ({"resource": {TYPE: {NAME: BODY}}, "data", "variable",
// "module", "provider", "locals"}), plus where each addressable block
// ("aws_s3_bucket.logs", "data.x.y", "module.m") starts.
type TerraformInput struct {
	Doc       map[string]any
	Locations map[string]Location
}

// TerraformInputs converts .tf files into policy input exactly as
// VerifyTerraform does. Syntax errors and exceeded limits name the file and
// line.
func TerraformInputs(files []verify.File, lim Limits) (*TerraformInput, error) {
	in, err := parseTerraform(files, lim)
	if err != nil {
		return nil, err
	}
	out := &TerraformInput{Doc: in.doc, Locations: make(map[string]Location, len(in.locations))}
	for k, l := range in.locations {
		out.Locations[k] = Location{File: l.file, Line: l.line}
	}
	return out, nil
}
