package patch

import (
	"errors"
	"strings"
	"testing"

	"github.com/svbench/svbench/verify/nesting"
)

const deploy = `apiVersion: v1
kind: Pod
metadata:
  name: web
spec:
  containers:
  - name: web
    image: nginx:latest
    securityContext:
      privileged: true
`

const fixImage = `--- a/deploy.yaml
+++ b/deploy.yaml
@@ -6,5 +6,5 @@
   containers:
   - name: web
-    image: nginx:latest
+    image: nginx:1.27.0
     securityContext:
-      privileged: true
+      privileged: false
`

func TestApplyUnified(t *testing.T) {
	want := strings.Replace(strings.Replace(deploy, "nginx:latest", "nginx:1.27.0", 1), "privileged: true", "privileged: false", 1)
	tests := []struct {
		name, target, diff string
		limits             Limits
		want               string // "" means a rejection is expected
		reason             string // substring of the rejection reason
	}{
		{name: "a/ b/ prefixes", target: "deploy.yaml", diff: fixImage, want: want},
		{name: "bare base name for nested target", target: "k8s/prod/deploy.yaml",
			diff: strings.ReplaceAll(strings.ReplaceAll(fixImage, "a/deploy.yaml", "deploy.yaml"), "b/deploy.yaml", "deploy.yaml"), want: want},
		{name: "git header", target: "deploy.yaml", diff: "diff --git a/deploy.yaml b/deploy.yaml\nindex 111..222 100644\n" + fixImage, want: want},
		{name: "offset hunk accepted", target: "deploy.yaml", diff: strings.Replace(fixImage, "@@ -6,5 +6,5 @@", "@@ -2,5 +2,5 @@", 1), want: want},
		{name: "offset beyond end accepted", target: "deploy.yaml", diff: strings.Replace(fixImage, "@@ -6,5 +6,5 @@", "@@ -40,5 +40,5 @@", 1), want: want},
		{name: "context mismatch", target: "deploy.yaml", diff: strings.Replace(fixImage, "   - name: web", "   - name: api", 1), reason: "does not apply"},
		{name: "whitespace is significant", target: "deploy.yaml", diff: strings.Replace(fixImage, "-    image: nginx:latest", "-  image: nginx:latest", 1), reason: "does not apply"},
		{name: "parent directory", target: "deploy.yaml", diff: strings.ReplaceAll(fixImage, "a/deploy.yaml", "a/../../etc/passwd"), reason: "leaves the working directory"},
		{name: "absolute path", target: "deploy.yaml", diff: strings.ReplaceAll(fixImage, "b/deploy.yaml", "/etc/passwd"), reason: "absolute path"},
		{name: "other file", target: "deploy.yaml", diff: strings.ReplaceAll(strings.ReplaceAll(fixImage, "a/deploy.yaml", "a/service.yaml"), "b/deploy.yaml", "b/service.yaml"), reason: "not the target file"},
		{name: "other file on the old side only", target: "deploy.yaml", diff: strings.ReplaceAll(fixImage, "a/deploy.yaml", "a/secret.yaml"), reason: "not the target file"},
		{name: "binary", target: "deploy.yaml", diff: "diff --git a/deploy.yaml b/deploy.yaml\nindex 1..2 100644\nGIT binary patch\nliteral 5\nMcmZ?wbaG>00\n\n", reason: "binary"},
		{name: "binary files differ", target: "deploy.yaml", diff: "diff --git a/deploy.yaml b/deploy.yaml\nindex 1..2 100644\nBinary files a/deploy.yaml and b/deploy.yaml differ\n", reason: "binary"},
		{name: "oversized", target: "deploy.yaml", diff: fixImage, limits: Limits{MaxBytes: 100}, reason: "byte limit"},
		{name: "too many hunks", target: "deploy.yaml", diff: fixImage, limits: Limits{MaxHunks: 0}, want: want},
		{name: "multi-file", target: "deploy.yaml", diff: fixImage + strings.ReplaceAll(fixImage, "deploy.yaml", "deploy.yaml"), reason: "2 files"},
		{name: "delete file", target: "deploy.yaml", diff: "--- a/deploy.yaml\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-apiVersion: v1\n-kind: Pod\n", reason: "deletes"},
		{name: "new file", target: "deploy.yaml", diff: "--- /dev/null\n+++ b/deploy.yaml\n@@ -0,0 +1 @@\n+kind: Pod\n", reason: "creates a new file"},
		{name: "rename", target: "deploy.yaml", diff: "diff --git a/deploy.yaml b/deploy.yaml\nsimilarity index 100%\nrename from deploy.yaml\nrename to x.yaml\n", reason: "renames"},
		{name: "no diff", target: "deploy.yaml", diff: "I fixed it, trust me", reason: "no file diff"},
		{name: "empty", target: "deploy.yaml", diff: "  \n", reason: "empty diff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ApplyUnified(tt.target, []byte(deploy), tt.diff, tt.limits)
			if tt.want != "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if string(got) != tt.want {
					t.Fatalf("got\n%s\nwant\n%s", got, tt.want)
				}
				return
			}
			if !IsReject(err) || !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("err = %v, want a rejection mentioning %q", err, tt.reason)
			}
		})
	}
}

func TestHunkLimit(t *testing.T) {
	diff := "--- a/f.yaml\n+++ b/f.yaml\n@@ -1 +1 @@\n-a: 1\n+a: 2\n@@ -3 +3 @@\n-c: 3\n+c: 4\n"
	orig := "a: 1\nb: 2\nc: 3\n"
	if _, err := ApplyUnified("f.yaml", []byte(orig), diff, Limits{MaxHunks: 1}); !IsReject(err) || !strings.Contains(err.Error(), "2 hunks") {
		t.Fatalf("err = %v, want hunk-limit rejection", err)
	}
	got, err := ApplyUnified("f.yaml", []byte(orig), diff, Limits{})
	if err != nil || string(got) != "a: 2\nb: 2\nc: 4\n" {
		t.Fatalf("got %q, %v", got, err)
	}
}

func TestOffsetNeverMovesBeforePreviousHunk(t *testing.T) {
	// The second hunk's lines exist only before the first hunk's: it must
	// not be applied there.
	orig := "x: 1\ny: 2\nx: 1\n"
	diff := "--- a/f.yaml\n+++ b/f.yaml\n@@ -3 +3 @@\n-x: 1\n+x: 9\n@@ -3 +3 @@\n-y: 2\n+y: 8\n"
	if _, err := ApplyUnified("f.yaml", []byte(orig), diff, Limits{}); !IsReject(err) {
		t.Fatalf("err = %v, want rejection", err)
	}
}

func TestApplyJSONPatch(t *testing.T) {
	multi := deploy + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  type: LoadBalancer\n"
	tests := []struct {
		name, original, patch string
		contains              []string
		absent                []string
		reason                string
	}{
		{name: "replace in single document", original: deploy,
			patch:    `[{"op":"replace","path":"/spec/containers/0/image","value":"nginx:1.27.0"},{"op":"add","path":"/spec/containers/0/securityContext/runAsNonRoot","value":true}]`,
			contains: []string{"image: nginx:1.27.0", "runAsNonRoot: true", "privileged: true"}},
		{name: "multi-document addressing", original: multi,
			patch:    `[{"op":"replace","path":"/1/spec/type","value":"ClusterIP"}]`,
			contains: []string{"type: ClusterIP", "---\n", "image: nginx:latest"}, absent: []string{"LoadBalancer"}},
		{name: "multi-document without index", original: multi,
			patch: `[{"op":"replace","path":"/spec/type","value":"ClusterIP"}]`, reason: "document index"},
		{name: "test op fails", original: deploy,
			patch: `[{"op":"test","path":"/kind","value":"Deployment"}]`, reason: "does not apply"},
		{name: "missing path", original: deploy,
			patch: `[{"op":"remove","path":"/spec/volumes"}]`, reason: "does not apply"},
		{name: "not an array", original: deploy, patch: `[{"op":"remove",]`, reason: "not a JSON array"},
		{name: "unknown op", original: deploy, patch: `[{"op":"explode","path":"/kind"}]`, reason: "explode"},
		{name: "negative index", original: deploy, patch: `[{"op":"remove","path":"/spec/containers/-1"}]`, reason: "does not apply"},
		{name: "json target", original: `{"a": {"b": 1}}`, patch: `[{"op":"replace","path":"/a/b","value":2}]`, contains: []string{`"b": 2`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, kind, err := Apply("deploy.yaml", []byte(tt.original), tt.patch, Limits{})
			if kind != KindJSONPatch {
				t.Fatalf("kind = %s", kind)
			}
			if tt.reason != "" {
				if !IsReject(err) || !strings.Contains(err.Error(), tt.reason) {
					t.Fatalf("err = %v, want rejection mentioning %q", err, tt.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range tt.contains {
				if !strings.Contains(string(got), c) {
					t.Errorf("result lacks %q:\n%s", c, got)
				}
			}
			for _, a := range tt.absent {
				if strings.Contains(string(got), a) {
					t.Errorf("result still has %q:\n%s", a, got)
				}
			}
		})
	}
}

func TestJSONPatchCopyAmplification(t *testing.T) {
	orig := "a: " + strings.Repeat("x", 1000) + "\n"
	var ops []string
	for i := 0; i < 60; i++ {
		ops = append(ops, `{"op":"copy","from":"/a","path":"/b`+strings.Repeat("c", i)+`"}`)
	}
	_, err := ApplyJSONPatch([]byte(orig), "["+strings.Join(ops, ",")+"]", Limits{MaxBytes: 20000})
	if !IsReject(err) {
		t.Fatalf("err = %v, want rejection of copy growth", err)
	}
}

func TestApplyDispatch(t *testing.T) {
	if _, kind, err := Apply("deploy.yaml", []byte(deploy), fixImage, Limits{}); err != nil || kind != KindUnifiedDiff {
		t.Fatalf("kind %s err %v", kind, err)
	}
}

func FuzzApplyUnified(f *testing.F) {
	f.Add("deploy.yaml", deploy, fixImage)
	f.Add("deploy.yaml", deploy, strings.Replace(fixImage, "@@ -6,5 +6,5 @@", "@@ -1,5 +1,5 @@", 1))
	f.Add("f.yaml", "a: 1\n", "--- a/f.yaml\n+++ b/f.yaml\n@@ -1 +1 @@\n-a: 1\n\\ No newline at end of file\n+a: 2\n")
	f.Add("x", "", "diff --git a/x b/x\nnew file mode 100644\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+hi\n")
	f.Fuzz(func(t *testing.T, target, original, diff string) {
		out, err := ApplyUnified(target, []byte(original), diff, Limits{MaxBytes: 1 << 16})
		if err != nil {
			if !IsReject(err) {
				t.Fatalf("non-reject error %T: %v", err, err)
			}
			return
		}
		if len(out) > len(original)+len(diff) {
			t.Fatalf("output %d bytes from %d+%d", len(out), len(original), len(diff))
		}
	})
}

func TestApplyUnifiedLineEndings(t *testing.T) {
	lf := "a: 1\nb: 2\nc: 3\n"
	crlf := strings.ReplaceAll(lf, "\n", "\r\n")
	diff := "--- a/f.yaml\n+++ b/f.yaml\n@@ -1,3 +1,3 @@\n a: 1\n-b: 2\n+b: 20\n c: 3\n"
	crlfDiff := strings.ReplaceAll(diff, "\n", "\r\n")
	tests := []struct {
		name, original, diff, want string
	}{
		{"LF diff, LF file", lf, diff, "a: 1\nb: 20\nc: 3\n"},
		{"CRLF diff, LF file", lf, crlfDiff, "a: 1\nb: 20\nc: 3\n"},
		{"LF diff, CRLF file", crlf, diff, "a: 1\r\nb: 20\r\nc: 3\r\n"},
		{"CRLF diff, CRLF file", crlf, crlfDiff, "a: 1\r\nb: 20\r\nc: 3\r\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := ApplyUnified("f.yaml", []byte(tc.original), tc.diff, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tc.want {
				t.Fatalf("got %q, want %q", out, tc.want)
			}
		})
	}
}

// TestDeepJSONPatchRefused: a JSON Patch whose value nests 80,000 levels
// (or one just over the bound) is refused before it is decoded, as a
// *RejectError that names the bound and matches nesting.ErrTooDeep; one
// at the bound applies.
func TestDeepJSONPatchRefused(t *testing.T) {
	value := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	op := func(v string) string { return `[{"op": "add", "path": "/metadata/x", "value": ` + v + `}]` }
	for name, p := range map[string]string{
		"80,000 levels":         op(value(80_000)),
		"one level over":        op(value(nesting.DefaultMax - 1)),
		"a deep string of JSON": op(`"` + value(80_000) + `"`),
	} {
		_, kind, err := Apply("deploy.yaml", []byte(deploy), p, Limits{})
		if kind != KindJSONPatch || !IsReject(err) || !errors.Is(err, nesting.ErrTooDeep) || !strings.Contains(err.Error(), "nested deeper than 256 levels") {
			t.Errorf("%s: kind %s, err %v; want a rejection naming the nesting bound", name, kind, err)
		}
	}
	if _, _, err := Apply("deploy.yaml", []byte(deploy), op(value(nesting.DefaultMax-2)), Limits{}); err != nil {
		t.Errorf("a patch nested to the bound: %v", err)
	}
}

// TestCanonical: a file as a JSON Patch that changes nothing would leave it,
// so a patched file differs from it only where the operations changed it,
// however the original was written (comments, flow lists, indentation,
// several documents).
func TestCanonical(t *testing.T) {
	cases := []struct {
		name, file, patch string
		want              []string // the patched file's lines not in the canonical form
	}{
		{"single document",
			"# a comment\nkind: Pod\nmetadata: {name: p}\nspec:\n    containers:\n    - name: c\n      image: nginx\n      args: [\"a\", 'b']\n      securityContext: {privileged: true}\n",
			`[{"op": "replace", "path": "/spec/containers/0/securityContext/privileged", "value": false}]`,
			[]string{"      privileged: false"}},
		{"two documents",
			"kind: Service\nmetadata: {name: s}\n---\nkind: Pod\nspec:\n  hostPID: true\n",
			`[{"op": "remove", "path": "/1/spec/hostPID"}]`,
			[]string{"spec: {}"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base, err := Canonical([]byte(c.file), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			out, err := ApplyJSONPatch([]byte(c.file), c.patch, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			have := map[string]int{}
			for _, l := range strings.Split(string(base), "\n") {
				have[l]++
			}
			var added []string
			for _, l := range strings.Split(string(out), "\n") {
				if have[l] > 0 {
					have[l]--
				} else {
					added = append(added, l)
				}
			}
			if strings.Join(added, "|") != strings.Join(c.want, "|") {
				t.Errorf("patched lines not in the canonical form: %q, want %q\ncanonical:\n%s\npatched:\n%s", added, c.want, base, out)
			}
		})
	}
	if _, err := Canonical([]byte("a: [unclosed"), Limits{}); err == nil {
		t.Error("Canonical of unparsable YAML: no error")
	}
}
