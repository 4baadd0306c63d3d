// Package suite bundles svbench's in-process verifiers (kube-linter, trivy's
// Terraform scanner and the OPA policies) behind one call that dispatches by
// file type. It lives apart from package verify because it imports the
// verifier packages, which import verify.
package suite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/kubelint"
	"github.com/svbench/svbench/verify/policy"
	"github.com/svbench/svbench/verify/tfscan"
)

// Tool selectors accepted by Verify.
const (
	ToolKubeLinter = kubelint.ToolName
	ToolTrivy      = tfscan.ToolName
	ToolOPA        = policy.ToolName
	ToolAll        = "all"
)

// Tools lists the selectors accepted by Verify.
var Tools = []string{ToolKubeLinter, ToolTrivy, ToolOPA, ToolAll}

// Options configure a Suite.
type Options struct {
	KubeLinter kubelint.Options
	Trivy      tfscan.Options
	Policy     policy.Options
}

// ScoringKubeChecks are the non-default kube-linter checks E2's RBAC
// mutations map to (a wildcard ClusterRole, secret access, a cluster-admin
// binding); everything else is kube-linter's default set.
var ScoringKubeChecks = []string{"wildcard-in-rules", "access-to-secrets", "cluster-admin-role-binding"}

// ScoringOptions is the one scanner configuration svbench judges with: E2's
// rewards and `svbench verify` both build their scanners from it, so a file
// verify calls clean is one E2 pays as clean. kube-linter runs its defaults
// plus ScoringKubeChecks; trivy treats a file that does not parse as an
// error, not as a file without findings (trivy's own default logs it and
// reports nothing); OPA adds the Rego in policyDirs.
func ScoringOptions(policyDirs []string) Options {
	return Options{
		KubeLinter: kubelint.Options{Include: slices.Clone(ScoringKubeChecks)},
		Trivy:      tfscan.Options{StrictHCL: true},
		Policy:     policy.Options{Dirs: slices.Clone(policyDirs)},
	}
}

// Suite holds one instance of each verifier, built once; it is safe for
// concurrent use.
type Suite struct {
	kube   *kubelint.Linter
	trivy  *tfscan.Scanner
	policy *policy.Engine
}

// New builds the verifiers. trivy's check compilation dominates (about a
// second); build one Suite per process and share it.
func New(ctx context.Context, opts Options) (*Suite, error) {
	k, err := kubelint.New(opts.KubeLinter)
	if err != nil {
		return nil, err
	}
	t, err := tfscan.New(opts.Trivy)
	if err != nil {
		return nil, err
	}
	p, err := policy.New(ctx, opts.Policy)
	if err != nil {
		return nil, err
	}
	return &Suite{kube: k, trivy: t, policy: p}, nil
}

// KubeLinter, Trivy and Policy expose the individual verifiers.
func (s *Suite) KubeLinter() *kubelint.Linter { return s.kube }
func (s *Suite) Trivy() *tfscan.Scanner       { return s.trivy }
func (s *Suite) Policy() *policy.Engine       { return s.policy }

// Versions maps tool names to versions, for run metadata.
func (s *Suite) Versions() map[string]string {
	return map[string]string{
		ToolKubeLinter: s.kube.Version(),
		ToolTrivy:      s.trivy.Version(),
		ToolOPA:        s.policy.Version(),
	}
}

// Kind of configuration a file holds, judged by its name.
type Kind int

// File kinds.
const (
	KindUnknown Kind = iota
	KindKubernetes
	KindTerraform
)

// KindOf classifies a path: .yaml/.yml are Kubernetes manifests, .tf and
// .tf.json are Terraform.
func KindOf(path string) Kind {
	switch {
	case kubelint.IsYAML(path):
		return KindKubernetes
	case tfscan.IsTerraform(path):
		return KindTerraform
	}
	return KindUnknown
}

// Verify runs the selected tool(s) on files taken as one lint context: YAML
// files go to kube-linter and the Kubernetes policies, Terraform files to
// trivy and the Terraform policies. Files of other types are ignored.
// Findings come grouped by tool (kube-linter, trivy, opa), each group sorted
// by file and line.
func (s *Suite) Verify(ctx context.Context, tool string, files []verify.File) ([]verify.Finding, error) {
	if !validTool(tool) {
		return nil, fmt.Errorf("unknown tool %q (want one of %s)", tool, strings.Join(Tools, ", "))
	}
	var yamlFiles, tfFiles []verify.File
	for _, f := range files {
		switch KindOf(f.Path) {
		case KindKubernetes:
			yamlFiles = append(yamlFiles, f)
		case KindTerraform:
			tfFiles = append(tfFiles, f)
		}
	}
	use := func(name string) bool { return tool == ToolAll || tool == name }
	var out []verify.Finding
	run := func(v func(context.Context, []verify.File) ([]verify.Finding, error), in []verify.File) error {
		if len(in) == 0 {
			return nil
		}
		fs, err := v(ctx, in)
		out = append(out, fs...)
		return err
	}
	if use(ToolKubeLinter) {
		if err := run(s.kube.Verify, yamlFiles); err != nil {
			return nil, err
		}
	}
	if use(ToolTrivy) {
		if err := run(s.trivy.Verify, tfFiles); err != nil {
			return nil, err
		}
	}
	if use(ToolOPA) {
		if err := run(s.policy.VerifyKubernetes, yamlFiles); err != nil {
			return nil, err
		}
		if err := run(s.policy.VerifyTerraform, tfFiles); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func validTool(t string) bool {
	for _, x := range Tools {
		if x == t {
			return true
		}
	}
	return false
}
