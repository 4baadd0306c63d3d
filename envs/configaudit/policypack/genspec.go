package policypack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	textclip "github.com/svbench/svbench/base/clip"
	"regexp"
	"slices"
	"strings"
)

// Bounds on generator.json.
const (
	maxGenSpecBytes = 256 << 10
	maxVars         = 8
	maxVarValues    = 32
	maxBases        = 16
	maxMutations    = 64
)

var (
	genNameRe     = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	varNameRe     = regexp.MustCompile(`^[a-z][a-z0-9_]{0,30}$`)
	placeholderRe = regexp.MustCompile(`\{\{([^{}]*)\}\}`)
)

// genSpec is generator.json: compliant bases and the text mutations that
// break clauses or exercise exceptions.
type genSpec struct {
	// Vars are placeholders ({{name}}) substituted in bases, paths and
	// edits; each row draws one value per variable. Values must not change
	// what the policy decides (the generator checks every row by execution).
	Vars      map[string][]string `json:"vars,omitempty"`
	Bases     []genBase           `json:"bases"`
	Mutations []genMutation       `json:"mutations"`

	varNames []string
}

type genBase struct {
	Name string `json:"name"`
	// File is the base's path inside the pack directory (bases/…).
	File string `json:"file"`
	// Path is the file path the model sees; it may use placeholders.
	Path    string `json:"path"`
	content string
}

type genMutation struct {
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Bases       []string  `json:"bases"`
	Edits       []genEdit `json:"edits"`
	// Breaks are the clauses this mutation violates on its own.
	Breaks []string `json:"breaks,omitempty"`
	// Exercises are exception clauses whose allowance this mutation uses:
	// scanners flag the change, the policy accepts it.
	Exercises []string `json:"exercises,omitempty"`
	// ScannerIDs are the scanner findings the change triggers.
	ScannerIDs []string `json:"scanner_ids,omitempty"`
	// Conflicts name mutations that change what this one means when
	// combined (e.g. moving the object out of an exception's scope).
	Conflicts []string `json:"conflicts,omitempty"`
	// Fix edits, applied after Edits, make the mutated file compliant in
	// place. A row's compliant counterpart normally undoes its breaking
	// mutations; one that renames, moves or re-tags an object cannot be
	// undone by a patch E2 accepts (the object would be replaced, or
	// re-scoped into an exception), so such a mutation keeps its
	// structural change in the counterpart and repairs the rest.
	Fix []genEdit `json:"fix,omitempty"`
}

// genEdit replaces the only occurrence of Find with Replace.
type genEdit struct {
	Find    string `json:"find"`
	Replace string `json:"replace"`
}

func (m genMutation) isException() bool { return len(m.Exercises) > 0 }

func parseGenSpec(name string, b []byte, files map[string][]byte, p *Pack) (*genSpec, error) {
	if len(b) > maxGenSpecBytes {
		return nil, fmt.Errorf("%s: %d bytes exceeds the %d-byte limit", name, len(b), maxGenSpecBytes)
	}
	var g genSpec
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&g); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(g.Vars) > maxVars {
		return nil, fmt.Errorf("%s: more than %d vars", name, maxVars)
	}
	for v, vals := range g.Vars {
		if !varNameRe.MatchString(v) {
			return nil, fmt.Errorf("%s: var name %q must be lower-case letters, digits and _", name, v)
		}
		if len(vals) == 0 || len(vals) > maxVarValues {
			return nil, fmt.Errorf("%s: var %s needs 1–%d values", name, v, maxVarValues)
		}
		if slices.Contains(vals, "") {
			return nil, fmt.Errorf("%s: var %s has an empty value", name, v)
		}
		g.varNames = append(g.varNames, v)
	}
	slices.Sort(g.varNames)
	checkPlaceholders := func(where, s string) error {
		for _, m := range placeholderRe.FindAllStringSubmatch(s, -1) {
			if _, ok := g.Vars[m[1]]; !ok {
				return fmt.Errorf("%s: %s uses {{%s}}, which is not in vars", name, where, m[1])
			}
		}
		return nil
	}
	if len(g.Bases) == 0 || len(g.Bases) > maxBases {
		return nil, fmt.Errorf("%s: needs 1–%d bases", name, maxBases)
	}
	if len(g.Mutations) == 0 || len(g.Mutations) > maxMutations {
		return nil, fmt.Errorf("%s: needs 1–%d mutations", name, maxMutations)
	}
	bases := map[string]bool{}
	for i := range g.Bases {
		bs := &g.Bases[i]
		if !genNameRe.MatchString(bs.Name) || bases[bs.Name] {
			return nil, fmt.Errorf("%s: bases[%d]: name %q is invalid or duplicated", name, i, bs.Name)
		}
		bases[bs.Name] = true
		src, ok := files[bs.File]
		if !ok {
			return nil, fmt.Errorf("%s: base %s: file %q is not in the pack directory", name, bs.Name, bs.File)
		}
		bs.content = string(src)
		if bs.Path == "" {
			return nil, fmt.Errorf("%s: base %s has no path (the file path the model sees)", name, bs.Name)
		}
		if err := checkPlaceholders("base "+bs.Name, bs.content+bs.Path); err != nil {
			return nil, err
		}
	}
	muts := map[string]bool{}
	for _, m := range g.Mutations {
		if !genNameRe.MatchString(m.Name) || muts[m.Name] {
			return nil, fmt.Errorf("%s: mutation name %q is invalid or duplicated", name, m.Name)
		}
		muts[m.Name] = true
	}
	for _, m := range g.Mutations {
		at := fmt.Sprintf("%s: mutation %s", name, m.Name)
		if len(m.Bases) == 0 {
			return nil, fmt.Errorf("%s: lists no bases", at)
		}
		for _, b := range m.Bases {
			if !bases[b] {
				return nil, fmt.Errorf("%s: unknown base %q", at, b)
			}
		}
		if len(m.Edits) == 0 {
			return nil, fmt.Errorf("%s: has no edits", at)
		}
		for j, e := range m.Edits {
			if e.Find == "" {
				return nil, fmt.Errorf("%s: edits[%d].find is empty", at, j)
			}
			if err := checkPlaceholders(fmt.Sprintf("mutation %s edits[%d]", m.Name, j), e.Find+e.Replace); err != nil {
				return nil, err
			}
		}
		for j, e := range m.Fix {
			if e.Find == "" {
				return nil, fmt.Errorf("%s: fix[%d].find is empty", at, j)
			}
			if err := checkPlaceholders(fmt.Sprintf("mutation %s fix[%d]", m.Name, j), e.Find+e.Replace); err != nil {
				return nil, err
			}
		}
		if len(m.Fix) > 0 && len(m.Breaks) == 0 {
			return nil, fmt.Errorf("%s: has fix edits but breaks no clause", at)
		}
		if len(m.Breaks) == 0 && len(m.Exercises) == 0 {
			return nil, fmt.Errorf("%s: neither breaks a clause nor exercises an exception", at)
		}
		for _, c := range m.Breaks {
			if _, ok := p.index[c]; !ok {
				return nil, fmt.Errorf("%s: breaks unknown clause %s", at, c)
			}
		}
		for _, c := range m.Exercises {
			cl, ok := p.Clause(c)
			if !ok {
				return nil, fmt.Errorf("%s: exercises unknown clause %s", at, c)
			}
			if cl.Type != Exception {
				return nil, fmt.Errorf("%s: exercises %s, which is a %s clause, not an exception", at, c, cl.Type)
			}
		}
		for _, s := range m.ScannerIDs {
			if !scannerIDRe.MatchString(s) {
				return nil, fmt.Errorf("%s: scanner id %q must look like kube-linter/<check>, trivy/<AVD id> or opa/<rule id>", at, s)
			}
		}
		for _, c := range m.Conflicts {
			if !muts[c] {
				return nil, fmt.Errorf("%s: conflicts with unknown mutation %q", at, c)
			}
		}
	}
	return &g, nil
}

// assignment is one value per variable.
type assignment map[string]string

// assignments is the number of distinct variable assignments.
func (g *genSpec) assignments() int {
	n := 1
	for _, v := range g.varNames {
		n *= len(g.Vars[v])
	}
	return n
}

// assignment returns the i-th assignment (mixed-radix over sorted names).
func (g *genSpec) assignment(i int) assignment {
	a := assignment{}
	for _, v := range g.varNames {
		vals := g.Vars[v]
		a[v] = vals[i%len(vals)]
		i /= len(vals)
	}
	return a
}

func (a assignment) render(s string) string {
	return placeholderRe.ReplaceAllStringFunc(s, func(m string) string {
		return a[m[2:len(m)-2]]
	})
}

func (g *genSpec) base(name string) genBase {
	for _, b := range g.Bases {
		if b.Name == name {
			return b
		}
	}
	return genBase{}
}

func (g *genSpec) mutation(name string) genMutation {
	for _, m := range g.Mutations {
		if m.Name == name {
			return m
		}
	}
	return genMutation{}
}

// applyEdits applies a mutation's edits to text; an edit whose find text is
// absent or ambiguous makes the mutation inapplicable.
func applyEdits(text string, m genMutation, a assignment) (string, error) {
	return replaceEach(text, m.Name, "edits", m.Edits, a)
}

// applyFixed is the mutation made compliant in place: its edits, then its
// fix edits.
func applyFixed(text string, m genMutation, a assignment) (string, error) {
	text, err := applyEdits(text, m, a)
	if err != nil {
		return "", err
	}
	return replaceEach(text, m.Name, "fix", m.Fix, a)
}

func replaceEach(text, mutation, field string, edits []genEdit, a assignment) (string, error) {
	for j, e := range edits {
		find := a.render(e.Find)
		switch n := strings.Count(text, find); n {
		case 1:
			text = strings.Replace(text, find, a.render(e.Replace), 1)
		case 0:
			return "", fmt.Errorf("mutation %s %s[%d]: find text %q is not in the file", mutation, field, j, textclip.Bytes(find, 80, textclip.Ellipsis))
		default:
			return "", fmt.Errorf("mutation %s %s[%d]: find text %q occurs %d times; make it unique", mutation, field, j, textclip.Bytes(find, 80, textclip.Ellipsis), n)
		}
	}
	return text, nil
}

// checkGenerator is the dynamic check: every base is compliant under every
// value of every variable, each mutation alone violates exactly the clauses it
// declares, and together the mutations violate every clause and exercise every
// exception.
func (p *Pack) checkGenerator(ctx context.Context) error {
	g := p.gen
	maxVals := 1
	for _, v := range g.varNames {
		maxVals = max(maxVals, len(g.Vars[v]))
	}
	broken, exercised := map[string]bool{}, map[string]bool{}
	for _, b := range g.Bases {
		for i := range maxVals {
			a := assignment{}
			for _, v := range g.varNames {
				vals := g.Vars[v]
				a[v] = vals[i%len(vals)]
			}
			path, text := a.render(b.Path), a.render(b.content)
			vs, err := p.Evaluate(ctx, path, []byte(text))
			if err != nil {
				return fmt.Errorf("generator base %s %v: %w", b.Name, a, err)
			}
			if len(vs) > 0 {
				return fmt.Errorf("generator base %s %v is not compliant: %s", b.Name, a, describe(vs))
			}
			for _, m := range g.Mutations {
				if !slices.Contains(m.Bases, b.Name) {
					continue
				}
				mt, err := applyEdits(text, m, a)
				if err != nil {
					return fmt.Errorf("generator base %s: %w", b.Name, err)
				}
				vs, err := p.Evaluate(ctx, path, []byte(mt))
				if err != nil {
					return fmt.Errorf("generator base %s mutation %s: %w", b.Name, m.Name, err)
				}
				got, want := ViolatedClauses(vs), sortedSet(m.Breaks)
				if !slices.Equal(got, want) {
					return fmt.Errorf("generator base %s %v mutation %s: the Rego reports %v, the mutation declares %v (%s)", b.Name, a, m.Name, got, want, describe(vs))
				}
				if len(m.Fix) > 0 {
					fixed, err := applyFixed(text, m, a)
					if err != nil {
						return fmt.Errorf("generator base %s: %w", b.Name, err)
					}
					vs, err := p.Evaluate(ctx, path, []byte(fixed))
					if err != nil {
						return fmt.Errorf("generator base %s mutation %s fixed: %w", b.Name, m.Name, err)
					}
					if len(vs) > 0 {
						return fmt.Errorf("generator base %s %v mutation %s: its fix edits leave %s", b.Name, a, m.Name, describe(vs))
					}
				}
				for _, c := range m.Breaks {
					broken[c] = true
				}
				for _, c := range m.Exercises {
					exercised[c] = true
				}
			}
		}
	}
	var problems []string
	for _, c := range p.clauses {
		if !broken[c.ID] {
			problems = append(problems, fmt.Sprintf("no mutation violates clause %s", c.ID))
		}
		if c.Type == Exception && !exercised[c.ID] {
			problems = append(problems, fmt.Sprintf("no mutation exercises exception clause %s", c.ID))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("generator.json does not cover the policy (dynamic check): %s", strings.Join(problems, "; "))
	}
	return nil
}

func describe(vs []Violation) string {
	parts := make([]string, 0, len(vs))
	for _, v := range vs {
		parts = append(parts, fmt.Sprintf("%s on %s: %s", v.Clause, v.Object, v.Message))
	}
	if len(parts) == 0 {
		return "no violations"
	}
	return strings.Join(parts, "; ")
}

func sortedSet(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	return slices.Compact(out)
}
