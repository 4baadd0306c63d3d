package policypack

import (
	"context"
	"encoding/json"
	"fmt"
	textclip "github.com/svbench/svbench/base/clip"
	"slices"
	"sort"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/policy"
)

// MaxInputBytes bounds the configuration Evaluate accepts (E2's fixture
// limit).
const MaxInputBytes = 2 << 20

// Violation is one breach of a clause found by executing the pack's Rego.
type Violation struct {
	Clause string `json:"clause"`
	// Object is "Kind/namespace/name" (Kubernetes; filled in from the
	// document when the rule leaves it out) or "TYPE.NAME" (Terraform).
	Object  string `json:"object,omitempty"`
	Message string `json:"msg,omitempty"`
	// Line is where the object starts in the file, when known.
	Line int `json:"line,omitempty"`
}

// InputError is a configuration the pack cannot evaluate: it does not parse
// or exceeds a bound. A patched file that fails this way is not compliant;
// the caller decides whether that is destructive.
type InputError struct{ Err error }

func (e *InputError) Error() string { return "policypack: " + e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// Evaluate runs the pack's Rego on one configuration file and returns its
// violations sorted by clause, object and message, without duplicates. It is
// safe for concurrent use. Kubernetes packs evaluate each document that has
// a kind; Terraform packs evaluate the file's configuration as one input.
func (p *Pack) Evaluate(ctx context.Context, path string, content []byte) (out []Violation, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, &InputError{Err: fmt.Errorf("%s: evaluation panicked on this input: %v", path, r)}
		}
	}()
	if len(content) > MaxInputBytes {
		return nil, &InputError{Err: fmt.Errorf("%s: %d bytes exceeds the %d-byte limit", path, len(content), MaxInputBytes)}
	}
	switch p.fixtureType {
	case FixtureK8s:
		docs, err := policy.KubernetesInputs(path, content, policy.Limits{})
		if err != nil {
			return nil, &InputError{Err: err}
		}
		for _, d := range docs {
			vs, err := p.eval(ctx, d.Object)
			if err != nil {
				return nil, fmt.Errorf("policypack %s: %s:%d: %w", p.id, path, d.Line, err)
			}
			def := k8sObjectName(d.Object)
			for _, v := range vs {
				if v.Object == "" {
					v.Object = def
				}
				v.Line = d.Line
				out = append(out, v)
			}
		}
	case FixtureTerraform:
		in, err := policy.TerraformInputs([]verify.File{{Path: path, Content: content}}, policy.Limits{})
		if err != nil {
			return nil, &InputError{Err: err}
		}
		vs, err := p.eval(ctx, in.Doc)
		if err != nil {
			return nil, fmt.Errorf("policypack %s: %s: %w", p.id, path, err)
		}
		for _, v := range vs {
			if loc, ok := in.Locations[v.Object]; ok {
				v.Line = loc.Line
			}
			out = append(out, v)
		}
	}
	return sortViolations(out), nil
}

// CheckClauses reports, for every clause of the pack, whether the file
// complies with it (true) or violates it (false). It is what the check_policy
// tool returns: pass/fail per clause, nothing about how the Rego decided.
func (p *Pack) CheckClauses(ctx context.Context, path string, content []byte) (map[string]bool, error) {
	vs, err := p.Evaluate(ctx, path, content)
	if err != nil {
		return nil, err
	}
	out := make(map[string]bool, len(p.clauses))
	for _, c := range p.clauses {
		out[c.ID] = true
	}
	for _, v := range vs {
		out[v.Clause] = false
	}
	return out, nil
}

// ViolatedClauses is the sorted set of clause ids in vs.
func ViolatedClauses(vs []Violation) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range vs {
		if !seen[v.Clause] {
			seen[v.Clause] = true
			out = append(out, v.Clause)
		}
	}
	slices.Sort(out)
	return out
}

func (p *Pack) eval(ctx context.Context, input map[string]any) ([]Violation, error) {
	val, err := ast.InterfaceToValue(input)
	if err != nil {
		return nil, fmt.Errorf("converting input: %w", err)
	}
	rs, err := p.query.Eval(ctx, rego.EvalParsedInput(val))
	if err != nil {
		return nil, fmt.Errorf("evaluating %s: %w", entryQuery, err)
	}
	var out []Violation
	for _, r := range rs {
		for _, ex := range r.Expressions {
			set, ok := ex.Value.([]any)
			if !ok {
				continue
			}
			for _, item := range set {
				v, err := p.toViolation(item)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
		}
	}
	return out, nil
}

func (p *Pack) toViolation(item any) (Violation, error) {
	m, ok := item.(map[string]any)
	if !ok {
		b, _ := json.Marshal(item)
		return Violation{}, fmt.Errorf("%s produced %s; each member must be an object {\"clause\", \"object\", \"msg\"}", EntryRule, textclip.Bytes(string(b), 200, textclip.Ellipsis))
	}
	id, _ := m["clause"].(string)
	if _, known := p.index[id]; !known {
		b, _ := json.Marshal(item)
		return Violation{}, fmt.Errorf("%s produced %s: clause %q is not in policy.md", EntryRule, textclip.Bytes(string(b), 200, textclip.Ellipsis), id)
	}
	obj, _ := m["object"].(string)
	msg, _ := m["msg"].(string)
	return Violation{Clause: id, Object: obj, Message: msg}, nil
}

func k8sObjectName(obj map[string]any) string {
	kind, _ := obj["kind"].(string)
	meta, _ := obj["metadata"].(map[string]any)
	ns, _ := meta["namespace"].(string)
	name, _ := meta["name"].(string)
	if ns == "" {
		ns = "default"
	}
	return kind + "/" + ns + "/" + name
}

func sortViolations(vs []Violation) []Violation {
	sort.Slice(vs, func(i, j int) bool {
		a, b := vs[i], vs[j]
		if a.Clause != b.Clause {
			return a.Clause < b.Clause
		}
		if a.Object != b.Object {
			return a.Object < b.Object
		}
		return a.Message < b.Message
	})
	out := vs[:0]
	for _, v := range vs {
		if len(out) > 0 && v == out[len(out)-1] {
			continue
		}
		out = append(out, v)
	}
	return out
}
