package kubelint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/kubelint"
	"github.com/svbench/svbench/verify/suite"
)

// directoryContext is what `svbench verify --context dir` lints at once for
// a directory of manifests: copies of the test manifests, with a
// ClusterRole and a binding beside every fourth workload so that E2's RBAC
// checks have bindings to resolve.
func directoryContext(b testing.TB, copies int) []verify.File {
	b.Helper()
	var base []verify.File
	for _, n := range []string{"deployment.yaml", "insecure-pod.yaml", "multi.yaml", "service.yaml"} {
		c, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			b.Fatal(err)
		}
		base = append(base, verify.File{Path: n, Content: c})
	}
	var out []verify.File
	for i := range copies {
		for _, f := range base {
			out = append(out, verify.File{Path: fmt.Sprintf("%d/%s", i, f.Path), Content: f.Content})
		}
		if i%4 == 0 {
			out = append(out, verify.File{Path: fmt.Sprintf("%d/rbac.yaml", i), Content: fmt.Appendf(nil, `apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: reader-%d
rules:
- apiGroups: [""]
  resources: ["configmaps"]
  verbs: ["get", "list"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: reader-%d
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: reader-%d}
subjects: [{kind: Group, name: readers, apiGroup: rbac.authorization.k8s.io}]
`, i, i, i)})
		}
	}
	return out
}

// BenchmarkCheckSets lints one directory-sized context (about 500 objects)
// with kube-linter's default checks, which `svbench verify` runs unless
// told otherwise, and with E2's set (the defaults plus
// suite.ScoringKubeChecks, `--checks e2`). kube-linter's RBAC checks scan
// every object of the context for each binding, so their cost grows with
// the context; issue #41 measured the in-process verify of 2,390 real
// manifests at 2.50 s with them on by default against 1.90 s without. The
// "e2" sub-benchmark reports its time over the default set's
// (x-default-time); the comparison with the kube-linter CLI is
// verify/suite's BenchmarkVerifyManifest.
func BenchmarkCheckSets(b *testing.B) {
	files := directoryContext(b, 100)
	ctx := context.Background()
	var defaultNs float64
	for _, set := range []struct {
		name    string
		include []string
	}{{"default", nil}, {"e2", slices.Clone(suite.ScoringKubeChecks)}} {
		b.Run(set.name, func(b *testing.B) {
			l, err := kubelint.New(kubelint.Options{Include: set.include})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if _, err := l.Verify(ctx, files); err != nil {
					b.Fatal(err)
				}
			}
			ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			b.ReportMetric(float64(len(files))/(ns/1e9), "files/s")
			if set.include == nil {
				defaultNs = ns
			} else if defaultNs > 0 {
				b.ReportMetric(ns/defaultNs, "x-default-time")
			}
		})
	}
}

// TestCheckSets: the zero Options are kube-linter's own default checks,
// without E2's RBAC checks; E2's set is exactly the defaults plus them.
func TestCheckSets(t *testing.T) {
	def, err := kubelint.New(kubelint.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e2, err := kubelint.New(kubelint.Options{Include: slices.Clone(suite.ScoringKubeChecks)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range suite.ScoringKubeChecks {
		if slices.Contains(def.Checks(), c) {
			t.Errorf("%s is one of kube-linter's defaults: E2's set adds nothing there", c)
		}
	}
	want := append(def.Checks(), suite.ScoringKubeChecks...)
	slices.Sort(want)
	got := e2.Checks()
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Errorf("E2's checks %v, want the defaults plus %v", got, suite.ScoringKubeChecks)
	}
}
