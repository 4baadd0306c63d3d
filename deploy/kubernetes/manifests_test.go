// Package kubernetes holds svbench's Kubernetes manifests; its tests lint
// them with svbench's own kube-linter verifier.
package kubernetes

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/kubelint"
)

func manifests(t *testing.T) []verify.File {
	t.Helper()
	paths, err := filepath.Glob("*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	var files []verify.File
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, verify.File{Path: p, Content: b})
	}
	return files
}

type object struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name      string `json:"name"`
		Namespace string `json:"namespace"`
	} `json:"metadata"`
	Spec struct {
		CompletionMode string `json:"completionMode"`
		Completions    int    `json:"completions"`
		Template       struct {
			Spec podSpec `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
}

type podSpec struct {
	AutomountServiceAccountToken *bool `json:"automountServiceAccountToken"`
	SecurityContext              struct {
		RunAsNonRoot *bool `json:"runAsNonRoot"`
	} `json:"securityContext"`
	InitContainers []container `json:"initContainers"`
	Containers     []container `json:"containers"`
}

type container struct {
	Name            string   `json:"name"`
	Image           string   `json:"image"`
	Args            []string `json:"args"`
	SecurityContext struct {
		AllowPrivilegeEscalation *bool `json:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   *bool `json:"readOnlyRootFilesystem"`
		RunAsNonRoot             *bool `json:"runAsNonRoot"`
		Capabilities             struct {
			Drop []string `json:"drop"`
		} `json:"capabilities"`
	} `json:"securityContext"`
	Resources struct {
		Requests map[string]string `json:"requests"`
		Limits   map[string]string `json:"limits"`
	} `json:"resources"`
	ReadinessProbe *struct {
		HTTPGet struct{ Path string } `json:"httpGet"`
	} `json:"readinessProbe"`
	LivenessProbe *struct {
		HTTPGet struct{ Path string } `json:"httpGet"`
	} `json:"livenessProbe"`
}

// TestManifestsSecureByDefault parses every document and checks the
// properties the deployment promises, independently of any linter.
func TestManifestsSecureByDefault(t *testing.T) {
	kinds := map[string]int{}
	for _, f := range manifests(t) {
		for i, doc := range bytes.Split(f.Content, []byte("\n---\n")) {
			var obj object
			if err := yaml.Unmarshal(doc, &obj); err != nil {
				t.Fatalf("%s document %d: %v", f.Path, i+1, err)
			}
			if obj.Kind == "" || obj.APIVersion == "" || obj.Metadata.Name == "" {
				t.Errorf("%s document %d lacks kind, apiVersion or name", f.Path, i+1)
			}
			if obj.Kind != "Namespace" && obj.Metadata.Namespace != "svbench" {
				t.Errorf("%s %s/%s: namespace %q", f.Path, obj.Kind, obj.Metadata.Name, obj.Metadata.Namespace)
			}
			kinds[obj.Kind]++
			if obj.Kind != "Deployment" && obj.Kind != "Job" {
				continue
			}
			ps := obj.Spec.Template.Spec
			if ps.AutomountServiceAccountToken == nil || *ps.AutomountServiceAccountToken {
				t.Errorf("%s: service account token mounted", obj.Metadata.Name)
			}
			if ps.SecurityContext.RunAsNonRoot == nil || !*ps.SecurityContext.RunAsNonRoot {
				t.Errorf("%s: pod may run as root", obj.Metadata.Name)
			}
			for _, c := range append(append([]container(nil), ps.InitContainers...), ps.Containers...) {
				where := obj.Metadata.Name + "/" + c.Name
				sc := c.SecurityContext
				if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
					t.Errorf("%s: privilege escalation allowed", where)
				}
				if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
					t.Errorf("%s: root filesystem writable", where)
				}
				if len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" {
					t.Errorf("%s: capabilities not dropped: %v", where, sc.Capabilities.Drop)
				}
				for _, r := range []string{"cpu", "memory"} {
					if c.Resources.Requests[r] == "" || c.Resources.Limits[r] == "" {
						t.Errorf("%s: %s request or limit unset", where, r)
					}
				}
				tag := c.Image[strings.LastIndexByte(c.Image, ':')+1:]
				if !strings.Contains(c.Image, ":") || tag == "latest" || strings.Contains(tag, "/") {
					t.Errorf("%s: image %q is not pinned to a tag", where, c.Image)
				}
			}
			switch obj.Kind {
			case "Deployment":
				c := ps.Containers[0]
				if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" || c.LivenessProbe == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
					t.Errorf("%s: probes must hit /readyz and /healthz", obj.Metadata.Name)
				}
				if !strings.Contains(strings.Join(c.Args, " "), "--token-env") {
					t.Errorf("%s: server runs without a token", obj.Metadata.Name)
				}
			case "Job":
				if obj.Metadata.Name == "svbench-eval-sweep" {
					args := strings.Join(ps.Containers[0].Args, " ")
					if obj.Spec.CompletionMode != "Indexed" || !strings.Contains(args, "--shard=$(SHARD_INDEX)/4") || obj.Spec.Completions != 4 {
						t.Errorf("sweep: completion mode %q, completions %d, args %s", obj.Spec.CompletionMode, obj.Spec.Completions, args)
					}
				}
			}
		}
	}
	for _, k := range []string{"Deployment", "Service", "HorizontalPodAutoscaler", "Job", "PersistentVolumeClaim", "ServiceAccount"} {
		if kinds[k] == 0 {
			t.Errorf("no %s among the manifests", k)
		}
	}
}

// TestManifestsLintClean runs svbench's kube-linter verifier over all
// manifests as one context (so cross-object checks see the ServiceAccount
// and Service selectors) and expects no findings, with kube-linter's default
// checks and with every offline built-in check.
func TestManifestsLintClean(t *testing.T) {
	files := manifests(t)
	for name, opts := range map[string]kubelint.Options{
		"default": {},
		"all":     {AllChecks: true, Exclude: allChecksWaived},
	} {
		l, err := kubelint.New(opts)
		if err != nil {
			t.Fatal(err)
		}
		res, err := l.Lint(context.Background(), files)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range res.Findings {
			t.Errorf("%s checks: %s %s (%s/%s): %s", name, f.File, f.RuleID, f.Object.Kind, f.Object.Name, f.Message)
		}
		for _, inv := range res.Invalid {
			t.Errorf("%s checks: %s line %d not a Kubernetes object: %v", name, inv.File, inv.Line, inv.Err)
		}
		if res.Objects < 8 {
			t.Errorf("%s checks: only %d objects linted", name, res.Objects)
		}
	}
}

// allChecksWaived are opt-in checks whose advice does not fit these
// manifests; each says why.
var allChecksWaived = []string{
	"sorted-keys",               // style: keys follow the Kubernetes docs' order, not the alphabet
	"no-node-affinity",          // cluster-specific: pods run on any node
	"required-annotation-email", // organisation-specific ownership metadata
	"required-label-owner",      // organisation-specific ownership metadata
	"env-value-from",            // the token and API key Secrets are created out of band, never committed
	"read-secret-from-env-var",  // svbench reads --token-env / --api-key-env from the environment
}
