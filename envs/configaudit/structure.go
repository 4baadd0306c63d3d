package configaudit

import (
	"fmt"
	"sort"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/svbench/svbench/verify/yamlsafe"
)

// inventory is what a patch must preserve: Kubernetes objects
// (kind/namespace/name), their containers and image repositories, or
// Terraform resource/data/module addresses.
type inventory map[string]string

func checkHCL(src []byte) error {
	_, diags := hclsyntax.ParseConfig(src, "main.tf", hcl.InitialPos)
	if diags.HasErrors() {
		return fmt.Errorf("invalid HCL: %s", diags.Error())
	}
	return nil
}

func takeInventory(fixtureType string, content []byte) (inventory, error) {
	inv := inventory{}
	if fixtureType == FixtureTF {
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
				inv[b.Type+"."+strings.Join(b.Labels, ".")] = ""
			}
		}
		return inv, nil
	}
	docs, err := yamlsafe.Split("config.yaml", content, yamlsafe.Limits{MaxBytes: MaxFixtureBytes})
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
				inv[obj+"/container/"+scalarValue(mget(c, "name"))] = imageRepo(scalarValue(mget(c, "image")))
			}
		}
	}
	return inv, nil
}

// missingFrom lists what of inv is absent (or whose image repository
// changed) in other.
func (inv inventory) missingFrom(other inventory) []string {
	var out []string
	for k, img := range inv {
		got, ok := other[k]
		switch {
		case !ok:
			out = append(out, k)
		case got != img:
			out = append(out, fmt.Sprintf("%s (image %s -> %s)", k, img, got))
		}
	}
	sort.Strings(out)
	return out
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
