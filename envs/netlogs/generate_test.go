package netlogs

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
)

func TestGenerateDeterministic(t *testing.T) {
	opts := GenerateOptions{N: 300, Seed: 11, Difficulty: DifficultyMixed}
	a, err := Generate(opts)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(opts)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same options must give identical rows")
	}
	opts.Seed = 12
	c, _ := Generate(opts)
	same := 0
	for i := range a {
		if a[i].Question == c[i].Question {
			same++
		}
	}
	if same > 0 {
		t.Errorf("different seeds share %d identical rows", same)
	}
}

func TestGenerateBalanceAndUniqueness(t *testing.T) {
	for _, d := range []string{DifficultyEasy, DifficultyMedium, DifficultyHard, DifficultyMixed} {
		for _, render := range []string{"rich", "reference"} {
			rows, err := Generate(GenerateOptions{N: 1001, Seed: 3, Difficulty: d, Render: render})
			if err != nil {
				t.Fatal(err)
			}
			labels := map[string]int{}
			hashes := map[string]bool{}
			scen := map[string]bool{}
			for _, r := range rows {
				labels[r.Answer]++
				h := r.Meta["hash"].(string)
				if hashes[h] {
					t.Fatalf("%s/%s: duplicate hash %s", d, render, h)
				}
				hashes[h] = true
				scen[r.Meta["scenario"].(string)] = true
				if !strings.HasSuffix(r.Question, Instruction) {
					t.Fatalf("question lacks the instruction: %q", r.Question)
				}
				for _, k := range []string{"source", "scenario", "attack_family", "hash", "difficulty", "generator_version"} {
					if _, ok := r.Meta[k]; !ok {
						t.Fatalf("meta lacks %s: %v", k, r.Meta)
					}
				}
			}
			if labels[LabelMalicious] != 500 || labels[LabelBenign] != 501 {
				t.Errorf("%s/%s: labels %v, want 500/501", d, render, labels)
			}
			if len(scen) < 15 {
				t.Errorf("%s: only %d scenarios drawn", d, len(scen))
			}
		}
	}
}

func TestGenerateRejectsBadOptions(t *testing.T) {
	for _, o := range []GenerateOptions{{N: 0}, {N: 5, Difficulty: "brutal"}, {N: 5, Render: "html"}} {
		if _, err := Generate(o); err == nil {
			t.Errorf("%+v: want an error", o)
		}
	}
}

func TestHardHasMissingFields(t *testing.T) {
	rows, _ := Generate(GenerateOptions{N: 400, Seed: 5, Difficulty: DifficultyHard})
	missing, disguised, ambiguous := 0, 0, 0
	for _, r := range rows {
		if strings.Contains(r.Question, "=-") {
			missing++
		}
		if r.Meta["lookalike"] == true {
			disguised++
			if r.Answer != LabelMalicious || !strings.HasPrefix(r.Meta["scenario"].(string), "disguised_") {
				t.Errorf("look-alike %s is not a disguised attack: %s %v", r.ID, r.Answer, r.Meta["scenario"])
			}
		}
		if r.Meta["ambiguous"] == true {
			ambiguous++
		}
	}
	if missing < 200 || disguised < 15 || ambiguous < 60 || ambiguous > 180 {
		t.Errorf("hard rows: %d with missing fields, %d disguised attacks, %d ambiguous out of 400", missing, disguised, ambiguous)
	}
}

// TestNoFactDecidesAlone is synth-4's design (issue #41): within each
// activity, each of the two facts that decide it — and the activity
// itself — leaves the label balanced; only the two facts read together
// decide. Every row whose record shows its activity and both facts is
// decided, and the features baseline abstains about where the record does
// not decide. The reference rendering, which shows no hour, peer or
// cadence, decides no row.
func TestNoFactDecidesAlone(t *testing.T) {
	rows, err := Generate(GenerateOptions{N: 20_000, Seed: 41, Difficulty: DifficultyMixed})
	if err != nil {
		t.Fatal(err)
	}
	type tally struct{ mal, n int }
	byActivity := map[string]*tally{}
	byFact := map[string]*tally{} // "activity fact value"
	for _, r := range rows {
		a := r.Meta["activity"].(string)
		for _, k := range []string{a} {
			if byActivity[k] == nil {
				byActivity[k] = &tally{}
			}
			byActivity[k].n++
			byActivity[k].mal += int(b2f(r.Answer == LabelMalicious))
		}
		if r.Meta["ambiguous"] == true {
			continue
		}
		rec := parseRecord(r.Question)
		for _, act := range activities {
			if act.name != a {
				continue
			}
			for _, fc := range act.facts {
				k := fmt.Sprintf("%s %s=%d", a, factNames[fc], readFact(rec, fc))
				if byFact[k] == nil {
					byFact[k] = &tally{}
				}
				byFact[k].n++
				byFact[k].mal += int(b2f(r.Answer == LabelMalicious))
			}
		}
	}
	if len(byActivity) != len(activities) || len(byFact) != 4*len(activities) {
		t.Fatalf("%d activities, %d fact values seen", len(byActivity), len(byFact))
	}
	for _, m := range []map[string]*tally{byActivity, byFact} {
		for k, c := range m {
			if share := float64(c.mal) / float64(c.n); c.n < 500 || math.Abs(share-0.5) > 0.05 {
				t.Errorf("%s: %d rows, %.3f malicious; want balanced", k, c.n, share)
			}
		}
	}
	var abstainDecided, answerAmbiguous, decided, amb int
	for _, r := range rows[:4000] {
		label, _, _ := FeaturesDecide(r.Question)
		if r.Meta["ambiguous"] == true {
			amb++
			answerAmbiguous += int(b2f(label != LabelAbstain))
		} else {
			decided++
			abstainDecided += int(b2f(label == LabelAbstain))
		}
	}
	t.Logf("features: abstains on %d of %d decided rows, answers %d of %d ambiguous ones", abstainDecided, decided, answerAmbiguous, amb)
	// It misreads a little (a login target with two failures read as a
	// timer's check-ins), never much.
	if float64(abstainDecided) > 0.05*float64(decided) || float64(answerAmbiguous) > 0.02*float64(amb) {
		t.Errorf("features abstains on %d of %d decided rows and answers %d of %d ambiguous ones", abstainDecided, decided, answerAmbiguous, amb)
	}
	ref, _ := Generate(GenerateOptions{N: 200, Seed: 41, Render: "reference"})
	for _, r := range ref {
		if r.Meta["ambiguous"] != true {
			t.Fatalf("%s: a reference rendering decides no row, meta %v", r.ID, r.Meta)
		}
	}
}
