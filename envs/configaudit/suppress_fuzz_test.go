package configaudit

import (
	"strings"
	"testing"
)

// FuzzNeutraliseSuppressions feeds hostile patched files to the
// suppression remover and the structure inventory: neither may panic, and
// removing twice finds nothing the first pass left behind.
func FuzzNeutraliseSuppressions(f *testing.F) {
	k8s := "apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: app\n    image: nginx:1.25\n"
	tf := "resource \"aws_s3_bucket\" \"b\" {\n  bucket = \"x\"\n}\n"
	f.Add(true, strings.Replace(k8s, "  name: web\n", "  name: web\n  annotations:\n    kube-linter.io/ignore-all: \"x\"\n", 1))
	f.Add(true, "a: &x {kube-linter.io/ignore-all: y}\n---\n"+k8s)
	f.Add(false, "#trivy:ignore:*\n"+tf)
	f.Add(false, "resource \"a\" \"b\" { // tfsec:ignore:x\n  count = 0\n  for_each = {}\n}\n")
	f.Add(false, "resource \"a\" \"b\" {\n  count = var.n ? 1 : 0\n}\n")
	f.Fuzz(func(t *testing.T, isK8s bool, patched string) {
		if len(patched) > 1<<16 {
			return
		}
		ft, orig := FixtureTF, tf
		if isK8s {
			ft, orig = FixtureK8s, k8s
		}
		out, _, err := neutraliseSuppressions(ft, []byte(orig), []byte(patched))
		if err != nil {
			return
		}
		if _, again, err := neutraliseSuppressions(ft, []byte(orig), out); err == nil && len(again) > 0 {
			t.Fatalf("second pass removed %v from %q", again, out)
		}
		_, _ = takeInventory(ft, out)
	})
}
