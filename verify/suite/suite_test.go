package suite

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svbench/svbench/verify"
)

var shared struct {
	once sync.Once
	s    *Suite
	err  error
}

func testSuite(t testing.TB) *Suite {
	t.Helper()
	shared.once.Do(func() { shared.s, shared.err = New(context.Background(), Options{}) })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.s
}

func load(t testing.TB, names ...string) []verify.File {
	t.Helper()
	var out []verify.File
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, verify.File{Path: n, Content: b})
	}
	return out
}

func tools(fs []verify.Finding) []string {
	seen := map[string]bool{}
	var out []string
	for _, f := range fs {
		if !seen[f.Tool] {
			seen[f.Tool] = true
			out = append(out, f.Tool)
		}
	}
	slices.Sort(out)
	return out
}

func TestDispatch(t *testing.T) {
	s := testSuite(t)
	tests := []struct {
		tool  string
		files []string
		want  []string
	}{
		{ToolAll, []string{"pod.yaml", "main.tf"}, []string{"kube-linter", "opa", "trivy"}},
		{ToolKubeLinter, []string{"pod.yaml", "main.tf"}, []string{"kube-linter"}},
		{ToolTrivy, []string{"pod.yaml", "main.tf"}, []string{"trivy"}},
		{ToolOPA, []string{"pod.yaml"}, []string{"opa"}},
		{ToolTrivy, []string{"pod.yaml"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			got, err := s.Verify(context.Background(), tt.tool, load(t, tt.files...))
			if err != nil {
				t.Fatal(err)
			}
			if g := tools(got); len(g) != len(tt.want) || (len(g) > 0 && g[0] != tt.want[0]) {
				t.Errorf("tools %v, want %v", g, tt.want)
			}
		})
	}
	if _, err := s.Verify(context.Background(), "semgrep", nil); err == nil {
		t.Error("unknown tool accepted")
	}
	v := s.Versions()
	if v["kube-linter"] != "kube-linter v0.8.3" || v["trivy"] != "trivy v0.70.0" || v["opa"] == "" {
		t.Errorf("versions %v", v)
	}
}

// TestConcurrentSuite runs all verifiers from many goroutines; run it with
// -race.
func TestConcurrentSuite(t *testing.T) {
	s := testSuite(t)
	files := load(t, "pod.yaml", "main.tf")
	want, err := s.Verify(context.Background(), ToolAll, files)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 6; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 3; j++ {
				got, err := s.Verify(context.Background(), ToolAll, files)
				if err != nil || len(got) != len(want) {
					t.Errorf("%d findings (want %d), %v", len(got), len(want), err)
					return
				}
				for k := range got {
					if got[k] != want[k] {
						t.Errorf("finding %d differs: %+v vs %+v", k, got[k], want[k])
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func percentiles(b *testing.B, d []time.Duration) {
	if len(d) == 0 {
		return
	}
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	b.ReportMetric(float64(d[len(d)/2].Microseconds()), "p50-µs")
	b.ReportMetric(float64(d[(len(d)*99)/100].Microseconds()), "p99-µs")
}

// BenchmarkVerifyManifest measures one manifest through YAML guard, parse,
// kube-linter and the OPA policies in process, against the alternative the
// reference used: one kube-linter CLI process per file (built here from the
// module cache). The "cli" sub-benchmark reports the ratio cli/in-process.
func BenchmarkVerifyManifest(b *testing.B) {
	s := testSuite(b)
	files := load(b, "pod.yaml")
	var inproc float64
	b.Run("in-process", func(b *testing.B) {
		ctx := context.Background()
		d := make([]time.Duration, 0, b.N)
		b.ReportAllocs()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			k, err := s.KubeLinter().Verify(ctx, files)
			if err != nil {
				b.Fatal(err)
			}
			o, err := s.Policy().VerifyKubernetes(ctx, files)
			if err != nil {
				b.Fatal(err)
			}
			d = append(d, time.Since(t0))
			if len(k) == 0 || len(o) == 0 {
				b.Fatal("no findings")
			}
		}
		b.StopTimer()
		percentiles(b, d)
		inproc = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("kube-linter-cli", func(b *testing.B) {
		dir := b.TempDir()
		bin := filepath.Join(dir, "kube-linter")
		// Built inside kube-linter's own module directory so its go.mod and
		// go.sum apply: svbench's go.sum lacks the CLI-only dependencies.
		modDir, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "golang.stackrox.io/kube-linter").Output()
		if err != nil {
			b.Skipf("cannot locate kube-linter in the module cache: %v", err)
		}
		build := exec.Command("go", "build", "-o", bin, "./cmd/kube-linter")
		build.Dir = strings.TrimSpace(string(modDir))
		build.Env = append(os.Environ(), "GOFLAGS=-mod=mod")
		if out, err := build.CombinedOutput(); err != nil {
			b.Skipf("cannot build the kube-linter CLI from the module cache: %v\n%s", err, out)
		}
		manifest := filepath.Join(dir, "pod.yaml")
		if err := os.WriteFile(manifest, files[0].Content, 0o644); err != nil {
			b.Fatal(err)
		}
		d := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			t0 := time.Now()
			out, err := exec.Command(bin, "lint", "--format", "json", manifest).Output()
			if len(out) == 0 {
				b.Fatalf("kube-linter produced no output: %v", err)
			}
			d = append(d, time.Since(t0))
		}
		b.StopTimer()
		percentiles(b, d)
		if inproc > 0 {
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/inproc, "x-slower-than-in-process")
		}
	})
}
