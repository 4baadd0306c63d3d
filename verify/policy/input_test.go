package policy

import (
	"context"
	"testing"

	"github.com/svbench/svbench/verify"
)

// TestInputBuildersMatchVerify holds the exported input builders to the
// inputs the verifiers evaluate: same documents, same Terraform addresses.
func TestInputBuildersMatchVerify(t *testing.T) {
	manifest := []byte("apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\nspec:\n  containers: []\n---\n# only a comment\n---\n- not an object\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: b\n")
	docs, err := KubernetesInputs("m.yaml", manifest, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || docs[0].Object["kind"] != "Pod" || docs[1].Object["kind"] != "Service" || docs[0].Line != 1 || docs[1].Line != 12 {
		t.Fatalf("KubernetesInputs = %+v", docs)
	}
	if _, err := KubernetesInputs("bad.yaml", []byte("a: [\n"), Limits{}); err == nil {
		t.Fatal("KubernetesInputs accepted invalid YAML")
	}

	tf := []byte("resource \"aws_s3_bucket\" \"logs\" {\n  bucket = \"x\"\n  acl    = \"public-read\"\n}\n")
	in, err := TerraformInputs([]verify.File{{Path: "main.tf", Content: tf}}, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if loc := in.Locations["aws_s3_bucket.logs"]; loc.File != "main.tf" || loc.Line != 1 {
		t.Fatalf("location = %+v", loc)
	}
	body := in.Doc["resource"].(map[string]any)["aws_s3_bucket"].(map[string]any)["logs"].(map[string]any)
	if body["acl"] != "public-read" {
		t.Fatalf("body = %v", body)
	}
	e, err := New(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	fs, err := e.VerifyTerraform(context.Background(), []verify.File{{Path: "main.tf", Content: tf}})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, f := range fs {
		found = found || (f.RuleID == "TF_S3_PUBLIC_ACL" && f.Resource == "aws_s3_bucket.logs")
	}
	if !found {
		t.Fatalf("the verifier did not see the input the builder returned: %v", fs)
	}
	if _, err := TerraformInputs([]verify.File{{Path: "bad.tf", Content: []byte("resource \"x\" {\n")}}, Limits{}); err == nil {
		t.Fatal("TerraformInputs accepted invalid HCL")
	}
}
