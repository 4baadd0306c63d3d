package phishing

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/phishing/mail"
)

// TestFamiliesWellFormed checks the template bank: unique names, a known
// theme and split, every theme in every split (three families in train),
// the lines each theme's campaigns read, and no placeholder left unfilled
// in any generated message.
func TestFamiliesWellFormed(t *testing.T) {
	themes := []string{themeAccount, themePassword, themeBilling, themeParcel, themeIT, themeRequest, themeNewsletter}
	seen := map[string]bool{}
	count := map[string]map[string]int{}
	for i := range families {
		f := &families[i]
		th := themeOf(f)
		if seen[f.name] || !slices.Contains(themes, th) || checkGeneratorSplit(f.split) != nil || FamilySplit(f.name) != f.split {
			t.Errorf("family %q: duplicate name, unknown theme or bad split %q", f.name, f.split)
		}
		seen[f.name] = true
		if count[th] == nil {
			count[th] = map[string]int{}
		}
		count[th][f.split]++
		for what, v := range map[string]tr3{"subject": f.subject, "body": f.body} {
			if v.en == "" || v.es == "" || v.de == "" {
				t.Errorf("%s: %s missing in a language", f.name, what)
			}
		}
		need := map[string][]tr3{
			themeAccount: {f.cta, f.press, f.note}, themePassword: {f.cta, f.press, f.note}, themeParcel: {f.cta, f.press, f.note},
			themeIT: {f.cta, f.press, f.note, f.urgent}, themeBilling: {f.cta, f.note, f.ask[CampaignInvoiceBEC]},
			themeRequest:    {f.urgent, f.ask[CampaignGiftCard], f.ask[CampaignPayrollChange], f.ask[askLegitErrand], f.ask[askLegitGift], f.ask[askLegitPayroll]},
			themeNewsletter: {f.stories, f.press},
		}[th]
		for j, v := range need {
			if v.en == "" || v.es == "" || v.de == "" {
				t.Errorf("%s: line %d its campaigns read is missing in a language", f.name, j)
			}
		}
	}
	for _, th := range themes {
		if c := count[th]; c[env.SplitTrain] < 3 || c[env.SplitDev] < 1 || c[env.SplitTest] < 1 {
			t.Errorf("theme %s has families %v, want at least 3 train, 1 dev, 1 test", th, c)
		}
	}
	for _, r := range Generate(5, 1200) {
		m := mail.Parse(r.Email)
		if strings.ContainsAny(m.Subject+m.Text, "{}") {
			t.Errorf("%s (%s): a placeholder is left: %q", r.ID, r.Meta.Template, m.Subject)
		}
		if FamilySplit(r.Meta.Template) == "" {
			t.Errorf("%s: template %q is no family", r.ID, r.Meta.Template)
		}
	}
	if _, err := GenerateSplit("validation", 1, 1); err == nil {
		t.Error("GenerateSplit accepted an unknown split")
	}
}

// TestSplitsShareNoTemplate is the split by template family (issue #41):
// every served row names its family, each split uses only its own, no two
// splits share one, each split has both labels in every theme and about
// half phishing, and no test or dev row is a near-duplicate of a train
// row by the words the template lookup compares (Jaccard of the word sets
// of subject and text, URLs removed).
func TestSplitsShareNoTemplate(t *testing.T) {
	bySplit := map[string]map[string]bool{}
	for _, split := range env.SplitNames() {
		exs := loadSplit(t, split)
		fams := map[string]bool{}
		phish := 0
		labels := map[string]map[string]bool{}
		for _, ex := range exs {
			name, _ := ex.Meta["template"].(string)
			if FamilySplit(name) != split {
				t.Fatalf("%s row %s: template %q belongs to split %q", split, ex.ID, name, FamilySplit(name))
			}
			fams[name] = true
			th, _, _ := strings.Cut(name, "/")
			gold := ex.Payload.(*payload).gold
			if labels[th] == nil {
				labels[th] = map[string]bool{}
			}
			labels[th][gold] = true
			if gold == LabelPhishing {
				phish++
			}
		}
		bySplit[split] = fams
		share := float64(phish) / float64(len(exs))
		t.Logf("%s: %d rows, %.2f phishing, %d families", split, len(exs), share, len(fams))
		if share < 0.45 || share > 0.55 {
			t.Errorf("%s is %.2f phishing", split, share)
		}
		for th, ls := range labels {
			if len(ls) != 2 {
				t.Errorf("%s: theme %s has only %v: its template gives the label away", split, th, slices.Sorted(maps.Keys(ls)))
			}
		}
	}
	for _, a := range env.SplitNames() {
		for _, b := range env.SplitNames() {
			if a < b {
				for f := range bySplit[a] {
					if bySplit[b][f] {
						t.Errorf("template %s in %s and %s", f, a, b)
					}
				}
			}
		}
	}

	l := fitTemplateLookup(mustSplit(t, env.SplitTrain))
	best := func(rows []Row) []float64 {
		var s []float64
		for _, r := range rows {
			_, sim := l.Nearest(r.Email)
			s = append(s, sim)
		}
		slices.Sort(s)
		return s
	}
	// A new fill of a train template is nearly the same words (median
	// 0.95): the measure sees a shared template. Test and dev rows stay
	// under 0.5 (at most 0.44 and 0.42 on e4-gen/3).
	fresh, err := GenerateSplit(env.SplitTrain, 3103, 180)
	if err != nil {
		t.Fatal(err)
	}
	same := best(fresh)
	t.Logf("fresh rows of train's families: best similarity to train min %.2f, median %.2f", same[0], same[len(same)/2])
	if same[len(same)/2] < 0.8 {
		t.Errorf("fresh fills of train templates have median similarity %.2f: the measure no longer sees a shared template", same[len(same)/2])
	}
	const nearDuplicate = 0.5
	for _, sp := range []struct {
		name string
		rows []Row
	}{{env.SplitTest, miniRowsForTest(t)}, {env.SplitDev, mustSplit(t, env.SplitDev)}} {
		s := best(sp.rows)
		t.Logf("%s: best similarity to a train row median %.2f, max %.2f", sp.name, s[len(s)/2], s[len(s)-1])
		if top := s[len(s)-1]; top >= nearDuplicate {
			t.Errorf("a %s row has similarity %.2f to a train row (near-duplicate at %.2f)", sp.name, top, nearDuplicate)
		}
	}
}
