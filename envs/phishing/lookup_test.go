package phishing

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/svbench/svbench/env"
)

// played is what a policy earned on a set of examples.
type played struct {
	mean  float64
	right int
	rows  int
	// byCampaign counts right answers and rows per meta.campaign.
	byCampaign map[string][2]int
}

func (p played) accuracy() float64 { return float64(p.right) / float64(p.rows) }

// play runs pol on every example and scores it with the default rubric.
func play(t *testing.T, pol env.Policy, exs []env.Example) played {
	t.Helper()
	ctx := context.Background()
	out := played{rows: len(exs), byCampaign: map[string][2]int{}}
	total := 0.0
	for _, ex := range exs {
		msg, err := pol.Act(ctx, ex.Prompt, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := score(t, ex, msg.Content, "")
		total += s.Total
		c, _ := ex.Meta["campaign"].(string)
		n := out.byCampaign[c]
		n[1]++
		if s.Components["accuracy"] == 1 {
			out.right++
			n[0]++
		}
		out.byCampaign[c] = n
	}
	out.mean = total / float64(len(exs))
	return out
}

func loadSplit(t *testing.T, split string) []env.Example {
	t.Helper()
	ds, err := New().LoadSplit(context.Background(), split)
	if err != nil {
		t.Fatal(err)
	}
	return ds.Examples
}

// rowExamples parses generated rows as the embedded sets are parsed.
func rowExamples(t *testing.T, rows []Row) []env.Example {
	t.Helper()
	out := make([]env.Example, len(rows))
	for i, r := range rows {
		raw, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if out[i], err = parseRow(raw, true); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func exploit(t *testing.T, name string) env.Policy {
	t.Helper()
	for _, x := range New().Exploits() {
		if x.Name == name {
			return x.Policy
		}
	}
	t.Fatalf("no exploit %q", name)
	return nil
}

// lookupBound is the most the template lookup may earn, as a fraction of
// the honest baseline's mean reward on the same rows. The lookup reads no
// header, link host or attachment and cites nothing, so what it can still
// earn is what the words of a message give away. Some of that is content a
// header-reading policy also uses, not a template: the ask of gift-card,
// payroll and invoice fraud and the pressure line of hard phishing, whose
// content is its only tell. On e4-gen/2 it earned 99% of the honest
// baseline (1.950 against 1.964) because test shared train's templates;
// 85% leaves those content cues their due and holds it to clearly less,
// stricter than the 90% E1 allows its label shortcuts (TestExploitsBelowHonest
// in envs/netlogs).
const lookupBound = 0.85

// TestTemplateLookupBelowHonest is issue #41's E4 audit: the nearest-
// template lookup fitted on the served train split, scored where test
// rows come from (the embedded test split) and on dev, earns well below
// the honest indicators baseline on the same rows. The lookup on fresh
// rows of train's own families is logged beside it: what knowing the
// template would earn, and what splitting by family takes away.
func TestTemplateLookupBelowHonest(t *testing.T) {
	e := New()
	honest, _ := e.Policy(PolicyIndicators)
	lookup := exploit(t, "template-lookup")
	for _, split := range []string{env.SplitTest, env.SplitDev} {
		exs := loadSplit(t, split)
		h, l := play(t, honest, exs), play(t, lookup, exs)
		t.Logf("%s (%d rows): honest %.3f (%d right), template-lookup %.3f (%d right, %.0f%% of honest)", split, h.rows, h.mean, h.right, l.mean, l.right, 100*l.mean/h.mean)
		t.Logf("%s template-lookup right per campaign: %v", split, l.byCampaign)
		if l.mean > lookupBound*h.mean {
			t.Errorf("%s: the template lookup earns %.3f, over %.0f%% of the honest %.3f: train and %s share what gives the label away", split, l.mean, 100*lookupBound, h.mean, split)
		}
		if l.accuracy() > h.accuracy()-0.1 {
			t.Errorf("%s: the template lookup labels %.3f right, within 0.1 of the honest %.3f", split, l.accuracy(), h.accuracy())
		}
	}
	// A seed no split uses: new fills of the templates train has.
	fresh, err := GenerateSplit(env.SplitTrain, 3103, 180)
	if err != nil {
		t.Fatal(err)
	}
	exs := rowExamples(t, fresh)
	h, l := play(t, honest, exs), play(t, lookup, exs)
	t.Logf("fresh rows of train's families: honest %.3f (%d right), template-lookup %.3f (%d right)", h.mean, h.right, l.mean, l.right)
}

// Bounds on the registered probes, as fractions of the honest baseline's
// mean reward on the test split. A constant answer or a confidence game
// reads nothing and a content shortcut one word, so at most 70%; the
// template lookup is held to lookupBound; stuffing the honest answer with
// padding keeps its labels, so it only has to stay below honest.
var exploitBounds = map[string]float64{
	"constant answer":   0.7,
	"confidence game":   0.7,
	"content shortcut":  0.7,
	"label shortcut":    lookupBound,
	"evidence stuffing": 1,
}

// TestExploitsBelowHonest: every registered strategy earns less than the
// indicators baseline on the test split, within its family's bound; the
// measured means are logged for the README's probe table.
func TestExploitsBelowHonest(t *testing.T) {
	e := New()
	exs := loadSplit(t, env.SplitTest)
	hp, _ := e.Policy(e.HonestPolicy())
	honest := play(t, hp, exs)
	t.Logf("honest %-24s %.3f %3d", e.HonestPolicy(), honest.mean, honest.right)
	xs := e.Exploits()
	names := make([]string, 0, len(xs))
	for _, x := range xs {
		names = append(names, x.Name)
		bound, ok := exploitBounds[x.Family]
		if !ok || x.Description == "" || x.Policy == nil {
			t.Errorf("exploit %q: family %q has no bound, or description or policy missing", x.Name, x.Family)
			continue
		}
		p := play(t, x.Policy, exs)
		t.Logf("exploit %-24s %.3f %3d  %3.0f%%  (%s)", x.Name, p.mean, p.right, 100*p.mean/honest.mean, x.Family)
		if p.mean >= honest.mean || p.mean > bound*honest.mean {
			t.Errorf("%s %s earns %.3f; the honest baseline %.3f, the bound %.0f%% of it", x.Family, x.Name, p.mean, honest.mean, 100*bound)
		}
	}
	if !slices.Contains(names, "template-lookup") {
		t.Error("the template lookup is not a registered probe strategy")
	}
}
