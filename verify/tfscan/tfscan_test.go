package tfscan

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/svbench/svbench/verify"
)

var shared struct {
	once sync.Once
	s    *Scanner
	err  error
}

// scanner builds the (slow, ~1 s) scanner once for the package's tests.
func scanner(t testing.TB) *Scanner {
	t.Helper()
	shared.once.Do(func() { shared.s, shared.err = New(Options{}) })
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.s
}

func TestKnownFindings(t *testing.T) {
	s := scanner(t)
	insecure, err := os.ReadFile("testdata/insecure.tf")
	if err != nil {
		t.Fatal(err)
	}
	const hardened = `
resource "aws_security_group" "web" {
  name        = "web"
  description = "https from the office"
  ingress {
    description = "https"
    from_port   = 443
    to_port     = 443
    protocol    = "tcp"
    cidr_blocks = ["203.0.113.0/24"]
  }
}
`
	tests := []struct {
		name   string
		src    string
		want   map[string]string // rule id -> resource
		absent []string
	}{
		{"public S3 ACL and open SSH", string(insecure), map[string]string{
			"AVD-AWS-0092": "aws_s3_bucket.logs",     // public ACL
			"AVD-AWS-0107": "aws_security_group.ssh", // 0.0.0.0/0 ingress
			"AVD-AWS-0086": "aws_s3_bucket.logs",     // no public access block
		}, nil},
		{"restricted security group", hardened, nil, []string{"AVD-AWS-0107", "AVD-AWS-0124", "AVD-AWS-0099"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.Verify(context.Background(), []verify.File{{Path: "infra/main.tf", Content: []byte(tt.src)}})
			if err != nil {
				t.Fatal(err)
			}
			found := map[string]verify.Finding{}
			for _, f := range got {
				found[f.RuleID] = f
				if f.Tool != "trivy" || f.File != "infra/main.tf" || f.Line == 0 || f.Resource == "" || f.Message == "" {
					t.Errorf("incomplete finding %+v", f)
				}
			}
			for id, res := range tt.want {
				f, ok := found[id]
				if !ok {
					t.Errorf("missing %s", id)
					continue
				}
				if f.Resource != res || f.Severity != verify.SeverityHigh {
					t.Errorf("%s: resource %s severity %s, want %s high", id, f.Resource, f.Severity, res)
				}
			}
			for _, id := range tt.absent {
				if _, ok := found[id]; ok {
					t.Errorf("unexpected %s", id)
				}
			}
		})
	}
}

func TestModuleAcrossFiles(t *testing.T) {
	// The public access block in another file of the same module silences
	// the bucket's "no public access block" checks.
	s := scanner(t)
	files := []verify.File{
		{Path: "a/bucket.tf", Content: []byte(`resource "aws_s3_bucket" "b" { bucket = "b" }`)},
		{Path: "b/pab.tf", Content: []byte(`resource "aws_s3_bucket_public_access_block" "b" {
  bucket                  = aws_s3_bucket.b.id
  block_public_acls       = true
  block_public_policy     = true
  ignore_public_acls      = true
  restrict_public_buckets = true
}`)},
	}
	got, err := s.Verify(context.Background(), files)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got {
		if f.RuleID == "AVD-AWS-0086" || f.RuleID == "AVD-AWS-0094" {
			t.Errorf("public access block in a sibling file not seen: %+v", f)
		}
	}
}

func TestHostileInput(t *testing.T) {
	s := scanner(t)
	tests := []struct {
		name, path, src, errSub string
	}{
		{"invalid hcl", "m.tf", "resource \"aws_s3_bucket\" {\n  acl = \n", ""},
		{"binary junk", "m.tf", "\x00\xff\xfe{{{", "NUL"},
		{"deep nesting", "m.tf", "locals { x = " + strings.Repeat("[", 5000) + " }", "nested deeper"},
		// No brackets at all: HCL's parser recurses once per operator and
		// overflowed the stack on this before the nesting bound counted it.
		{"deep unary chain", "m.tf", "locals { x = " + strings.Repeat("!", 250_000) + "true }", "nested deeper than 256 levels"},
		{"closers hidden in strings", "m.tf", "locals { x = " + strings.Repeat(`["]",`, 40_000) + " }", "nested deeper than 256 levels"},
		{"too large", "m.tf", "# " + strings.Repeat("x", 2<<20), "limit"},
		{"not terraform", "notes.txt", "hello", ""},
		{"path traversal in name", "../../etc/main.tf", `resource "aws_s3_bucket" "b" { bucket = "b" }`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Verify(context.Background(), []verify.File{{Path: tt.path, Content: []byte(tt.src)}})
			if tt.errSub == "" {
				// trivy tolerates HCL errors (it skips the broken file);
				// what matters is no panic and no escape from the memory FS.
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.errSub) {
				t.Fatalf("err = %v, want mention of %q", err, tt.errSub)
			}
		})
	}
}

func TestConcurrentScans(t *testing.T) {
	s := scanner(t)
	src, _ := os.ReadFile("testdata/insecure.tf")
	want, err := s.Verify(context.Background(), []verify.File{{Path: "main.tf", Content: src}})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 3; j++ {
				got, err := s.Verify(context.Background(), []verify.File{{Path: "main.tf", Content: src}})
				if err != nil || len(got) != len(want) {
					t.Errorf("concurrent scan: %d findings (want %d), %v", len(got), len(want), err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkTfscan scans one Terraform file. "prepared" is how Verify
// scans; "trivy" runs trivy's own scanner on the same file in the same run,
// which builds and compiles a fresh query for every check on every scan:
// the ratio is what prepared queries save.
func BenchmarkTfscan(b *testing.B) {
	src, _ := os.ReadFile("testdata/insecure.tf")
	files := []verify.File{{Path: "main.tf", Content: src}}
	for _, mode := range []struct {
		name  string
		trivy bool
	}{{"prepared", false}, {"trivy", true}} {
		b.Run(mode.name, func(b *testing.B) {
			s, err := New(Options{TrivyScanner: mode.trivy})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := s.Verify(context.Background(), files); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "scans/s")
		})
	}
}
