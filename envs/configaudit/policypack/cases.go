package policypack

import (
	"fmt"
	"slices"
)

// Case is one generator mutation applied alone to one base, with the first
// variable assignment: the unit the loader's dynamic check and the scanner
// confirmation test run.
type Case struct {
	Pack, Base, Mutation string
	Path                 string
	// Before is the compliant base, After the base with the mutation.
	Before, After string
	Breaks        []string
	Exercises     []string
	ScannerIDs    []string
}

// Cases lists every (base, mutation) pair of the pack's generator, or nil
// when the pack ships none.
func (p *Pack) Cases() ([]Case, error) {
	if p.gen == nil {
		return nil, nil
	}
	a := p.gen.assignment(0)
	var out []Case
	for _, b := range p.gen.Bases {
		path, text := a.render(b.Path), a.render(b.content)
		for _, m := range p.gen.Mutations {
			if !slices.Contains(m.Bases, b.Name) {
				continue
			}
			after, err := applyEdits(text, m, a)
			if err != nil {
				return nil, fmt.Errorf("policypack %s: base %s: %w", p.id, b.Name, err)
			}
			out = append(out, Case{
				Pack: p.id, Base: b.Name, Mutation: m.Name, Path: path, Before: text, After: after,
				Breaks: slices.Clone(m.Breaks), Exercises: slices.Clone(m.Exercises), ScannerIDs: slices.Clone(m.ScannerIDs),
			})
		}
	}
	return out, nil
}
