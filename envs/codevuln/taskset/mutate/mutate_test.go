package mutate

import (
	"context"
	"go/format"
	"maps"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/svbench/svbench/envs/codevuln/taskset"
	"github.com/svbench/svbench/envs/codevuln/taskset/internal/trustedrun"
)

// TestGeneratedContract proves the task contract on one generated task per
// mutation kind: the mutated code passes the behavioural tests and fails the
// security tests, the clean template passes both.
func TestGeneratedContract(t *testing.T) {
	tasks, err := Generate(20260523, len(Mutations))
	if err != nil {
		t.Fatal(err)
	}
	runner := trustedrun.New(runtime.NumCPU())
	for _, task := range tasks {
		t.Run(task.ID, func(t *testing.T) {
			t.Parallel()
			if msg := trustedrun.Toolchain(task.Language); msg != "" {
				t.Skip(msg)
			}
			if err := runner.Contract(context.Background(), task); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestGeneratedNearMissContract is mutation testing of the templates'
// hidden tests, on one generated task per kind: every near miss (a
// plausible partial fix that keeps the weakness) passes the behavioural
// tests and fails the security tests.
func TestGeneratedNearMissContract(t *testing.T) {
	tasks, err := Generate(20260523, len(Mutations))
	if err != nil {
		t.Fatal(err)
	}
	runner := trustedrun.New(runtime.NumCPU())
	for _, task := range tasks {
		if len(task.NearMiss) == 0 {
			continue
		}
		for _, variant := range slices.Sorted(maps.Keys(task.NearMiss)) {
			t.Run(task.ID+"/"+variant, func(t *testing.T) {
				t.Parallel()
				if msg := trustedrun.Toolchain(task.Language); msg != "" {
					t.Skip(msg)
				}
				src := task.NearMissed(variant)
				vis, err := runner.Run(context.Background(), task.Language, src, task.Visible)
				switch {
				case err != nil:
					t.Errorf("visible run: %v", err)
				case !vis.Passed:
					t.Errorf("fails the behavioural tests, so it is no near miss:\n%s", vis.Output)
				}
				hid, err := runner.Run(context.Background(), task.Language, src, task.Hidden)
				switch {
				case err != nil:
					t.Errorf("hidden run: %v", err)
				case hid.Passed:
					t.Errorf("keeps the weakness yet passes every security test:\n%s", hid.Output)
				}
			})
		}
	}
}

func TestGenerateCoverageAndDeterminism(t *testing.T) {
	a, err := Generate(1, 3*len(Mutations))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Generate(1, 3*len(Mutations))
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed gave different tasks")
	}
	c, _ := Generate(2, 3*len(Mutations))
	if reflect.DeepEqual(a, c) {
		t.Fatal("different seeds gave identical tasks")
	}
	cwes := map[string]bool{}
	ids := map[string]bool{}
	for _, task := range a {
		cwes[task.CWE] = true
		if ids[task.ID] {
			t.Errorf("duplicate id %s", task.ID)
		}
		ids[task.ID] = true
		if string(task.Src[task.Files[0]]) == string(task.Fix[task.Files[0]]) {
			t.Errorf("%s: vulnerable and fixed code are identical", task.ID)
		}
		if task.Language == taskset.Go {
			bodies := map[string][]byte{"src": task.Src[task.Files[0]], "fix": task.Fix[task.Files[0]], "visible": task.Visible["behaviour_test.go"], "hidden": task.Hidden["security_test.go"]}
			for v, files := range task.NearMiss {
				bodies["nearmiss/"+v] = files[task.Files[0]]
			}
			for name, body := range bodies {
				if formatted, err := format.Source(body); err != nil || string(formatted) != string(body) {
					t.Errorf("%s: generated %s Go code is not gofmt-formatted (%v)", task.ID, name, err)
				}
			}
		}
		if !strings.HasPrefix(task.Source, "mutate:") {
			t.Errorf("%s: source %q", task.ID, task.Source)
		}
	}
	want := map[string]bool{}
	for _, m := range Mutations {
		want[m.CWE] = true
	}
	if !reflect.DeepEqual(cwes, want) {
		t.Errorf("CWEs covered %v, want %v", cwes, want)
	}
	if _, err := Generate(1, -1); err == nil {
		t.Error("negative n accepted")
	}
	if got, err := Generate(1, 0); err != nil || len(got) != 0 {
		t.Errorf("n=0: %v %v", got, err)
	}
}

func TestWriteDirRoundTrip(t *testing.T) {
	tasks, err := Generate(9, len(Mutations))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := WriteDir(dir, tasks); err != nil {
		t.Fatal(err)
	}
	back, err := taskset.Load(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(tasks) {
		t.Fatalf("loaded %d of %d tasks", len(back), len(tasks))
	}
	if err := WriteDir(dir, tasks[:1]); err == nil {
		t.Error("WriteDir overwrote an existing task")
	}
}

func TestApply(t *testing.T) {
	src := "a = 1\nb = 2\n"
	cases := []struct {
		spec, want, err string
	}{
		{"<<<\nb = 2\n===\nb = 3\n>>>\n", "a = 1\nb = 3\n", ""},
		{"<<<\na = 1\nb = 2\n===\nc\n>>>\n", "c\n", ""},
		{"<<<\nz\n===\ny\n>>>\n", "", "occurs 0 times"},
		{"<<<\n= \n===\ny\n>>>\n", "", "occurs 2 times"},
		{"<<<\na = 1\n", "", "without ==="},
		{"<<<\na = 1\n===\nx\n", "", "without >>>"},
		{"junk\n", "", "want <<<"},
		{"", "", "no blocks"},
		{"<<<\na = 1\n===\na = 1\n>>>\n", "", "unchanged"},
	}
	for _, c := range cases {
		got, err := Apply(src, c.spec)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Apply(%q) error = %v, want %q", c.spec, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Apply(%q) = %q, %v; want %q", c.spec, got, err, c.want)
		}
	}
}
