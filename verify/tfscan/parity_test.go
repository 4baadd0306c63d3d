package tfscan

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/svbench/svbench/verify"
)

var (
	trivyOnce    sync.Once
	trivyScanner *Scanner
	trivyErr     error
)

// reference is trivy's own scanner, built once per test binary.
func reference(t *testing.T) *Scanner {
	t.Helper()
	trivyOnce.Do(func() { trivyScanner, trivyErr = New(Options{TrivyScanner: true}) })
	if trivyErr != nil {
		t.Fatal(trivyErr)
	}
	return trivyScanner
}

// parityCases are the inputs the prepared path must judge exactly as
// trivy's scanner does: the E2 corpus, and edits that exercise every part
// of the pipeline svbench re-implements (applicability by provider and
// service, cause parsing with parents, count/for_each expansion, the
// inline ignore syntax with workspaces, attribute parameters and expiry,
// several files in one module, JSON configuration and broken HCL).
func parityCases(t *testing.T) map[string][]verify.File {
	t.Helper()
	cases := map[string][]verify.File{}
	add := func(name string, files ...verify.File) { cases[name] = files }
	insecure, err := os.ReadFile("testdata/insecure.tf")
	if err != nil {
		t.Fatal(err)
	}
	add("insecure", verify.File{Path: "main.tf", Content: insecure})
	corpus, _ := filepath.Glob("../../envs/configaudit/corpus/tf/*.tf")
	if len(corpus) == 0 {
		t.Fatal("E2 Terraform corpus not found at ../../envs/configaudit/corpus/tf")
	}
	var all []verify.File
	for _, p := range corpus {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(p)
		add("corpus/"+name, verify.File{Path: name, Content: src})
		all = append(all, verify.File{Path: name, Content: src})
		// Every resource block removed in turn: checks that look across
		// resources (public access blocks, encryption configurations,
		// logging targets) change their verdicts.
		blocks := strings.Split(string(src), "\nresource ")
		for i := 1; i < len(blocks); i++ {
			kept := append(append([]string(nil), blocks[:i]...), blocks[i+1:]...)
			add(fmt.Sprintf("corpus/%s-without-%d", name, i), verify.File{Path: name, Content: []byte(strings.Join(kept, "\nresource "))})
		}
	}
	add("corpus/all-in-one-module", all...)

	bucket := `resource "aws_s3_bucket" "logs" {
  bucket = "svbench-logs"
  acl    = "public-read"
}
`
	for name, src := range map[string]string{
		"ignore-one":            "#trivy:ignore:AVD-AWS-0086\n" + bucket,
		"ignore-all":            "#trivy:ignore:*\n" + bucket,
		"tfsec-ignore":          "#tfsec:ignore:aws-s3-block-public-acls\n" + bucket,
		"ignore-ws-match":       "#trivy:ignore:*:ws:*\n" + bucket,
		"ignore-ws-other":       "#trivy:ignore:*:ws:prod\n" + bucket,
		"ignore-expired":        "#trivy:ignore:*:exp:2001-01-01\n" + bucket,
		"ignore-param-match":    "#trivy:ignore:*[bucket=svbench-logs]\n" + bucket,
		"ignore-param-mismatch": "#trivy:ignore:*[bucket=other]\n" + bucket,
		"ignore-param-bool":     "#trivy:ignore:*[force_destroy=true]\n" + strings.Replace(bucket, "acl", "force_destroy = true\n  acl", 1),
		"ignore-inline":         strings.Replace(bucket, `acl    = "public-read"`, `acl    = "public-read" #trivy:ignore:AVD-AWS-0092`, 1),
		"count-zero":            strings.Replace(bucket, "bucket =", "count = 0\n  bucket =", 1),
		"count-two": strings.Replace(bucket, `bucket = "svbench-logs"`, `count = 2
  bucket = "svbench-logs-${count.index}"`, 1),
		"for-each": `variable "names" {
  default = ["a", "b"]
}
resource "aws_s3_bucket" "b" {
  for_each = toset(var.names)
  bucket   = each.value
}
`,
		"locals-and-dynamic": `locals {
  open = ["0.0.0.0/0"]
}
resource "aws_security_group" "sg" {
  name = "sg"
  dynamic "ingress" {
    for_each = [22, 3389]
    content {
      from_port   = ingress.value
      to_port     = ingress.value
      protocol    = "tcp"
      cidr_blocks = local.open
    }
  }
}
`,
		"azure-and-google": `resource "azurerm_storage_account" "a" {
  name                      = "a"
  enable_https_traffic_only = false
  min_tls_version           = "TLS1_0"
}
resource "google_storage_bucket" "g" {
  name                        = "g"
  uniform_bucket_level_access = false
}
`,
		"no-cloud-resources": `variable "x" { default = 1 }
output "y" { value = var.x }
`,
		"user-data-secrets": `resource "aws_instance" "web" {
  ami           = "ami-12345678"
  instance_type = "t3.micro"
  user_data     = <<EOT
#!/bin/bash
export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE
export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY
EOT
}
resource "aws_instance" "clean" {
  ami           = "ami-12345678"
  instance_type = "t3.micro"
  user_data     = "#!/bin/bash\necho hello"
}
resource "aws_launch_configuration" "lc" {
  image_id      = "ami-12345678"
  instance_type = "t3.micro"
  user_data     = "password=hunter2hunter2hunter2"
}
resource "azurerm_linux_virtual_machine" "vm" {
  name        = "vm"
  custom_data = base64encode("export AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE")
}
`,
		"broken-hcl": bucket + "resource \"aws_s3_bucket\" \"x\" {\n  acl = \n",
	} {
		add(name, verify.File{Path: "main.tf", Content: []byte(src)})
	}
	add("json", verify.File{Path: "main.tf.json", Content: []byte(`{"resource": {"aws_s3_bucket": {"j": {"bucket": "j", "acl": "public-read-write"}}}}`)})
	add("two-files-cross-reference",
		verify.File{Path: "a.tf", Content: []byte(`resource "aws_s3_bucket" "b" { bucket = "b" }`)},
		verify.File{Path: "b.tf", Content: []byte(`resource "aws_s3_bucket_public_access_block" "b" {
  bucket            = aws_s3_bucket.b.id
  block_public_acls = true
}`)})
	return cases
}

// TestPreparedMatchesTrivy holds svbench's prepared evaluation to trivy's
// own scanner: the same findings (rule, severity, message, file, line,
// resource) on every parity case.
func TestPreparedMatchesTrivy(t *testing.T) {
	if testing.Short() {
		t.Skip("runs trivy's own scanner on every case")
	}
	prepared, trivy := scanner(t), reference(t)
	// The combined query (the default) and one query per check, as trivy
	// evaluates them, must both match.
	eachCheck, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	eachCheck.checks.eachCheck = true
	ctx := context.Background()
	totalFindings := 0
	seenRules := map[string]bool{}
	for name, files := range parityCases(t) {
		t.Run(name, func(t *testing.T) {
			want, wantErr := trivy.Verify(ctx, files)
			for mode, s := range map[string]*Scanner{"combined": prepared, "each check": eachCheck} {
				got, gotErr := s.Verify(ctx, files)
				if (wantErr == nil) != (gotErr == nil) {
					t.Fatalf("%s: error mismatch: prepared %v, trivy %v", mode, gotErr, wantErr)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("%s: findings differ\nprepared (%d):\n%s\ntrivy (%d):\n%s", mode, len(got), dump(got), len(want), dump(want))
				}
			}
			totalFindings += len(want)
			for _, f := range want {
				seenRules[f.RuleID] = true
			}
		})
	}
	t.Logf("%d findings of %d rules across the parity cases", totalFindings, len(seenRules))
	// The re-implemented parts each have a case that must keep firing:
	// secrets in user data (squealer), a cross-resource check, an
	// attribute-level cause (obj_by_path) and Azure and Google checks.
	for _, id := range []string{"AVD-AWS-0029", "AVD-AWS-0086", "AVD-AWS-0090", "AVD-AZU-0008", "AVD-GCP-0002"} {
		if !seenRules[id] {
			t.Errorf("no parity case produces %s any more", id)
		}
	}
	if totalFindings < 100 {
		t.Errorf("parity cases produced only %d findings in total; they no longer exercise the checks", totalFindings)
	}
}

func dump(fs []verify.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		fmt.Fprintf(&b, "  %s %s %s:%d %s %q\n", f.RuleID, f.Severity, f.File, f.Line, f.Resource, f.Message)
	}
	return b.String()
}

// TestStrictHCL: with StrictHCL a file that does not parse is an error
// naming the file and line, on both paths, where trivy's default skips it.
func TestStrictHCL(t *testing.T) {
	broken := []verify.File{
		{Path: "ok.tf", Content: []byte(`resource "aws_s3_bucket" "b" { bucket = "b" }`)},
		{Path: "main.tf", Content: []byte("resource \"aws_s3_bucket\" \"x\" {\n  acl = \n")},
	}
	for _, trivy := range []bool{false, true} {
		s, err := New(Options{StrictHCL: true, TrivyScanner: trivy})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Verify(context.Background(), broken)
		if err == nil || !strings.Contains(err.Error(), "invalid HCL") || !strings.Contains(err.Error(), "main.tf:2") {
			t.Errorf("trivy scanner %v: err = %v, want invalid HCL at main.tf:2", trivy, err)
		}
		if _, err := s.Verify(context.Background(), broken[:1]); err != nil {
			t.Errorf("trivy scanner %v: valid file: %v", trivy, err)
		}
	}
	if _, err := scanner(t).Verify(context.Background(), broken); err != nil {
		t.Errorf("default (trivy's behaviour) skips the broken file, got %v", err)
	}
}
