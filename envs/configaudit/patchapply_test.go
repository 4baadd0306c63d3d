package configaudit

import "testing"

// TestTrimmedTrailingContext: a diff whose last hunk lost its trailing
// blank context lines (a single space each, dropped by trimming) applies;
// one short by a non-blank line or by unequal counts still fails.
func TestTrimmedTrailingContext(t *testing.T) {
	fx := &fixture{Path: "main.tf", Type: FixtureTF, Content: []byte("a\nb\nc\n\n\nd\n")}
	cases := []struct {
		name, patch string
		ok          bool
	}{
		{"intact", "--- a/main.tf\n+++ b/main.tf\n@@ -2,4 +2,5 @@\n b\n c\n+x\n \n \n", true},
		{"two blank context lines trimmed", "--- a/main.tf\n+++ b/main.tf\n@@ -2,4 +2,5 @@\n b\n c\n+x", true},
		{"short by a non-blank line", "--- a/main.tf\n+++ b/main.tf\n@@ -4,3 +4,4 @@\n+x\n \n", false},
		{"unequal deficits", "--- a/main.tf\n+++ b/main.tf\n@@ -2,4 +2,7 @@\n b\n c\n+x", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := applyFixPatch(fx, c.patch)
			if (err == nil) != c.ok {
				t.Fatalf("err = %v, want ok=%v (out %q)", err, c.ok, out)
			}
			if c.ok && string(out) != "a\nb\nc\nx\n\n\nd\n" {
				t.Errorf("patched = %q", out)
			}
		})
	}
}
