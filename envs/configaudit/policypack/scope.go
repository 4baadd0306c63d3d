package policypack

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/policy"
)

// ScopeTags are the pack's scope tag keys (pack.json scope_tags).
func (p *Pack) ScopeTags() []string { return slices.Clone(p.scopeTags) }

// ScopeChange is a scope tag whose value a patch changed on a resource
// present in both versions.
type ScopeChange struct {
	Resource string `json:"resource"` // TYPE.NAME
	Tag      string `json:"tag"`
	Before   string `json:"before"`
	After    string `json:"after"`
}

// ScopeChanges compares the scope tags of every resource in the original
// and patched Terraform file. A patch that retags a resource (env "prod" →
// "dev") can satisfy the Rego without fixing anything; the rubric decides
// what such a change costs. Kubernetes packs, whose scope is the namespace
// and name E2's structure check already holds fixed, return nil.
func (p *Pack) ScopeChanges(ctx context.Context, path string, original, patched []byte) ([]ScopeChange, error) {
	if p.fixtureType != FixtureTerraform || len(p.scopeTags) == 0 {
		return nil, nil
	}
	tags := func(content []byte) (map[string]map[string]string, error) {
		in, err := policy.TerraformInputs([]verify.File{{Path: path, Content: content}}, policy.Limits{})
		if err != nil {
			return nil, &InputError{Err: err}
		}
		out := map[string]map[string]string{}
		res, _ := in.Doc["resource"].(map[string]any)
		for typ, byName := range res {
			names, _ := byName.(map[string]any)
			for name, body := range names {
				b, _ := body.(map[string]any)
				tm, _ := b["tags"].(map[string]any)
				vals := map[string]string{}
				for _, k := range p.scopeTags {
					if v, ok := tm[k]; ok {
						vals[k] = fmt.Sprint(v)
					}
				}
				out[typ+"."+name] = vals
			}
		}
		return out, nil
	}
	before, err := tags(original)
	if err != nil {
		return nil, err
	}
	after, err := tags(patched)
	if err != nil {
		return nil, err
	}
	var out []ScopeChange
	for addr, b := range before {
		a, kept := after[addr]
		if !kept {
			continue
		}
		for _, k := range p.scopeTags {
			if b[k] != a[k] {
				out = append(out, ScopeChange{Resource: addr, Tag: k, Before: b[k], After: a[k]})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Resource != out[j].Resource {
			return out[i].Resource < out[j].Resource
		}
		return out[i].Tag < out[j].Tag
	})
	return out, nil
}
