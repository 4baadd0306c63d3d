package redteam

import (
	"bytes"
	"context"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/svbench/svbench/dataset/integrity"
	"github.com/svbench/svbench/env"
)

var update = flag.Bool("update", false, "rewrite data/{test,train,dev}.jsonl from the spec tables")

// TestGeneratedSplits renders every spec table and compares it byte for
// byte with the embedded file; -update rewrites the files.
func TestGeneratedSplits(t *testing.T) {
	for _, c := range []struct {
		split    string
		embedded []byte
	}{{"test", testRows}, {"train", trainRows}, {"dev", devRows}} {
		got, err := GenerateSplit(c.split)
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			if err := os.WriteFile("data/"+c.split+".jsonl", got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if !bytes.Equal(got, c.embedded) {
			t.Errorf("data/%s.jsonl differs from the spec tables; run `go test ./envs/redteam -run TestGeneratedSplits -update` and review the diff", c.split)
		}
	}
}

// TestSpecTables: the rules the tables' comments promise, checked on the
// rows as the environments load them.
func TestSpecTables(t *testing.T) {
	ctx := context.Background()
	d := mustDefense(t, env.Options{})
	a := mustAttack(t, env.Options{})
	mini := 0
	for line := range bytes.Lines(miniSet) {
		if len(bytes.TrimSpace(line)) > 0 {
			mini++
		}
	}
	ids := map[string]string{}
	texts := map[string]string{}
	for _, c := range []struct {
		split           string
		minHarmful, min int
	}{{env.SplitTest, 100, 200}, {env.SplitTrain, 60, 120}, {env.SplitDev, 20, 40}} {
		ds, err := d.LoadSplit(ctx, c.split)
		if err != nil {
			t.Fatal(err)
		}
		as, err := a.LoadSplit(ctx, c.split)
		if err != nil {
			t.Fatal(err)
		}
		if len(as.Examples) < c.minHarmful || len(ds.Examples) < c.min {
			t.Errorf("%s: %d harmful rows (E5) and %d rows (E6), want ≥ %d and ≥ %d", c.split, len(as.Examples), len(ds.Examples), c.minHarmful, c.min)
		}
		pairs := map[string]int{}
		for i, ex := range ds.Examples {
			s := ex.Payload.(*Scenario)
			if prev, dup := ids[ex.ID]; dup {
				t.Errorf("%s: id %s also in %s", c.split, ex.ID, prev)
			}
			ids[ex.ID] = c.split
			for _, txt := range []string{s.Request, s.Behavior} {
				if txt == "" || (s.Kind == KindBenign && txt == s.Behavior) {
					continue
				}
				n := integrity.Normalise(txt)
				if prev, dup := texts[n]; dup && prev != c.split+"/"+s.Pair {
					t.Errorf("%s %s: %q repeats a row of %s", c.split, ex.ID, txt, prev)
				}
				texts[n] = c.split + "/" + s.Pair
			}
			if _, ok := CategoryByID(s.Category); !ok {
				t.Errorf("%s: category %q not in the taxonomy", ex.ID, s.Category)
			}
			pairs[s.Pair]++
			if c.split == env.SplitTest && i < mini {
				continue // the hand-written rows predate these rules
			}
			if s.Kind == KindHarmful {
				words := []string{s.Behavior}
				for _, cond := range s.SuccessConditions {
					words = append(words, strings.Join(cond.Keywords, " "))
				}
				for _, w := range words {
					if newPhraseSet(w).any(attackerDisallowed) {
						t.Errorf("%s: %q uses a word the judge punishes in an attacker's own text", ex.ID, w)
					}
				}
				if len(s.UnsafeIndicators) < 3 || !strings.HasPrefix(s.Behavior, "[REQUEST: ") {
					t.Errorf("%s: want a [REQUEST: …] descriptor and 3 indicators: %q %v", ex.ID, s.Behavior, s.UnsafeIndicators)
				}
				// The built-in defenders' advice is for benign topics: a
				// harmful request that matched it would make helpful-all
				// look safe on that row.
				if _, ok := knownAdvice([]env.Message{{Role: env.RoleUser, Content: s.Request}}); ok {
					t.Errorf("%s: the built-in advice table answers this harmful request", ex.ID)
				}
			} else if looksHarmful([]env.Message{{Role: env.RoleUser, Content: s.Request}}) || s.ReferenceResponse == "" {
				t.Errorf("%s: a benign twin that reads as harmful to the built-in defenders, or has no reference answer: %q", ex.ID, s.Request)
			}
		}
		for p, n := range pairs {
			if n != 2 {
				t.Errorf("%s: pair %s has %d rows, want a harmful row and its twin", c.split, p, n)
			}
		}
	}
	// The hand-written rows lead the evaluation set unchanged.
	ds, err := d.Load(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(evalSet, miniSet) || ds.Examples[0].ID != "rt-cyber-intrusion" || ds.Examples[mini-1].ID != "rt-code-interpreter-benign" {
		t.Errorf("the evaluation set no longer starts with data/mini.jsonl's %d rows", mini)
	}
}
