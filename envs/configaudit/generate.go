package configaudit

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
)

// GenOptions control the synthetic dataset.
type GenOptions struct {
	N    int
	Seed uint64
	// TFShare is the share of Terraform rows (default 0.45); CleanShare the
	// share of unmutated baselines (default 0.1).
	TFShare    float64
	CleanShare float64
	// MaxMutations per row (default 3).
	MaxMutations int
}

// Generate builds N labelled rows from the embedded corpus, reproducibly:
// the same options give byte-identical rows on every machine. Labels come
// from the mutation catalogue alone; no verifier runs here.
func Generate(o GenOptions) ([]Row, error) {
	if o.N <= 0 {
		return nil, fmt.Errorf("generate: n must be positive, got %d", o.N)
	}
	if o.TFShare <= 0 {
		o.TFShare = 0.45
	}
	if o.CleanShare <= 0 {
		o.CleanShare = 0.1
	}
	if o.MaxMutations <= 0 {
		o.MaxMutations = 3
	}
	bases, err := Corpus()
	if err != nil {
		return nil, err
	}
	byType := map[string][]Baseline{}
	for _, b := range bases {
		byType[b.Fixture] = append(byType[b.Fixture], b)
	}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x5e2c0f1a))
	nTF := int(float64(o.N)*o.TFShare + 0.5)
	nClean := int(float64(o.N)*o.CleanShare + 0.5)
	seen := map[string]bool{}
	var rows []Row
	for i := 0; i < o.N; i++ {
		ft := FixtureK8s
		if i < nTF {
			ft = FixtureTF
		}
		clean := i%max(1, o.N/max(1, nClean)) == 0 && countClean(rows) < nClean
		var row Row
		ok := false
		for try := 0; try < 200 && !ok; try++ {
			b := byType[ft][rng.IntN(len(byType[ft]))]
			row, ok, err = mutateBaseline(b, clean, o.MaxMutations, rng)
			if err != nil {
				return nil, err
			}
			// Clean rows repeat their baseline by nature; mutated rows must
			// be distinct so the set measures more than memorisation.
			if ok && !clean && seen[row.Content] {
				ok = false
			}
		}
		if !ok {
			return nil, fmt.Errorf("generate: could not make a distinct row %d (n=%d is larger than the corpus supports)", i, o.N)
		}
		seen[row.Content] = true
		h := contentHash([]byte(row.Path + "\x00" + row.Content))[:10]
		row.ID = fmt.Sprintf("e2-%s-%03d-%s", ft, i, h)
		row.Meta = map[string]any{"source": "svbench-corpus", "baseline": row.Meta["baseline"], "seed": o.Seed}
		rows = append(rows, row)
	}
	// Interleave types deterministically so a prefix (-n 10) has both.
	perm := rng.Perm(len(rows))
	out := make([]Row, len(rows))
	for i, p := range perm {
		out[i] = rows[p]
	}
	return out, nil
}

func countClean(rows []Row) int {
	n := 0
	for _, r := range rows {
		if len(r.Labels.Mutations) == 0 {
			n++
		}
	}
	return n
}

func mutateBaseline(b Baseline, clean bool, maxMut int, rng *rand.Rand) (Row, bool, error) {
	row := Row{FixtureType: b.Fixture, Path: b.Path, Meta: map[string]any{"baseline": b.Name}}
	content := b.Content
	if !clean {
		cat := Mutations(b.Fixture)
		k := 1 + rng.IntN(maxMut)
		var applied []Mutation
		for _, idx := range rng.Perm(len(cat)) {
			if len(applied) == k {
				break
			}
			if conflicts(cat[idx], applied) {
				continue
			}
			out, ok, err := cat[idx].Apply(content)
			if err != nil {
				return Row{}, false, err
			}
			if ok {
				content = out
				applied = append(applied, cat[idx])
			}
		}
		if len(applied) == 0 {
			return Row{}, false, nil
		}
		sort.Slice(applied, func(i, j int) bool { return applied[i].Name < applied[j].Name })
		for _, m := range applied {
			row.Labels.Mutations = append(row.Labels.Mutations, m.Name)
			row.Labels.Expected = append(row.Labels.Expected, m.Findings...)
		}
	}
	row.Labels.Expected = dedupViolations(row.Labels.Expected)
	if row.Labels.Mutations == nil {
		row.Labels.Mutations = []string{}
	}
	row.Labels.Source = "mutations"
	row.Content = string(content)
	// Vary the directory so the path does not give the baseline away.
	dir := []string{"deploy", "infra", "platform", "services", "ops"}[rng.IntN(5)]
	row.Path = dir + "/" + strings.SplitN(b.Path, "/", 2)[1]
	return row, true, nil
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
