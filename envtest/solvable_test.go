package envtest_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envtest"
	"github.com/svbench/svbench/envtest/toyparity"
)

func TestFamily(t *testing.T) {
	for _, c := range []struct{ id, want string }{
		{"py-089-gen-sqli-3fa9c1", "py-089-gen-sqli"},
		{"go-338-gen-gorand-00a1ff", "go-338-gen-gorand"},
		{"train-e2-k8s-ba3834b3e945", "train-e2-k8s"},
		{"py-089-user-lookup", "py-089-user-lookup"}, // hand-written: its own family
		{"py-094-calc", "py-094-calc"},
		{"py-330-gen-random-caaafb", "py-330-gen-random"}, // six hex letters: a suffix
		{"row-cafe", "row-cafe"},                          // four hex letters: a word
		{"p00", "p00"},
		{"x-", "x-"},
		{"-12", "-12"},
		{"", ""},
	} {
		if got := envtest.Family(c.id); got != c.want {
			t.Errorf("Family(%q) = %q, want %q", c.id, got, c.want)
		}
	}
}

func TestSampleFamilies(t *testing.T) {
	var rows []env.Example
	for _, id := range []string{"a-gen-1f", "a-gen-2f", "a-gen-3f", "b-gen-1f", "hand-written", "b-gen-2f"} {
		rows = append(rows, env.Example{ID: id})
	}
	for _, c := range []struct {
		per  int
		want []string
	}{
		{1, []string{"a-gen-1f", "b-gen-1f", "hand-written"}},
		{2, []string{"a-gen-1f", "a-gen-2f", "b-gen-1f", "hand-written", "b-gen-2f"}},
	} {
		var got []string
		for _, ex := range envtest.SampleFamilies(rows, c.per) {
			got = append(got, ex.ID)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("SampleFamilies(%d) = %v, want %v", c.per, got, c.want)
		}
	}
}

// wrongRef is the toy-parity environment with a reference that always
// answers yes and an inert answer that always answers no: every "no" row
// fails twice over.
type wrongRef struct{ toyparity.Env }

func reply(s string) env.Policy {
	return env.PolicyFunc(func(context.Context, []env.Message, []env.Tool) (env.Message, error) {
		return env.Message{Role: env.RoleAssistant, Content: s}, nil
	})
}

func (wrongRef) ReferencePolicy(env.Example) (env.Policy, error) { return reply("yes"), nil }
func (wrongRef) InertPolicies(env.Example) map[string]env.Policy {
	return map[string]env.Policy{"always-no": reply("no")}
}

// noRef has no reference answers.
type noRef struct{ toyparity.Env }

func (noRef) ReferencePolicy(ex env.Example) (env.Policy, error) { return nil, errNoGold }

var errNoGold = errors.New("no gold answer")

// TestSolvability: the check passes the toy environment's own reference,
// lists every row a wrong reference or a paying inert answer fails (not
// only the first), and refuses an environment without references.
func TestSolvability(t *testing.T) {
	ctx := t.Context()
	ds, err := toyparity.Env{}.Load(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var no []string
	for _, ex := range ds.Examples {
		if string(ex.Answer) == `"no"` {
			no = append(no, ex.ID)
		}
	}
	slices.Sort(no)
	for _, c := range []struct {
		name       string
		e          env.Environment
		refFail    []string // rows whose reference fails
		inertFail  []string // rows an inert answer solves
		wantErr    string
		failReason string
	}{
		{name: "gold reference", e: toyparity.Env{}},
		{name: "wrong reference", e: wrongRef{}, refFail: no, inertFail: no, failReason: "components {correct=0 format=1}"},
		{name: "no reference", e: noRef{}, refFail: idsOf(ds.Examples), failReason: "no reference answer"},
		{name: "not a Referencer", e: struct{ env.Environment }{toyparity.Env{}}, wantErr: "no reference answers"},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := envtest.Solvability(ctx, c.e, envtest.SolvableOptions{})
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err %v, want %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 || res[0].Split != env.SplitTest || res[0].Played != len(ds.Examples) {
				t.Fatalf("played %+v, want the test split's %d rows", res, len(ds.Examples))
			}
			var ref, inert []string
			for _, u := range res[0].Failures {
				if u.Answer == "reference" {
					ref = append(ref, u.Row)
					if !strings.Contains(u.String(), c.failReason) {
						t.Errorf("failure %q does not say %q", u, c.failReason)
					}
				} else {
					inert = append(inert, u.Row)
				}
			}
			slices.Sort(ref)
			slices.Sort(inert)
			if !slices.Equal(ref, c.refFail) || !slices.Equal(inert, c.inertFail) {
				t.Errorf("reference failures %v, inert solved %v; want %v and %v", ref, inert, c.refFail, c.inertFail)
			}
			if res[0].FailedRows != len(c.refFail) {
				t.Errorf("FailedRows %d, want %d", res[0].FailedRows, len(c.refFail))
			}
		})
	}
}

func idsOf(exs []env.Example) []string {
	var out []string
	for _, ex := range exs {
		out = append(out, ex.ID)
	}
	slices.Sort(out)
	return out
}
