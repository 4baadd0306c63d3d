package netlogs

import (
	"context"
	"testing"
)

// TestFittedShortcutsOutOfSample is issue #33's audit: every lookup on at
// most three fields and every tree up to depth 3, fitted on the train
// split (E1's own generator), scored on the evaluation set it never saw.
// Over which fields are recorded, the best of them — even chosen on the
// evaluation set itself, the most generous selection — must stay under
// 90% of the features baseline's reward: no field's presence may encode
// the label. Over field values the learners read real traffic (failed
// logins, fan-out, regularity) and today reach the features baseline
// (README, "Label shortcuts"); that figure is logged, not bounded.
func TestFittedShortcutsOutOfSample(t *testing.T) {
	e := New()
	hp, _ := e.Policy(PolicyFeatures)
	honest := meanReward(t, e, hp)
	fs, err := fittedShortcuts()
	if err != nil {
		t.Fatal(err)
	}
	ds, err := e.Load(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	test := e.ShortcutRows(ds)
	if len(test) != len(ds.Examples) {
		t.Fatalf("%d of %d rows have a record", len(test), len(ds.Examples))
	}
	t.Logf("honest %s %.3f, bound %.3f", PolicyFeatures, honest, 0.9*honest)
	for _, tc := range []struct {
		view    string
		fitted  []ScoredShortcut
		rows    []ShortcutRow
		bounded bool
	}{
		{"presence", fs.presence, PresenceRows(test), true},
		{"values", fs.values, test, false},
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
			if tc.bounded && best.Reward >= 0.9*honest {
				t.Errorf("%s earns %.3f out of sample, at or over 90%% of the honest %.3f", best.Name, best.Reward, honest)
			}
		})
	}
}
