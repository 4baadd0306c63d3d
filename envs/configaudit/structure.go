package configaudit

import (
	"fmt"
	"github.com/svbench/svbench/base/clip"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/nesting"
	"github.com/svbench/svbench/verify/patch"
	"github.com/svbench/svbench/verify/yamlsafe"
)

// yamlLimits bound every parse of a fixture or patched manifest; they are
// also kube-linter's and OPA's (the defaults), so one parse serves all three.
// Their MaxDepth is the nesting bound every E2 file is held to.
var yamlLimits = yamlsafe.Limits{MaxBytes: MaxFixtureBytes}

// checkNesting holds a file of the fixture's type to the nesting bound
// (verify/nesting) before any parser reads it: HCL's parser recurses once
// per level, and a patch nested 80,000 levels deep overflows the stack,
// which Go cannot recover from. yamlsafe measures YAML itself; this is for
// the paths that would otherwise reach a parser first.
func checkNesting(fixtureType, path string, content []byte) error {
	if fixtureType == FixtureTF {
		return nesting.HCL(path, content, 0)
	}
	return nesting.YAML(path, content, yamlLimits.MaxDepth)
}

// inventory is what a patch must preserve: Kubernetes objects
// (kind/namespace/name), their containers and image repositories, or
// Terraform resource/data/module addresses.
type inventory map[string]string

func takeInventory(fixtureType string, content []byte) (inventory, error) {
	return inventoryOf(fixtureType, verify.File{Path: "config.yaml", Content: content})
}

// inventoryOf is takeInventory of a file whose YAML may already be parsed
// (verify.File.YAML), reporting parse errors under the file's own name.
func inventoryOf(fixtureType string, f verify.File) (inventory, error) {
	content := f.Content
	inv := inventory{}
	if fixtureType == FixtureTF {
		if err := checkNesting(FixtureTF, "main.tf", content); err != nil {
			return nil, err
		}
		f, diags := hclsyntax.ParseConfig(content, "main.tf", hcl.InitialPos)
		if diags.HasErrors() {
			return nil, fmt.Errorf("invalid HCL: %s", diags.Error())
		}
		body, ok := f.Body.(*hclsyntax.Body)
		if !ok {
			return nil, fmt.Errorf("unexpected HCL body")
		}
		for _, b := range body.Blocks {
			switch b.Type {
			case "resource", "data", "module":
				state, disabled := instanceState(b.Body, content)
				if !disabled {
					inv[b.Type+"."+strings.Join(b.Labels, ".")] = state
				}
			}
		}
		return inv, nil
	}
	docs, err := yamlsafe.SplitWith(f.YAML, f.Path, content, yamlLimits)
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		if d.Empty() {
			continue
		}
		kind := scalarValue(mget(d.Node, "kind"))
		md := mget(d.Node, "metadata")
		obj := kind + "/" + scalarValue(mget(md, "namespace")) + "/" + scalarValue(mget(md, "name"))
		inv[obj] = ""
		if spec := podSpec(d.Node); spec != nil {
			for _, c := range containers(spec, true) {
				inv[obj+"/container/"+scalarValue(mget(c, "name"))] = "image " + imagePath(scalarValue(mget(c, "image")))
			}
		}
	}
	return inv, nil
}

// imagePath is an image's repository without its registry host: pulling
// the same image from another registry (a mirror the policy trusts, as
// K8S_UNTRUSTED_REGISTRY demands) keeps the container's image, swapping it
// for another repository does not.
func imagePath(img string) string {
	repo := imageRepo(img)
	if host, rest, ok := strings.Cut(repo, "/"); ok && (strings.ContainsAny(host, ".:") || host == "localhost") {
		return rest
	}
	return repo
}

// missingFrom lists what of inv is absent (or whose image repository
// changed) in other.
func (inv inventory) missingFrom(other inventory) []string { return inv.missing(other, false) }

// missing is missingFrom; anyImage accepts a container whose image
// repository changed (an organisation policy may demand another registry).
func (inv inventory) missing(other inventory, anyImage bool) []string {
	var out []string
	for k, img := range inv {
		got, ok := other[k]
		switch {
		case !ok:
			out = append(out, k)
		case anyImage && strings.HasPrefix(img, "image ") && strings.HasPrefix(got, "image "):
		case got != img:
			out = append(out, fmt.Sprintf("%s (%s -> %s)", k, orNone(img), orNone(got)))
		}
	}
	slices.Sort(out)
	return out
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// instanceState reads a block's count / for_each meta-argument. A block
// that a constant expression switches off (count = 0, for_each = {} or [])
// is disabled: for the structure check it has been removed, however
// quiet the scanners become. An expression that cannot be evaluated on its
// own (it reads variables or calls functions) is kept by its source text,
// so a patch that adds or changes one is reported as changing the block:
// whether `count = var.enabled ? 1 : 0` deploys anything depends on values
// the patch can also choose, and the check fails closed.
func instanceState(body *hclsyntax.Body, src []byte) (state string, disabled bool) {
	for _, name := range []string{"count", "for_each"} {
		attr, ok := body.Attributes[name]
		if !ok {
			continue
		}
		v, diags := attr.Expr.Value(nil)
		if !diags.HasErrors() && v.IsWhollyKnown() && !v.IsNull() {
			switch {
			case name == "count" && v.Type() == cty.Number:
				if v.Equals(cty.Zero).True() {
					return "", true
				}
				continue // a constant positive count deploys the block
			case name == "for_each" && (v.Type().IsObjectType() || v.Type().IsMapType() || v.Type().IsSetType() || v.Type().IsTupleType() || v.Type().IsListType()):
				if v.LengthInt() == 0 {
					return "", true
				}
				continue
			}
		}
		rng := attr.Expr.Range()
		text := ""
		if rng.Start.Byte >= 0 && rng.End.Byte <= len(src) && rng.Start.Byte <= rng.End.Byte {
			text = strings.Join(strings.Fields(string(src[rng.Start.Byte:rng.End.Byte])), " ")
		}
		state += name + " = " + clip.Bytes(text, 80, clip.Ellipsis)
	}
	return state, false
}

// sizeBase is what a patch's size is measured against. A JSON Patch's
// result is the file re-serialised (key order, quoting, list indentation
// all change), so against the original text a one-operation fix counted
// every reformatted line and paid the full size penalty; against the
// original put through the same serialisation it counts only what the
// operations changed.
func sizeBase(fx *fixture, kind string) []byte {
	if kind != string(patch.KindJSONPatch) {
		return fx.Content
	}
	base, err := patch.Canonical(fx.Content, patch.Limits{MaxBytes: MaxPatchBytes})
	if err != nil {
		return fx.Content
	}
	return base
}

// changedLines counts lines removed plus lines added between two texts as a
// multiset difference: cheap, order-insensitive, and exact for the
// edit-in-place patches a fix consists of.
func changedLines(a, b []byte) int {
	count := map[string]int{}
	for _, l := range strings.Split(string(a), "\n") {
		count[strings.TrimRight(l, " \t\r")]++
	}
	added := 0
	for _, l := range strings.Split(string(b), "\n") {
		k := strings.TrimRight(l, " \t\r")
		if count[k] > 0 {
			count[k]--
		} else {
			added++
		}
	}
	removed := 0
	for _, n := range count {
		removed += n
	}
	return added + removed
}
