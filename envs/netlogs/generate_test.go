package netlogs

import (
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
	missing, lookalikes := 0, 0
	for _, r := range rows {
		if strings.Contains(r.Question, "=-") {
			missing++
		}
		if r.Meta["lookalike"] == true {
			lookalikes++
		}
	}
	if missing < 200 || lookalikes < 80 {
		t.Errorf("hard rows: %d with missing fields, %d look-alikes out of 400", missing, lookalikes)
	}
}
