package scannercheck

import (
	"context"
	"slices"
	"testing"

	"github.com/svbench/svbench/envs/configaudit/policypack"
	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/kubelint"
	"github.com/svbench/svbench/verify/policy"
	"github.com/svbench/svbench/verify/tfscan"
)

// scanners are the public tools E2 offers the model, configured as E2
// configures them (kube-linter's defaults plus E2's RBAC checks).
type scanners struct {
	k8s, tf []verify.Verifier
}

func newScanners(t *testing.T) *scanners {
	t.Helper()
	kl, err := kubelint.New(kubelint.Options{Include: []string{"wildcard-in-rules", "access-to-secrets", "cluster-admin-role-binding"}})
	if err != nil {
		t.Fatal(err)
	}
	ts, err := tfscan.New(tfscan.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pe, err := policy.New(context.Background(), policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &scanners{k8s: []verify.Verifier{kl, policy.Kubernetes{Engine: pe}}, tf: []verify.Verifier{ts, policy.Terraform{Engine: pe}}}
}

// scan counts findings per tool-qualified id.
func (s *scanners) scan(t *testing.T, fixture, path, content string) map[string]int {
	t.Helper()
	vs := s.k8s
	if fixture == policypack.FixtureTerraform {
		vs = s.tf
	}
	out := map[string]int{}
	for _, v := range vs {
		fs, err := v.Verify(context.Background(), []verify.File{{Path: path, Content: []byte(content)}})
		if err != nil {
			t.Fatalf("%s on %s: %v", v.Name(), path, err)
		}
		for _, f := range fs {
			out[f.ID()]++
		}
	}
	return out
}

// TestMutationScannerIDsConfirmed runs the public scanners on every base and
// mutation: the scanner ids a mutation declares must be exactly the ids
// reported more often after it than before. Exception mutations must trigger
// at least one, which makes exception rows false positives for a model that
// copies the scanners; every exception clause must be triggered that way.
func TestMutationScannerIDsConfirmed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs kube-linter and trivy on every mutation")
	}
	s := newScanners(t)
	for _, p := range policypack.Embedded() {
		cases, err := p.Cases()
		if err != nil {
			t.Fatal(err)
		}
		t.Run(p.ID(), func(t *testing.T) {
			excepted := map[string]bool{}
			before := map[string]map[string]int{}
			for _, c := range cases {
				if before[c.Base] == nil {
					before[c.Base] = s.scan(t, p.FixtureType(), c.Path, c.Before)
				}
				after := s.scan(t, p.FixtureType(), c.Path, c.After)
				var added []string
				for id, n := range after {
					if n > before[c.Base][id] {
						added = append(added, id)
					}
				}
				slices.Sort(added)
				if want := slices.Sorted(slices.Values(c.ScannerIDs)); !slices.Equal(added, want) {
					t.Errorf("%s/%s: declares scanner ids %v, the scanners add %v", c.Base, c.Mutation, want, added)
				}
				if len(c.Exercises) > 0 && len(c.ScannerIDs) == 0 {
					t.Errorf("%s/%s: an exception mutation must trigger a scanner finding", c.Base, c.Mutation)
				}
				for _, cl := range c.Exercises {
					for _, id := range c.ScannerIDs {
						excepted[cl+" "+id] = true
					}
				}
			}
			for _, c := range p.Clauses() {
				if c.Type != policypack.Exception {
					continue
				}
				ok := false
				for _, id := range c.ScannerIDs {
					ok = ok || excepted[c.ID+" "+id]
				}
				if !ok {
					t.Errorf("exception clause %s: no exception mutation triggers any of its scanner ids %v", c.ID, c.ScannerIDs)
				}
			}
		})
	}
}
