package configaudit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/svbench/svbench/dataset/integrity"
	"github.com/svbench/svbench/verify"
)

var update = flag.Bool("update", false, "rewrite data/mini.jsonl from the generator")

// Mini set parameters: changing them (or the corpus, or the catalogue)
// changes the embedded set, which this test then asks to regenerate.
var miniOptions = DefaultGenOptions(160, 20260601)

func encodeRows(t testing.TB, rows []Row) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func TestMiniSetIsReproducible(t *testing.T) {
	e, _ := testEnv(t)
	rows, _, err := e.Generate(context.Background(), miniOptions)
	if err != nil {
		t.Fatal(err)
	}
	got := encodeRows(t, rows)
	if *update {
		if err := os.WriteFile("data/mini.jsonl", got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(got, miniJSONL) {
		t.Fatal("data/mini.jsonl differs from the generator's output; run `go test ./envs/configaudit -run TestMiniSetIsReproducible -update` and commit the file")
	}
	if raceEnabled {
		return // one generation is enough to look for races
	}
	again, _, _ := e.Generate(context.Background(), miniOptions)
	if !bytes.Equal(encodeRows(t, again), got) {
		t.Fatal("Generate is not deterministic")
	}
}

// TestMiniSetComposition reads the embedded set, which
// TestMiniSetIsReproducible holds equal to Generate(miniOptions).
func TestMiniSetComposition(t *testing.T) {
	var rows []Row
	for _, l := range bytes.Split(bytes.TrimSpace(miniJSONL), []byte("\n")) {
		var r Row
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	var tf, clean int
	ids := map[string]bool{}
	for _, r := range rows {
		if ids[r.ID] {
			t.Errorf("duplicate id %s", r.ID)
		}
		ids[r.ID] = true
		if r.FixtureType == FixtureTF {
			tf++
		}
		if len(r.Labels.Mutations) == 0 {
			clean++
			if len(r.Labels.Expected) != 0 {
				t.Errorf("%s: clean row with expected findings", r.ID)
			}
		} else if len(r.Labels.Expected) == 0 {
			t.Errorf("%s: mutated row without expected findings", r.ID)
		}
	}
	if len(rows) != miniOptions.N {
		t.Errorf("%d rows, want %d", len(rows), miniOptions.N)
	}
	if float64(tf) < 0.4*float64(len(rows)) {
		t.Errorf("%d Terraform rows of %d, want >= 40%%", tf, len(rows))
	}
	if clean == 0 {
		t.Error("no clean rows")
	}
	t.Logf("rows=%d terraform=%d clean=%d", len(rows), tf, clean)
}

func genRows(t *testing.T, o GenOptions) ([]Row, GenStats) {
	t.Helper()
	e, _ := testEnv(t)
	rows, st, err := e.Generate(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != o.N {
		t.Fatalf("%d rows, want %d", len(rows), o.N)
	}
	return rows, st
}

// TestGenerateSharesAreLiteral: --tf-share 0 used to become 0.45.
func TestGenerateSharesAreLiteral(t *testing.T) {
	count := func(rows []Row) (tf, clean int) {
		for _, r := range rows {
			if r.FixtureType == FixtureTF {
				tf++
			}
			if len(r.Labels.Mutations) == 0 {
				clean++
			}
		}
		return
	}
	gen := func(o GenOptions) []Row { rows, _ := genRows(t, o); return rows }
	o := DefaultGenOptions(30, 3)
	o.TFShare = 0
	if tf, _ := count(gen(o)); tf != 0 {
		t.Errorf("TFShare 0: %d Terraform rows", tf)
	}
	o.N, o.TFShare, o.CleanShare = 12, 1, 0
	if tf, clean := count(gen(o)); tf != 12 || clean != 0 {
		t.Errorf("TFShare 1, CleanShare 0: %d Terraform and %d clean rows of 12", tf, clean)
	}
	o = DefaultGenOptions(40, 3)
	q := o.quotas(40)
	if tf, clean := count(gen(o)); tf != q["tf/findings"]+q["tf/clean"] || clean != q["tf/clean"]+q["k8s/clean"] {
		t.Errorf("defaults: %d Terraform, %d clean rows; quotas %v", tf, clean, q)
	}
	for _, bad := range []GenOptions{{N: 1, TFShare: -0.1, MaxMutations: 1}, {N: 1, TFShare: 1.5, MaxMutations: 1},
		{N: 1, CleanShare: 2, MaxMutations: 1}, {N: 1, MaxMutations: 0}, {N: 1, MaxMutations: MaxMutationsLimit + 1}, {N: 0, MaxMutations: 1}} {
		if _, _, err := (&Env{}).Generate(context.Background(), bad); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// TestGenerateRowsAreDistinct: rows differ even after integrity.Normalise
// (the old generator repeated clean baselines verbatim), every label is the
// union of its mutations' findings, and rows carry their group.
func TestGenerateRowsAreDistinct(t *testing.T) {
	n := 400
	if raceEnabled {
		n = 150
	}
	rows, st := genRows(t, DefaultGenOptions(n, 11))
	seen := map[string]string{}
	groups := map[string]bool{}
	for _, r := range rows {
		k := integrity.Normalise(r.Content)
		if prev, dup := seen[k]; dup {
			t.Fatalf("%s and %s have the same content up to case, digits and spacing", prev, r.ID)
		}
		seen[k] = r.ID
		var want []Violation
		for _, name := range r.Labels.Mutations {
			m, ok := MutationByName(name)
			if !ok {
				t.Fatalf("%s: unknown mutation %s", r.ID, name)
			}
			want = append(want, m.Findings...)
		}
		if got, want := r.Labels.Expected, dedupViolations(want); !slices.Equal(got, want) {
			t.Errorf("%s: expected %v, want %v", r.ID, got, want)
		}
		g := r.GroupKey()
		if !strings.HasPrefix(g, r.Meta["baseline"].(string)+"|") {
			t.Errorf("%s: group %q does not name baseline %v", r.ID, g, r.Meta["baseline"])
		}
		groups[g] = true
	}
	if st.Groups != len(groups) || st.Verified != len(rows) || st.Rejected != 0 {
		t.Errorf("stats %+v: %d groups seen", st, len(groups))
	}
}

// TestGenerateCapacity: asking for more rows than the generator can make
// distinct is an error naming the maximum; the default options allow at
// least 5,000 rows.
func TestGenerateCapacity(t *testing.T) {
	st, err := Capacity(DefaultGenOptions(0, 1))
	if err != nil {
		t.Fatal(err)
	}
	if st.MaxN < 5000 {
		t.Errorf("default options allow %d distinct rows, want >= 5000 (capacity %v)", st.MaxN, st.Capacity)
	}
	o := DefaultGenOptions(st.MaxN+1, 1)
	_, _, err = (&Env{}).Generate(context.Background(), o)
	var ce *CapacityError
	if !errors.As(err, &ce) || ce.Max != st.MaxN || !strings.Contains(err.Error(), fmt.Sprint(st.MaxN)) {
		t.Fatalf("n = max+1: %v", err)
	}
	// Quotas at the maximum fit; one more row does not.
	fits := func(n int) bool {
		for s, q := range o.quotas(n) {
			if q > st.Capacity[s] {
				return false
			}
		}
		return true
	}
	if !fits(st.MaxN) || fits(st.MaxN+1) {
		t.Errorf("MaxN %d is not the largest fitting n", st.MaxN)
	}
	t.Logf("capacity %v, max n %d", st.Capacity, st.MaxN)
}

// TestDrawExhaustsACell: a cell with three variants gives three different
// rows, then none.
func TestDrawExhaustsACell(t *testing.T) {
	bp := &basePlan{b: Baseline{Name: "tf/x", Fixture: FixtureTF, Path: "infra/x/main.tf"},
		variation: newVariation([]slot{words("name", "alpha", "alpha", "beta", "gamma")})}
	c := &cell{base: bp, stratum: "tf/clean", group: "tf/x|clean", names: []string{}, content: "name = \"alpha\"\n", share: 1, cap: 3}
	c.counted = bp.variation.counted(c.content)
	bp.clean = c
	gs := newGenState(&genPlan{bases: []*basePlan{bp}, cells: []*cell{c}})
	rng := rand.New(rand.NewPCG(1, 2))
	got := map[string]bool{}
	for i := 0; i < 3; i++ {
		cand, err := gs.draw("tf/clean", rng)
		if err != nil || cand == nil {
			t.Fatalf("draw %d: %v %v", i, cand, err)
		}
		got[cand.content] = true
	}
	if len(got) != 3 {
		t.Errorf("contents %v", got)
	}
	if cand, err := gs.draw("tf/clean", rng); cand != nil || err != nil {
		t.Errorf("fourth draw: %v %v", cand, err)
	}
}

func TestReplacerWholeWords(t *testing.T) {
	r := newReplacer([]string{"shop", "checkout", "eu-west-1", "eu-west-1a", "acme"})
	in := `name: checkout-db checkout_db shop.svc eu-west-1a arn:eu-west-1:x acme-shop shopping "checkout"`
	want := `name: pay-db checkout_db retail.svc us-east-2a arn:us-east-2:x globex-retail shopping "pay"`
	got := r.replace(in, map[string]string{"shop": "retail", "checkout": "pay", "eu-west-1": "us-east-2", "eu-west-1a": "us-east-2a", "acme": "globex"})
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestVariationSlots: every option of a slot differs from the others after
// normalisation for every token, every Terraform token is a word of its
// baseline, and every counted slot changes the clean baseline.
func TestVariationSlots(t *testing.T) {
	p, err := planFor(DefaultMaxMutations)
	if err != nil {
		t.Fatal(err)
	}
	for _, bp := range p.bases {
		present := bp.variation.rep.present(string(bp.b.Content))
		for _, s := range bp.variation.slots {
			for ti, tok := range s.tokens {
				if !present[tok] && (bp.b.Fixture == FixtureTF || !s.cosmetic) {
					t.Errorf("%s: slot %s: token %q is not a word of the baseline", bp.b.Name, s.name, tok)
				}
				if s.cosmetic {
					continue
				}
				seen := map[string]bool{}
				for _, o := range s.options {
					k := integrity.Normalise(o[ti])
					if seen[k] {
						t.Errorf("%s: slot %s: option %q repeats another after normalisation", bp.b.Name, s.name, o[ti])
					}
					seen[k] = true
				}
			}
		}
		if bp.clean == nil || bp.clean.cap < 100 {
			t.Errorf("%s: fewer than 100 clean variants", bp.b.Name)
		}
	}
}

// TestVariantsAreNeutral: renaming changes nothing the verifiers report on
// the clean baselines (all finding ids, not only the catalogue's).
func TestVariantsAreNeutral(t *testing.T) {
	e, _ := testEnv(t)
	v, err := e.verifiers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := planFor(DefaultMaxMutations)
	ids := func(bp *basePlan, content string) string {
		fs, err := v.all(context.Background(), bp.b.Fixture, verify.File{Path: bp.b.Path, Content: []byte(content)}, "")
		if err != nil {
			t.Fatalf("%s: %v", bp.b.Name, err)
		}
		var out []string
		for _, f := range fs {
			out = append(out, f.ID())
		}
		slices.Sort(out)
		return strings.Join(slices.Compact(out), " ")
	}
	rng := rand.New(rand.NewPCG(5, 5))
	for _, bp := range p.bases {
		c := bp.clean
		text, err := c.text()
		if err != nil {
			t.Fatal(err)
		}
		want := ids(bp, string(bp.b.Content))
		for _, vi := range []int{0, c.cap / 3, c.cap - 1} {
			if got := ids(bp, bp.variation.apply(text, c.counted, vi, rng)); got != want {
				t.Errorf("%s variant %d: verifiers report [%s], the baseline [%s]", bp.b.Name, vi, got, want)
			}
		}
	}
}

// TestEveryCompositionConfirmedByVerifiers scans every combination the
// generator can draw (before renaming): the verifiers report exactly its
// labelled catalogue ids, so no row is ever rejected and Capacity is exact.
// Under -race (verifiers ~5x slower) every 10th composition is scanned.
func TestEveryCompositionConfirmedByVerifiers(t *testing.T) {
	if testing.Short() {
		t.Skip("scans every one of ~4,300 compositions")
	}
	e, _ := testEnv(t)
	v, err := e.verifiers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	p, _ := planFor(DefaultMaxMutations)
	var batch []*candidate
	for i, c := range p.cells {
		if raceEnabled && i%10 != 0 {
			continue
		}
		text, err := c.text()
		if err != nil {
			t.Fatal(err)
		}
		batch = append(batch, &candidate{cell: c, path: c.base.b.Path, content: text})
	}
	if err := confirm(context.Background(), v, batch); err != nil {
		t.Fatal(err)
	}
	for _, c := range batch {
		if c.reject != "" {
			t.Error(c.reject)
		}
	}
	t.Logf("%d compositions confirmed", len(batch))
}
