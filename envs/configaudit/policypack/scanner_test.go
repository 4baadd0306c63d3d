package policypack

import (
	"context"
	"slices"
	"sort"
	"sync"
	"testing"

	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/kubelint"
	"github.com/svbench/svbench/verify/policy"
	"github.com/svbench/svbench/verify/tfscan"
)

// scanners are the public tools E2 offers the model, configured as E2
// configures them (kube-linter's defaults plus E2's RBAC checks).
type scanners struct {
	kube  *kubelint.Linter
	trivy *tfscan.Scanner
	opa   *policy.Engine
}

var testScanners = sync.OnceValues(func() (*scanners, error) {
	kl, err := kubelint.New(kubelint.Options{Include: []string{"wildcard-in-rules", "access-to-secrets", "cluster-admin-role-binding"}})
	if err != nil {
		return nil, err
	}
	ts, err := tfscan.New(tfscan.Options{})
	if err != nil {
		return nil, err
	}
	pe, err := policy.New(context.Background(), policy.Options{})
	if err != nil {
		return nil, err
	}
	return &scanners{kube: kl, trivy: ts, opa: pe}, nil
})

// scan counts findings per tool-qualified id.
func (s *scanners) scan(t *testing.T, fixture, path, content string) map[string]int {
	t.Helper()
	files := []verify.File{{Path: path, Content: []byte(content)}}
	vs := []verify.Verifier{s.kube, policy.Kubernetes{Engine: s.opa}}
	if fixture == FixtureTerraform {
		vs = []verify.Verifier{s.trivy, policy.Terraform{Engine: s.opa}}
	}
	out := map[string]int{}
	for _, v := range vs {
		fs, err := v.Verify(context.Background(), files)
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
// mutation: each scanner id a mutation declares must be reported more often
// after the mutation than before. That is what makes exception rows false
// positives for a model that copies the scanners.
func TestMutationScannerIDsConfirmed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs kube-linter and trivy on every mutation")
	}
	s, err := testScanners()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range Embedded() {
		g := p.gen
		if g == nil {
			continue
		}
		t.Run(p.ID(), func(t *testing.T) {
			a := g.assignment(0)
			excepted := map[string]bool{}
			for _, b := range g.Bases {
				path, text := a.render(b.Path), a.render(b.content)
				before := s.scan(t, p.fixtureType, path, text)
				for _, m := range g.Mutations {
					if !slices.Contains(m.Bases, b.Name) {
						continue
					}
					mt, err := applyEdits(text, m, a)
					if err != nil {
						t.Fatal(err)
					}
					after := s.scan(t, p.fixtureType, path, mt)
					var added []string
					for id, n := range after {
						if n > before[id] {
							added = append(added, id)
						}
					}
					sort.Strings(added)
					for _, id := range m.ScannerIDs {
						if !slices.Contains(added, id) {
							t.Errorf("%s/%s: declares scanner id %s, but the scanners report %v more after it", b.Name, m.Name, id, added)
						}
					}
					for _, id := range added {
						if !slices.Contains(m.ScannerIDs, id) {
							t.Errorf("%s/%s: the scanners also report %s after it; add it to scanner_ids", b.Name, m.Name, id)
						}
					}
					if m.isException() && len(m.ScannerIDs) == 0 {
						t.Errorf("%s/%s: an exception mutation must trigger a scanner finding (scanner_ids)", b.Name, m.Name)
					}
					for _, c := range m.Exercises {
						for _, id := range m.ScannerIDs {
							excepted[c+" "+id] = true
						}
					}
				}
			}
			for _, c := range p.Clauses() {
				if c.Type != Exception {
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
