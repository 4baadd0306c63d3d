package configaudit

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/svbench/svbench/env"
)

// TestRecordedPolicyExample: a recorded example of the policy condition
// (no payload) is rebuilt against the policy pack its answer names, in
// either mode; the rebuild once dropped the pack and refused the row.
func TestRecordedPolicyExample(t *testing.T) {
	pol, ds := policyEnv(t)
	std, err := NewEnv(env.Options{})
	if err != nil {
		t.Fatal(err)
	}
	oracle, ok := pol.Policy(PolicyOracle)
	if !ok {
		t.Fatal("no oracle policy")
	}
	for _, ex := range ds.Examples[:min(3, len(ds.Examples))] {
		want := ex.Payload.(*fixture)
		raw, err := json.Marshal(ex)
		if err != nil {
			t.Fatal(err)
		}
		var stripped env.Example
		if err := json.Unmarshal(raw, &stripped); err != nil {
			t.Fatal(err)
		}
		for name, e := range map[string]*Env{"policy": pol, "standard": std} {
			fx, err := e.payload(stripped)
			if err != nil {
				t.Fatalf("%s mode, row %s: %v", name, ex.ID, err)
			}
			if fx.Pack == nil || fx.Pack.ID() != want.Pack.ID() || fx.Path != want.Path || string(fx.Content) != string(want.Content) ||
				!slices.Equal(fx.Oracle, want.Oracle) || !slices.Equal(fx.Mutations, want.Mutations) {
				t.Errorf("%s mode, row %s: rebuilt %+v, loaded %+v", name, ex.ID, fx, want)
			}
		}
		sc, ro := playPolicy(t, pol, ex, oracle)
		again, err := pol.Score(context.Background(), stripped, ro, "")
		if err != nil || again.Total != sc.Total || again.Solved != sc.Solved {
			t.Errorf("row %s: recorded example scores %+v (%v), loaded %+v", ex.ID, again, err, sc)
		}
	}
}
