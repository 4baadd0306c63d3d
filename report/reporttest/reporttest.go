// Package reporttest holds test helpers for report builders: golden-file
// checks that a report's outputs stay byte-identical, and validation of a
// reference-shaped summary against the reference's JSON Schema.
package reporttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/svbench/svbench/base/sharedtest"
	"github.com/svbench/svbench/report"
)

// CheckGolden writes r with report.WriteDir and compares every file with
// the one of the same name in dir: same set of files, same bytes. With
// update it rewrites dir instead (run the test with its -update flag and
// review the diff).
func CheckGolden(t testing.TB, r *report.Report, dir string, update bool) {
	t.Helper()
	out := t.TempDir()
	if err := report.WriteDir(out, r); err != nil {
		t.Fatal(err)
	}
	got := readDir(t, out)
	if update {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range got {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	want := readDir(t, dir)
	for _, name := range sortedNames(want, got) {
		w, inWant := want[name]
		g, inGot := got[name]
		switch {
		case !inGot:
			t.Errorf("%s: in the golden files but no longer written", name)
		case !inWant:
			t.Errorf("%s: written but not in the golden files (rerun with -update if intended)", name)
		case !bytes.Equal(w, g):
			t.Errorf("%s differs from %s (rerun with -update if intended):\n%s", name, filepath.Join(dir, name), firstDiff(w, g))
		}
	}
}

func readDir(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("golden files: %v (create them with -update)", err)
	}
	files := map[string][]byte{}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

func sortedNames(maps ...map[string][]byte) []string {
	var names []string
	for _, m := range maps {
		for k := range m {
			if !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
	}
	slices.Sort(names)
	return names
}

// firstDiff shows the first differing line of two texts.
func firstDiff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := range max(len(wl), len(gl)) {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return fmt.Sprintf("line %d:\n  want %q\n  got  %q", i+1, w, g)
		}
	}
	return "(same lines, different bytes)"
}

// ValidateReferenceSummary checks a reference-shaped summary (any value
// that marshals to the reference's summary.json) against the reference's
// schema, ../shared/reference-data/reference-bench/schemas/summary.schema.json,
// with formats (date-time) asserted. The schema is only in the development
// checkout: without it the test is skipped with a message saying so.
func ValidateReferenceSummary(t testing.TB, summary any) {
	t.Helper()
	if err := validate(compileSchema(t), summary); err != nil {
		t.Error(err)
	}
}

func validate(sch *jsonschema.Schema, summary any) error {
	b, err := json.Marshal(summary)
	if err != nil {
		return fmt.Errorf("marshal summary: %w", err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("summary is not JSON: %w", err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("summary does not match the reference schema: %w\n%s", err, b)
	}
	return nil
}

func compileSchema(t testing.TB) *jsonschema.Schema {
	t.Helper()
	path := filepath.Join(sharedtest.Dir(t), "reference-data", "reference-bench", "schemas", "summary.schema.json")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("reference summary schema not found (%v): it is only in the development checkout's ../shared", err)
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	sch, err := c.Compile(path)
	if err != nil {
		t.Fatalf("compile %s: %v", path, err)
	}
	return sch
}
