package configaudit

import (
	"context"
	"crypto/sha256"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/svbench/svbench/dataset/integrity"
	"github.com/svbench/svbench/verify"
)

// Generator defaults (the CLI's flag defaults).
const (
	DefaultTFShare      = 0.45
	DefaultCleanShare   = 0.1
	DefaultMaxMutations = 3
	// MaxMutationsLimit bounds --max-mutations: every combination of up to
	// this many mutations is enumerated per baseline.
	MaxMutationsLimit = 5
)

// GenOptions control the synthetic dataset. Every field is taken literally:
// TFShare 0 means no Terraform rows, CleanShare 0 no clean rows. Start from
// DefaultGenOptions to get the documented defaults.
type GenOptions struct {
	N    int
	Seed uint64
	// TFShare is the share of Terraform rows in [0, 1] (1: Terraform only).
	TFShare float64
	// CleanShare is the share of unmutated rows in [0, 1], per fixture type.
	CleanShare float64
	// MaxMutations is the most mutations composed into one row,
	// 1..MaxMutationsLimit.
	MaxMutations int
}

// DefaultGenOptions are the options `svbench data generate e2` starts from.
func DefaultGenOptions(n int, seed uint64) GenOptions {
	return GenOptions{N: n, Seed: seed, TFShare: DefaultTFShare, CleanShare: DefaultCleanShare, MaxMutations: DefaultMaxMutations}
}

func (o GenOptions) check() error {
	switch {
	case o.N <= 0:
		return fmt.Errorf("generate: n must be positive, got %d", o.N)
	case !(o.TFShare >= 0 && o.TFShare <= 1):
		return fmt.Errorf("generate: the Terraform share must be in [0, 1], got %v", o.TFShare)
	case !(o.CleanShare >= 0 && o.CleanShare <= 1):
		return fmt.Errorf("generate: the clean share must be in [0, 1], got %v", o.CleanShare)
	case o.MaxMutations < 1 || o.MaxMutations > MaxMutationsLimit:
		return fmt.Errorf("generate: max mutations must be in [1, %d], got %d", MaxMutationsLimit, o.MaxMutations)
	}
	return nil
}

// Strata, in generation order; the keys are Row.StratumKey values.
var genStrata = []string{FixtureTF + "/findings", FixtureTF + "/clean", FixtureK8s + "/findings", FixtureK8s + "/clean"}

func roundShare(n int, share float64) int { return int(float64(n)*share + 0.5) }

// quotas splits n rows into the four strata.
func (o GenOptions) quotas(n int) map[string]int {
	tf := roundShare(n, o.TFShare)
	k8s := n - tf
	tfClean, k8sClean := roundShare(tf, o.CleanShare), roundShare(k8s, o.CleanShare)
	return map[string]int{
		FixtureTF + "/findings": tf - tfClean, FixtureTF + "/clean": tfClean,
		FixtureK8s + "/findings": k8s - k8sClean, FixtureK8s + "/clean": k8sClean,
	}
}

// GenStats describe a generation.
type GenStats struct {
	// Capacity is the number of distinct rows the generator can make per
	// stratum ("tf/findings", "tf/clean", "k8s/findings", "k8s/clean").
	Capacity map[string]int `json:"capacity"`
	// MaxN is the largest --n these shares and max mutations allow.
	MaxN int `json:"max_n"`
	// Groups counts distinct baseline+mutation-set groups among the rows.
	Groups int `json:"groups"`
	// Verified rows were scanned by kube-linter/trivy and OPA, which
	// reported exactly the labelled mutation findings.
	Verified int `json:"verified"`
	// Rejected candidates were contradicted by the verifiers and replaced;
	// RejectedExamples says why (at most five).
	Rejected         int      `json:"rejected"`
	RejectedExamples []string `json:"rejected_examples,omitempty"`
}

// CapacityError is returned when more rows are asked for than the generator
// can make distinct.
type CapacityError struct {
	N, Max   int
	Stratum  string // the stratum that runs out first
	Need     int    // rows that stratum would need
	Capacity int    // rows it has
	Opts     GenOptions
}

func (e *CapacityError) Error() string {
	return fmt.Sprintf("cannot make %d distinct rows: with a Terraform share of %g, a clean share of %g and at most %d mutations per row the generator makes at most %d distinct rows (%s run out first: %d needed, %d available)",
		e.N, e.Opts.TFShare, e.Opts.CleanShare, e.Opts.MaxMutations, e.Max, stratumName(e.Stratum), e.Need, e.Capacity)
}

func stratumName(s string) string {
	ft, kind, _ := strings.Cut(s, "/")
	name := "Kubernetes"
	if ft == FixtureTF {
		name = "Terraform"
	}
	if kind == "clean" {
		return "clean " + name + " rows"
	}
	return name + " rows with findings"
}

// Capacity reports, without generating anything, how many distinct rows
// the options allow per stratum and in total; when o.N is more than that,
// the error is a *CapacityError. o.N <= 0 asks only for the numbers.
func Capacity(o GenOptions) (GenStats, error) {
	o.N = max(o.N, 1)
	if err := o.check(); err != nil {
		return GenStats{}, err
	}
	p, err := planFor(o.MaxMutations)
	if err != nil {
		return GenStats{}, err
	}
	st := GenStats{Capacity: p.capacity()}
	st.MaxN = maxRows(o, st.Capacity)
	if o.N > st.MaxN {
		return st, capacityError(o, st.Capacity)
	}
	return st, nil
}

// maxRows is the largest n whose four quotas fit the capacities (quotas
// never decrease as n grows, so a binary search finds it).
func maxRows(o GenOptions, caps map[string]int) int {
	fits := func(n int) bool {
		for s, q := range o.quotas(n) {
			if q > caps[s] {
				return false
			}
		}
		return true
	}
	hi := 0
	for _, c := range caps {
		hi += c
	}
	lo := 0 // fits(0) holds
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

func capacityError(o GenOptions, caps map[string]int) error {
	ce := &CapacityError{N: o.N, Max: maxRows(o, caps), Opts: o}
	q := o.quotas(o.N)
	for _, s := range genStrata {
		if q[s] > caps[s] {
			ce.Stratum, ce.Need, ce.Capacity = s, q[s], caps[s]
			break
		}
	}
	return ce
}

// Generate builds N labelled rows from the embedded corpus, reproducibly:
// the same options give byte-identical rows on every machine.
//
// Each row is a secure baseline, varied in its names (application,
// namespace, team, registry, bucket, cluster, region …), with a combination
// of up to MaxMutations named misconfigurations (or none, for clean rows).
// Its labels are the mutations and the finding ids they map to; before a row
// is kept, kube-linter/trivy and OPA run on it and must report exactly those
// of the catalogue's ids (no fewer, no others). Rows are distinct even up to
// case, digits and whitespace (integrity.Normalise), so `data validate`
// finds no duplicates or near-duplicates among them. More rows than the
// generator can make distinct is a *CapacityError naming the maximum.
func (e *Env) Generate(ctx context.Context, o GenOptions) ([]Row, GenStats, error) {
	if err := o.check(); err != nil {
		return nil, GenStats{}, err
	}
	st, err := Capacity(o)
	if err != nil {
		return nil, st, err
	}
	p, err := planFor(o.MaxMutations)
	if err != nil {
		return nil, st, err
	}
	v, err := e.verifiers(ctx)
	if err != nil {
		return nil, st, err
	}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x5e2c0f1a))
	gs := newGenState(p)
	need := o.quotas(o.N)
	var kept []*candidate
	for {
		var batch []*candidate
		for _, s := range genStrata {
			for ; need[s] > 0; need[s]-- {
				c, err := gs.draw(s, rng)
				if err != nil {
					return nil, st, err
				}
				if c == nil {
					return nil, st, fmt.Errorf("generate: only %d of %d rows could be made and confirmed by the verifiers (%d candidates rejected, e.g. %s)",
						len(kept)+len(batch), o.N, st.Rejected, strings.Join(st.RejectedExamples, "; "))
				}
				batch = append(batch, c)
			}
		}
		if len(batch) == 0 {
			break
		}
		if err := confirm(ctx, v, batch); err != nil {
			return nil, st, err
		}
		for _, c := range batch {
			if c.reject != "" {
				// A contradicted composition is contradicted for every
				// variant: retire it and draw a replacement.
				gs.retire(c.cell)
				need[c.cell.stratum]++
				st.Rejected++
				if len(st.RejectedExamples) < 5 {
					st.RejectedExamples = append(st.RejectedExamples, c.reject)
				}
				continue
			}
			kept = append(kept, c)
		}
	}
	groups := map[string]bool{}
	rows := make([]Row, len(kept))
	for i, c := range kept {
		rows[i] = c.row(o.Seed)
		groups[c.cell.group] = true
	}
	st.Groups = len(groups)
	st.Verified = len(rows)
	// Interleave strata deterministically so a prefix (-n 10) has all kinds.
	perm := rng.Perm(len(rows))
	out := make([]Row, len(rows))
	for i, j := range perm {
		out[i] = rows[j]
	}
	return out, st, nil
}

// candidate is a drawn row awaiting confirmation.
type candidate struct {
	cell    *cell
	path    string
	content string
	reject  string
}

func (c *candidate) row(seed uint64) Row {
	ft := c.cell.base.b.Fixture
	exp := append([]Violation{}, c.cell.expected...)
	muts := append([]string{}, c.cell.names...)
	return Row{
		ID:          "e2-" + ft + "-" + contentHash([]byte(c.path + "\x00" + c.content))[:12],
		FixtureType: ft, Path: c.path, Content: c.content,
		Labels: Labels{Mutations: muts, Expected: exp, Source: "mutations"},
		Meta:   map[string]any{"source": "svbench-corpus", "baseline": c.cell.base.b.Name, "group": c.cell.group, "seed": seed},
	}
}

// mappedIDs are the finding ids some mutation of a fixture type maps to:
// the ids a row's label speaks for.
func mappedIDs(fixture string) map[string]bool {
	out := map[string]bool{}
	for _, m := range Mutations(fixture) {
		for _, f := range m.Findings {
			out[f.ID] = true
		}
	}
	return out
}

// confirm runs the verifiers on every candidate in parallel and marks those
// whose reported catalogue ids differ from their labels.
func confirm(ctx context.Context, v *verifiers, batch []*candidate) error {
	mapped := map[string]map[string]bool{FixtureK8s: mappedIDs(FixtureK8s), FixtureTF: mappedIDs(FixtureTF)}
	workers := min(runtime.GOMAXPROCS(0), len(batch))
	next := make(chan *candidate)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range next {
				ft := c.cell.base.b.Fixture
				// No cache key: every row is new, and the scoring cache
				// should not fill with generator rows.
				fs, err := v.all(ctx, ft, verify.File{Path: c.path, Content: []byte(c.content)}, "")
				if err != nil {
					c.reject = fmt.Sprintf("%s %s: %v", c.cell.group, c.path, err)
					continue
				}
				got := map[string]bool{}
				for _, f := range fs {
					if mapped[ft][f.ID()] {
						got[f.ID()] = true
					}
				}
				want := map[string]bool{}
				for _, x := range c.cell.expected {
					want[x.ID] = true
				}
				if missing, extra := setDiff(want, got), setDiff(got, want); len(missing)+len(extra) > 0 {
					c.reject = fmt.Sprintf("%s: verifiers do not report %v and report unlabelled %v", c.cell.group, missing, extra)
				}
			}
		}()
	}
	var err error
	for _, c := range batch {
		if err = ctx.Err(); err != nil {
			break
		}
		next <- c
	}
	close(next)
	wg.Wait()
	return err
}

func setDiff(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// genPlan is every (baseline, mutation set) the generator can draw from,
// with each one's variant space. It depends only on the corpus, the
// catalogue and MaxMutations, so it is built once per MaxMutations.
type genPlan struct {
	bases []*basePlan
	cells []*cell
}

type basePlan struct {
	b         Baseline
	variation *variation
	clean     *cell
	mutated   []*cell
}

type cell struct {
	idx      int
	base     *basePlan
	stratum  string
	group    string
	muts     []Mutation
	names    []string
	expected []Violation
	key      string // comparable form, while planning
	counted  []int  // slots that make variants distinct

	once    sync.Once
	content string
	err     error
	// Cells whose contents are equal after normalisation (a mutation that
	// changes only a number, such as TLS1_2 → TLS1_0) share one variant
	// space: cell part of share owns the variants v with v%share == part, so
	// no two rows are near-duplicates.
	share, part int
	cap         int
}

var (
	planMu sync.Mutex
	plans  = map[int]*genPlan{}
)

func planFor(maxMut int) (*genPlan, error) {
	planMu.Lock()
	defer planMu.Unlock()
	if p := plans[maxMut]; p != nil {
		return p, nil
	}
	p, err := buildPlan(maxMut)
	if err != nil {
		return nil, err
	}
	plans[maxMut] = p
	return p, nil
}

func buildPlan(maxMut int) (*genPlan, error) {
	bases, err := Corpus()
	if err != nil {
		return nil, err
	}
	p := &genPlan{}
	for _, b := range bases {
		bp, cells, err := planBaseline(b, maxMut)
		if err != nil {
			return nil, err
		}
		// Forms: cells equal after normalisation share a variant space.
		forms := map[[32]byte][]*cell{}
		var order [][32]byte
		for _, c := range cells {
			k := sha256.Sum256([]byte(integrity.Normalise(c.key)))
			if _, ok := forms[k]; !ok {
				order = append(order, k)
			}
			forms[k] = append(forms[k], c)
		}
		for _, k := range order {
			fc := forms[k]
			counted := bp.variation.counted(fc[0].key)
			size := bp.variation.size(counted)
			for j, c := range fc {
				c.counted, c.share, c.part = counted, len(fc), j
				c.cap = (size - j + len(fc) - 1) / len(fc)
			}
		}
		for _, c := range cells {
			c.key = "" // only needed for the forms
			if c.cap == 0 {
				continue
			}
			c.idx = len(p.cells)
			p.cells = append(p.cells, c)
			if len(c.names) == 0 {
				bp.clean = c
			} else {
				bp.mutated = append(bp.mutated, c)
			}
		}
		p.bases = append(p.bases, bp)
	}
	return p, nil
}

// planBaseline enumerates every conflict-free combination of up to maxMut
// catalogue mutations that all apply, in name order, to the baseline.
// Kubernetes combinations are applied to cloned node trees and rendered only
// when drawn: rendering thousands of YAML files up front would cost seconds.
func planBaseline(b Baseline, maxMut int) (*basePlan, []*cell, error) {
	bp := &basePlan{b: b}
	var (
		slots []slot
		docs0 []*yaml.Node
	)
	if b.Fixture == FixtureK8s {
		var err error
		if docs0, err = parseYAMLDocs(b.Content); err != nil {
			return nil, nil, fmt.Errorf("corpus %s: %w", b.Name, err)
		}
		withTeamLabel(docs0)
		if bp.b.Content, err = renderYAML(docs0); err != nil {
			return nil, nil, fmt.Errorf("corpus %s: %w", b.Name, err)
		}
		slots = k8sSlots(docs0, string(bp.b.Content))
	} else {
		slots = tfSlots[b.Name]
	}
	bp.variation = newVariation(slots)
	var cells []*cell
	add := func(applied []Mutation, key, content string) {
		c := &cell{base: bp, key: key, content: content, muts: applied, names: []string{}}
		for _, m := range applied {
			c.names = append(c.names, m.Name)
			c.expected = append(c.expected, m.Findings...)
		}
		c.expected = dedupViolations(c.expected)
		c.stratum = b.Fixture + "/findings"
		c.group = b.Name + "|" + strings.Join(c.names, "+")
		if len(applied) == 0 {
			c.stratum = b.Fixture + "/clean"
			c.group = b.Name + "|clean"
		}
		cells = append(cells, c)
	}
	cat := Mutations(b.Fixture)
	if b.Fixture == FixtureK8s {
		add(nil, canonicalYAML(docs0), string(bp.b.Content))
		var walk func(start int, applied []Mutation, docs []*yaml.Node)
		walk = func(start int, applied []Mutation, docs []*yaml.Node) {
			if len(applied) == maxMut {
				return
			}
			for i := start; i < len(cat); i++ {
				m := cat[i]
				if conflicts(m, applied) {
					continue
				}
				cp := cloneDocs(docs)
				if !m.k8s(cp) {
					continue
				}
				next := append(slices.Clone(applied), m)
				add(next, canonicalYAML(cp), "")
				walk(i+1, next, cp)
			}
		}
		walk(0, nil, docs0)
		return bp, cells, nil
	}
	src := string(bp.b.Content)
	add(nil, src, src)
	var walk func(start int, applied []Mutation, src string)
	walk = func(start int, applied []Mutation, src string) {
		if len(applied) == maxMut {
			return
		}
		for i := start; i < len(cat); i++ {
			m := cat[i]
			if conflicts(m, applied) {
				continue
			}
			out, ok := m.tf(src)
			if !ok {
				continue
			}
			next := append(slices.Clone(applied), m)
			add(next, out, out)
			walk(i+1, next, out)
		}
	}
	walk(0, nil, src)
	return bp, cells, nil
}

// text is the cell's configuration before variation; Kubernetes
// combinations are rendered on first use.
func (c *cell) text() (string, error) {
	c.once.Do(func() {
		if c.content != "" {
			return
		}
		docs, err := parseYAMLDocs(c.base.b.Content)
		if err != nil {
			c.err = err
			return
		}
		for _, m := range c.muts {
			if !m.k8s(docs) {
				c.err = fmt.Errorf("%s: mutation %s no longer applies", c.group, m.Name)
				return
			}
		}
		b, err := renderYAML(docs)
		c.content, c.err = string(b), err
	})
	return c.content, c.err
}

func cloneDocs(docs []*yaml.Node) []*yaml.Node {
	out := make([]*yaml.Node, len(docs))
	for i, d := range docs {
		out[i] = cloneNode(d)
	}
	return out
}

func cloneNode(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	if len(n.Content) > 0 {
		c.Content = make([]*yaml.Node, len(n.Content))
		for i, k := range n.Content {
			c.Content[i] = cloneNode(k)
		}
	}
	c.Alias = cloneNode(n.Alias)
	return &c
}

// canonicalYAML is a cheap text form of node trees for comparing them:
// equal trees give equal strings, scalars appear verbatim (so tokens can be
// found in it) and are separated by newlines.
func canonicalYAML(docs []*yaml.Node) string {
	var b strings.Builder
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n == nil {
			return
		}
		b.WriteByte(byte('0' + n.Kind))
		b.WriteString(strconv.Itoa(int(n.Style)))
		b.WriteByte(' ')
		b.WriteString(n.Tag)
		b.WriteByte(' ')
		b.WriteString(n.Value)
		b.WriteByte('\n')
		for _, c := range n.Content {
			walk(c)
		}
		b.WriteString(")\n")
	}
	for _, d := range docs {
		b.WriteString("---\n")
		walk(d)
	}
	return b.String()
}

func (p *genPlan) capacity() map[string]int {
	caps := map[string]int{}
	for _, s := range genStrata {
		caps[s] = 0
	}
	for _, c := range p.cells {
		caps[c.stratum] += c.cap
	}
	return caps
}

// genState is one generation's bookkeeping over a shared plan.
type genState struct {
	p       *genPlan
	taken   []map[int]bool // per cell: variant indices used
	retired []bool
	seen    map[[32]byte]bool // normalised contents drawn
}

func newGenState(p *genPlan) *genState {
	return &genState{p: p, taken: make([]map[int]bool, len(p.cells)), retired: make([]bool, len(p.cells)), seen: map[[32]byte]bool{}}
}

func (g *genState) open(c *cell) bool {
	return c != nil && !g.retired[c.idx] && len(g.taken[c.idx]) < c.cap
}

func (g *genState) retire(c *cell) { g.retired[c.idx] = true }

// draw picks a fresh row of a stratum: a baseline uniformly, then (for rows
// with findings) a number of mutations uniformly among those still
// available, then a composition and an unused variant.
func (g *genState) draw(stratum string, rng *rand.Rand) (*candidate, error) {
	ft, kind, _ := strings.Cut(stratum, "/")
	for {
		var bases []*basePlan
		for _, bp := range g.p.bases {
			if bp.b.Fixture != ft {
				continue
			}
			if kind == "clean" && g.open(bp.clean) || kind != "clean" && slices.ContainsFunc(bp.mutated, g.open) {
				bases = append(bases, bp)
			}
		}
		if len(bases) == 0 {
			return nil, nil
		}
		bp := bases[rng.IntN(len(bases))]
		c := bp.clean
		if kind != "clean" {
			bySize := map[int][]*cell{}
			var sizes []int
			for _, mc := range bp.mutated {
				if g.open(mc) {
					if len(bySize[len(mc.names)]) == 0 {
						sizes = append(sizes, len(mc.names))
					}
					bySize[len(mc.names)] = append(bySize[len(mc.names)], mc)
				}
			}
			pool := bySize[sizes[rng.IntN(len(sizes))]]
			c = pool[rng.IntN(len(pool))]
		}
		text, err := c.text()
		if err != nil {
			return nil, err
		}
		u := g.freeVariant(c, rng)
		vi := c.part + c.share*u
		content := bp.variation.apply(text, c.counted, vi, rng)
		key := sha256.Sum256([]byte(integrity.Normalise(content)))
		if g.seen[key] {
			// Unreachable while slot options stay distinct after
			// normalisation; the variant stays used so the loop ends.
			continue
		}
		g.seen[key] = true
		dir := []string{"deploy", "infra", "platform", "services", "ops"}[rng.IntN(5)]
		path := dir + "/" + strings.SplitN(bp.b.Path, "/", 2)[1]
		return &candidate{cell: c, path: path, content: content}, nil
	}
}

// freeVariant returns an unused variant number u < c.cap and marks it used.
func (g *genState) freeVariant(c *cell, rng *rand.Rand) int {
	t := g.taken[c.idx]
	if t == nil {
		t = map[int]bool{}
		g.taken[c.idx] = t
	}
	var u int
	if len(t) < c.cap/2 {
		for u = rng.IntN(c.cap); t[u]; u = rng.IntN(c.cap) {
		}
	} else {
		k := rng.IntN(c.cap - len(t))
		for u = 0; ; u++ {
			if !t[u] {
				if k == 0 {
					break
				}
				k--
			}
		}
	}
	t[u] = true
	return u
}

func conflicts(m Mutation, applied []Mutation) bool {
	for _, a := range applied {
		for _, c := range m.Conflicts {
			if c == a.Name {
				return true
			}
		}
		for _, c := range a.Conflicts {
			if c == m.Name {
				return true
			}
		}
	}
	return false
}
