package policypack

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
)

// Generator shares of each pack's rows (the rest break clauses only).
const (
	cleanShare     = 0.15
	exceptionShare = 0.3
	maxComboSize   = 3
)

// Generate returns n rows over the embedded packs, deterministic by seed.
func Generate(seed int64, n int) ([]Row, error) {
	return GenerateFrom(context.Background(), Embedded(), seed, n)
}

// GenerateFrom returns n rows over the packs that ship a generator, split as
// evenly as possible between them. Each pack's rows mix compliant rows,
// rows using an exception (some also breaking clauses) and rows breaking
// one to three clauses. Every row's labels are what the pack's Rego reports
// on its content; a row whose Rego result differs from what its mutations
// declare fails generation with the pack, base and mutations named.
func GenerateFrom(ctx context.Context, packs []*Pack, seed int64, n int) ([]Row, error) {
	if n <= 0 {
		return nil, fmt.Errorf("policypack: generate: n must be positive, got %d", n)
	}
	var gen []*Pack
	for _, p := range packs {
		if p.gen != nil {
			gen = append(gen, p)
		}
	}
	if len(gen) == 0 {
		return nil, fmt.Errorf("policypack: generate: no pack ships generator.json")
	}
	var rows []Row
	for i, p := range gen {
		k := n / len(gen)
		if i < n%len(gen) {
			k++
		}
		if k == 0 {
			continue
		}
		rs, err := p.generate(ctx, seed, k)
		if err != nil {
			return nil, fmt.Errorf("policypack %s: generate: %w", p.id, err)
		}
		rows = append(rows, rs...)
	}
	return rows, nil
}

// combo is a base with a conflict-free set of mutations, in name order.
type combo struct {
	base      string
	mutations []string
}

// Row kinds, in generation order.
var rowKinds = []string{"clean", "exception-only", "exception-mixed", "breaking"}

func (c combo) kind(g *genSpec) string {
	if len(c.mutations) == 0 {
		return "clean"
	}
	exc, brk := false, false
	for _, m := range c.mutations {
		if g.mutation(m).isException() {
			exc = true
		} else {
			brk = true
		}
	}
	switch {
	case exc && brk:
		return "exception-mixed"
	case exc:
		return "exception-only"
	}
	return "breaking"
}

// combos enumerates every base with 0..maxComboSize mutations that apply to
// it and do not conflict.
func (g *genSpec) combos() []combo {
	var out []combo
	for _, b := range g.Bases {
		var ms []genMutation
		for _, m := range g.Mutations {
			if slices.Contains(m.Bases, b.Name) {
				ms = append(ms, m)
			}
		}
		sort.Slice(ms, func(i, j int) bool { return ms[i].Name < ms[j].Name })
		var rec func(start int, cur []string)
		rec = func(start int, cur []string) {
			out = append(out, combo{base: b.Name, mutations: slices.Clone(cur)})
			if len(cur) == maxComboSize {
				return
			}
			for i := start; i < len(ms); i++ {
				if g.conflicts(cur, ms[i]) {
					continue
				}
				rec(i+1, append(cur, ms[i].Name))
			}
		}
		rec(0, nil)
	}
	return out
}

func (g *genSpec) conflicts(cur []string, m genMutation) bool {
	for _, c := range cur {
		if slices.Contains(m.Conflicts, c) || slices.Contains(g.mutation(c).Conflicts, m.Name) {
			return true
		}
	}
	return false
}

func (p *Pack) generate(ctx context.Context, seed int64, k int) ([]Row, error) {
	g := p.gen
	byKind := map[string][]combo{}
	for _, c := range g.combos() {
		byKind[c.kind(g)] = append(byKind[c.kind(g)], c)
	}
	quota := map[string]int{}
	if k >= 3 {
		quota["clean"] = max(1, int(float64(k)*cleanShare+0.5))
	}
	// Exception rows: half use only the allowance (compliant, yet scanners
	// flag them), half combine it with breaches.
	exc := 0
	if len(byKind["exception-only"]) > 0 && k >= 2 {
		exc = max(1, int(float64(k)*exceptionShare+0.5))
		quota["exception-only"] = (exc + 1) / 2
		if len(byKind["exception-mixed"]) > 0 {
			quota["exception-mixed"] = exc / 2
		} else {
			quota["exception-only"] = exc
		}
	}
	quota["breaking"] = k - quota["clean"] - quota["exception-only"] - quota["exception-mixed"]
	h := fnv.New64a()
	h.Write([]byte(p.id))
	rng := rand.New(rand.NewPCG(uint64(seed), h.Sum64()))
	seen, covered := map[string]bool{}, map[string]bool{}
	var rows []Row
	for _, kind := range rowKinds {
		want := quota[kind]
		if want <= 0 {
			continue
		}
		cands := slices.Clone(byKind[kind])
		rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
		if kind == "breaking" {
			cands = p.coverFirst(cands, covered)
		}
		// Each candidate combo is tried with fresh variable assignments
		// until the quota is met; combos whose edits collide are dropped.
		nAssign := g.assignments()
		capacity := len(cands) * nAssign
		tries := 0
		for got := 0; got < want; {
			if len(cands) == 0 || tries >= 4*capacity+64 {
				return nil, fmt.Errorf("only %d distinct %s rows could be drawn, %d wanted; lower n or add bases, mutations or variable values", got, kind, want)
			}
			ci := tries % len(cands)
			tries++
			c := cands[ci]
			a := g.assignment(rng.IntN(nAssign))
			row, ok, err := p.buildRow(ctx, c, a, seed)
			if err != nil {
				return nil, err
			}
			if !ok {
				cands = slices.Delete(cands, ci, ci+1)
				continue
			}
			if seen[row.ID] {
				continue
			}
			seen[row.ID] = true
			for _, e := range row.Labels.Expected {
				covered[e.ID] = true
			}
			rows = append(rows, row)
			got++
		}
	}
	return rows, nil
}

// coverFirst moves to the front, in clause order, one candidate breaking
// each clause not yet covered, so even a small draw violates every clause
// somewhere when it can.
func (p *Pack) coverFirst(cands []combo, covered map[string]bool) []combo {
	covered = maps.Clone(covered)
	var front, rest []combo
	used := make([]bool, len(cands))
	for _, c := range p.clauses {
		if covered[c.ID] {
			continue
		}
		for i, cand := range cands {
			if used[i] || !slices.ContainsFunc(cand.mutations, func(m string) bool { return slices.Contains(p.gen.mutation(m).Breaks, c.ID) }) {
				continue
			}
			used[i] = true
			front = append(front, cand)
			for _, m := range cand.mutations {
				for _, b := range p.gen.mutation(m).Breaks {
					covered[b] = true
				}
			}
			break
		}
	}
	for i, cand := range cands {
		if !used[i] {
			rest = append(rest, cand)
		}
	}
	return append(front, rest...)
}

// buildRow renders a combo; ok is false when its edits do not compose.
func (p *Pack) buildRow(ctx context.Context, c combo, a assignment, seed int64) (Row, bool, error) {
	g := p.gen
	b := g.base(c.base)
	path := a.render(b.Path)
	text, compliant := a.render(b.content), a.render(b.content)
	var breaks, exercises, scanners, breaking []string
	for _, name := range c.mutations {
		m := g.mutation(name)
		var err error
		if text, err = applyEdits(text, m, a); err != nil {
			return Row{}, false, nil
		}
		switch {
		case m.isException():
			if compliant, err = applyEdits(compliant, m, a); err != nil {
				return Row{}, false, nil
			}
		case len(m.Fix) > 0:
			if compliant, err = applyFixed(compliant, m, a); err != nil {
				return Row{}, false, nil
			}
			breaking = append(breaking, name)
		default:
			breaking = append(breaking, name)
		}
		breaks = append(breaks, m.Breaks...)
		exercises = append(exercises, m.Exercises...)
		scanners = append(scanners, m.ScannerIDs...)
	}
	what := fmt.Sprintf("base %s %v mutations %v", c.base, a, c.mutations)
	vs, err := p.Evaluate(ctx, path, []byte(text))
	if err != nil {
		return Row{}, false, fmt.Errorf("%s: %w", what, err)
	}
	got, want := ViolatedClauses(vs), sortedSet(breaks)
	if !slices.Equal(got, want) {
		return Row{}, false, fmt.Errorf("%s: the Rego reports %v but the mutations declare %v (%s); fix the mutation or declare a conflict in generator.json", what, got, want, describe(vs))
	}
	cvs, err := p.Evaluate(ctx, path, []byte(compliant))
	if err != nil {
		return Row{}, false, fmt.Errorf("%s (compliant counterpart): %w", what, err)
	}
	if len(cvs) > 0 {
		return Row{}, false, fmt.Errorf("%s: the compliant counterpart violates %s", what, describe(cvs))
	}
	row := Row{
		FixtureType: RowFixtureType(p.fixtureType),
		Path:        path,
		Content:     text,
		PolicyPack:  p.id,
		Compliant:   compliant,
		Labels:      Labels{Mutations: nonNil(c.mutations), Expected: []ExpectedClause{}, Source: "policy-rego"},
		Meta: RowMeta{
			Pack: p.id, Baseline: c.base, Seed: seed, Clean: len(got) == 0,
			Group:             p.id + "/" + c.base + "|" + strings.Join(c.mutations, "+"),
			ClauseTypes:       []ClauseType{},
			Exception:         len(exercises) > 0,
			ExceptionClauses:  sortedSet(exercises),
			BreakingMutations: breaking,
			ScannerIDs:        sortedSet(scanners),
			Source:            "svbench-policypack",
		},
	}
	types := map[ClauseType]bool{}
	for _, id := range got {
		cl, _ := p.Clause(id)
		row.Labels.Expected = append(row.Labels.Expected, ExpectedClause{ID: id, Severity: cl.Severity})
		types[cl.Type] = true
		if cl.Type == ScannerOverlap {
			row.Meta.ScannerOverlap = append(row.Meta.ScannerOverlap, id)
		}
	}
	for _, t := range ClauseTypes {
		if types[t] {
			row.Meta.ClauseTypes = append(row.Meta.ClauseTypes, t)
		}
	}
	sum := sha256.Sum256([]byte(p.id + "\x00" + path + "\x00" + text))
	row.ID = "e2p-" + p.id + "-" + hex.EncodeToString(sum[:])[:12]
	return row, true, nil
}

func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
