package netlogs

import (
	"context"
	"testing"
)

// auditTest is what the out-of-sample audits share: the evaluation set's
// rows, the features baseline's reward on them and the fitted learners.
func auditTest(t *testing.T) (test []ShortcutRow, honest float64, fs fitted) {
	t.Helper()
	e := New()
	hp, _ := e.Policy(PolicyFeatures)
	honest = meanReward(t, e, hp)
	fs, err := fittedShortcuts()
	if err != nil {
		t.Fatal(err)
	}
	ds, err := e.Load(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	test = e.ShortcutRows(ds)
	if len(test) != len(ds.Examples) {
		t.Fatalf("%d of %d rows have a record", len(test), len(ds.Examples))
	}
	return test, honest, fs
}

// TestFittedShortcutsOutOfSample is issue #33's audit: every lookup on at
// most three fields and every tree up to depth 3, fitted on the train
// split (E1's own generator), scored on the evaluation set it never saw.
// The best of them — even chosen on the evaluation set itself, the most
// generous selection — must stay under 90% of the features baseline's
// reward, over which fields are recorded (no field's presence may encode
// the label) and over their values (since synth-4 the label turns on an
// activity and two facts read together, issue #41; on synth-3 the values
// view reached 103% and was only logged).
func TestFittedShortcutsOutOfSample(t *testing.T) {
	test, honest, fs := auditTest(t)
	t.Logf("honest %s %.3f, bound %.3f", PolicyFeatures, honest, 0.9*honest)
	for _, tc := range []struct {
		view   string
		fitted []ScoredShortcut
		rows   []ShortcutRow
	}{
		{"presence", fs.presence, PresenceRows(test)},
		{"values", fs.values, test},
	} {
		t.Run(tc.view, func(t *testing.T) {
			var learners []Shortcut
			for _, s := range tc.fitted {
				learners = append(learners, s.Shortcut)
			}
			ranked := RankShortcuts(learners, tc.rows)
			for _, s := range ranked[:min(5, len(ranked))] {
				t.Logf("%-56s test %.3f", s.Name, s.Reward)
			}
			best, chosen := ranked[0], tc.fitted[0]
			t.Logf("chosen on dev: %s, dev %.3f, test %.3f; best on test %s %.3f (%.0f%% of honest); %d learners",
				chosen.Name, chosen.Reward, ShortcutReward(chosen.Shortcut, tc.rows), best.Name, best.Reward, 100*best.Reward/honest, len(ranked))
			if best.Reward >= 0.9*honest {
				t.Errorf("%s earns %.3f out of sample, at or over 90%% of the honest %.3f", best.Name, best.Reward, honest)
			}
		})
	}
}

// Bounds of TestFewFieldLookupsOutOfSample. A two-field lookup reads no
// activity together with both of its facts, so it may earn at most 80% of
// the features baseline (issue #41: on synth-3, device × history earned
// 94%). The baseline must stay informative: it closes at least half the
// gap between the best blind answer (blindAnswer, which reads nothing)
// and a perfect one (1.8).
const (
	twoFieldBound   = 0.8
	perfectAnswer   = 1.8
	informativeGain = 0.5
)

// TestFewFieldLookupsOutOfSample is issue #41's audit: the lookup over one
// field and the lookup over two fields that a policy would pick — every
// one fitted on the train split, the best chosen on dev — scored on the
// evaluation set beside the features baseline.
func TestFewFieldLookupsOutOfSample(t *testing.T) {
	test, honest, fs := auditTest(t)
	blind := meanReward(t, New(), constAnswer(blindAnswer))
	t.Logf("honest %s %.3f; best blind answer %.3f; bound for two fields %.3f", PolicyFeatures, honest, blind, twoFieldBound*honest)
	if floor := blind + informativeGain*(perfectAnswer-blind); honest < floor {
		t.Errorf("the features baseline earns %.3f, under %.3f: it no longer reads the traffic", honest, floor)
	}
	best := BestLookups(fs.values)
	for k := 1; k <= 2; k++ {
		s := best[k]
		if s.Name == "" {
			t.Fatalf("no %d-field lookup fitted", k)
		}
		r := ShortcutReward(s.Shortcut, test)
		t.Logf("best %d-field lookup on dev: %s, dev %.3f, test %.3f (%.0f%% of honest)", k, s.Name, s.Reward, r, 100*r/honest)
		if r > twoFieldBound*honest {
			t.Errorf("%s earns %.3f on the evaluation set, over %.0f%% of the honest %.3f", s.Name, r, 100*twoFieldBound, honest)
		}
	}
}
