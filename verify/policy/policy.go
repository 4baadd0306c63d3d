// Package policy evaluates OPA/Rego policies over Kubernetes manifests and
// Terraform configuration, in process, with queries compiled once.
//
// An embedded default bundle (bundle/*.rego) covers risks kube-linter's
// default checks and trivy's Terraform checks leave out or only partly
// cover; its rule ids are prefixed K8S_ and TF_.
//
// # User policies
//
// New also loads every *.rego file under Options.Dirs (recursively; files
// ending in _test.rego are skipped). The convention is the same as for the
// bundle:
//
//   - package svbench.kubernetes — input is one Kubernetes object (one YAML
//     document decoded to JSON);
//   - package svbench.terraform — input is the lint context's Terraform
//     configuration, {"resource": {TYPE: {NAME: BODY}}, "data": …,
//     "variable": …, "module": …, "provider": …, "locals": …}, where
//     attributes that reference other objects hold their source text;
//   - a partial set rule deny whose members are objects
//     {"id": string, "severity": "low"|"medium"|"high"|"critical", "msg": string}
//     and, for Terraform, optionally "resource": "TYPE.NAME" so the finding
//     gets a file and line.
//
// Both Rego v1 (`deny contains f if { … }`) and v0 (`deny[f] { … }`) syntax
// are accepted: a file that does not parse as v1 is retried as v0, and when
// both fail the v1 error is reported with the file name. Other packages may
// hold helpers. Findings report Tool "opa" and the rule's id.
package policy

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"

	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/yamlsafe"

	"github.com/svbench/svbench/base/clip"
)

// ToolName is the Finding.Tool of every finding this package reports.
const ToolName = "opa"

// Packages that hold the deny rules.
const (
	KubernetesPackage = "svbench.kubernetes"
	TerraformPackage  = "svbench.terraform"
)

//go:embed bundle/*.rego
var bundleFS embed.FS

// Limits bound inputs. Zero fields take the defaults. MaxHCLDepth and
// YAML.MaxDepth are nesting bounds (verify/nesting, nesting.DefaultMax).
type Limits struct {
	YAML        yamlsafe.Limits
	MaxHCLBytes int
	MaxHCLDepth int
	// MaxPolicyBytes bounds each user policy file.
	MaxPolicyBytes int
}

// Options configure an Engine.
type Options struct {
	// Dirs are user policy directories (see the package documentation).
	Dirs []string
	// NoBundle leaves out the embedded default policies.
	NoBundle bool
	Limits   Limits
}

// Engine evaluates the policies. It is safe for concurrent use: prepared
// queries are immutable after New.
type Engine struct {
	k8s, tf rego.PreparedEvalQuery
	limits  Limits
	modules []string
}

// Kubernetes and Terraform verifiers backed by one Engine.
type (
	Kubernetes struct{ *Engine }
	Terraform  struct{ *Engine }
)

var (
	_ verify.Verifier = Kubernetes{}
	_ verify.Verifier = Terraform{}
)

// New parses and compiles the bundle and the user policies.
func New(ctx context.Context, opts Options) (*Engine, error) {
	if opts.Limits.MaxPolicyBytes <= 0 {
		opts.Limits.MaxPolicyBytes = 1 << 20
	}
	var modules []*ast.Module
	var names []string
	if !opts.NoBundle {
		err := fs.WalkDir(bundleFS, "bundle", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			src, err := bundleFS.ReadFile(p)
			if err != nil {
				return err
			}
			m, err := parseModule("svbench:"+p, src)
			if err != nil {
				return err
			}
			modules = append(modules, m)
			names = append(names, "svbench:"+p)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("policy: embedded bundle: %w", err)
		}
	}
	for _, dir := range opts.Dirs {
		ms, ns, err := loadDir(dir, opts.Limits.MaxPolicyBytes)
		if err != nil {
			return nil, err
		}
		modules = append(modules, ms...)
		names = append(names, ns...)
	}
	e := &Engine{limits: opts.Limits, modules: names}
	var err error
	if e.k8s, err = prepare(ctx, modules, KubernetesPackage); err != nil {
		return nil, err
	}
	if e.tf, err = prepare(ctx, modules, TerraformPackage); err != nil {
		return nil, err
	}
	return e, nil
}

func loadDir(dir string, maxBytes int) ([]*ast.Module, []string, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("policy: %w", err)
	}
	if !info.IsDir() {
		return nil, nil, fmt.Errorf("policy: %s is not a directory; --policy takes a directory of .rego files", dir)
	}
	var modules []*ast.Module
	var names []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || !strings.HasSuffix(p, ".rego") || strings.HasSuffix(p, "_test.rego") {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if fi.Size() > int64(maxBytes) {
			return fmt.Errorf("%s: %d bytes exceeds the %d-byte limit for a policy file", p, fi.Size(), maxBytes)
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m, err := parseModule(p, src)
		if err != nil {
			return err
		}
		modules = append(modules, m)
		names = append(names, p)
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("policy: loading %s: %w", dir, err)
	}
	if len(modules) == 0 {
		return nil, nil, fmt.Errorf("policy: no .rego files in %s", dir)
	}
	return modules, names, nil
}

// parseModule parses Rego v1, falling back to v0 syntax.
func parseModule(name string, src []byte) (*ast.Module, error) {
	m, err := ast.ParseModuleWithOpts(name, string(src), ast.ParserOptions{RegoVersion: ast.RegoV1})
	if err == nil {
		return m, nil
	}
	if m0, err0 := ast.ParseModuleWithOpts(name, string(src), ast.ParserOptions{RegoVersion: ast.RegoV0}); err0 == nil {
		return m0, nil
	}
	return nil, fmt.Errorf("invalid Rego in %s: %w", name, err)
}

func prepare(ctx context.Context, modules []*ast.Module, pkg string) (rego.PreparedEvalQuery, error) {
	opts := []func(*rego.Rego){
		rego.Query("data." + pkg + ".deny"),
		// Builtin errors (json.unmarshal on text a model wrote, …) make the
		// expression undefined instead of failing the whole evaluation, so
		// hostile input cannot turn every policy off by breaking one.
		rego.StrictBuiltinErrors(false),
	}
	for _, m := range modules {
		opts = append(opts, rego.ParsedModule(m))
	}
	pq, err := rego.New(opts...).PrepareForEval(ctx)
	if err != nil {
		return pq, fmt.Errorf("policy: compiling policies: %w", err)
	}
	return pq, nil
}

// Modules lists the loaded policy files ("svbench:bundle/…" for the bundle).
func (e *Engine) Modules() []string { return append([]string(nil), e.modules...) }

// Name implements verify.Verifier.
func (Kubernetes) Name() string { return ToolName }

// Name implements verify.Verifier.
func (Terraform) Name() string { return ToolName }

// Version implements verify.Verifier.
func (e *Engine) Version() string { return "opa " + opaVersion() }

// Verify evaluates the Kubernetes policies on every document of the files.
// Documents that are not objects (no kind) are skipped.
func (k Kubernetes) Verify(ctx context.Context, files []verify.File) ([]verify.Finding, error) {
	return k.Engine.VerifyKubernetes(ctx, files)
}

// Verify evaluates the Terraform policies on the .tf files as one module.
func (t Terraform) Verify(ctx context.Context, files []verify.File) ([]verify.Finding, error) {
	return t.Engine.VerifyTerraform(ctx, files)
}

// VerifyKubernetes evaluates svbench.kubernetes.deny per document.
func (e *Engine) VerifyKubernetes(ctx context.Context, files []verify.File) (out []verify.Finding, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("policy: panic on this input: %v", r)
		}
	}()
	for _, f := range files {
		docs, err := yamlsafe.SplitWith(f.YAML, f.Path, f.Content, e.limits.YAML)
		if err != nil {
			return nil, fmt.Errorf("policy: %w", err)
		}
		for _, d := range docs {
			if d.Empty() {
				continue
			}
			v, err := yamlsafe.Value(d.Node)
			if err != nil {
				return nil, fmt.Errorf("policy: %s: %w", f.Path, err)
			}
			obj, ok := v.(map[string]any)
			if !ok {
				continue
			}
			kind, _ := obj["kind"].(string)
			if kind == "" {
				continue
			}
			found, err := e.eval(ctx, e.k8s, obj)
			if err != nil {
				return nil, fmt.Errorf("policy: %s:%d: %w", f.Path, d.Line, err)
			}
			meta, _ := obj["metadata"].(map[string]any)
			name, _ := meta["name"].(string)
			ns, _ := meta["namespace"].(string)
			for _, fi := range found {
				fi.File, fi.Line = f.Path, d.Line
				fi.Object = verify.Object{Kind: kind, Name: name, Namespace: ns}
				out = append(out, fi)
			}
		}
	}
	verify.SortFindings(out)
	return out, nil
}

// VerifyTerraform evaluates svbench.terraform.deny over the .tf files.
func (e *Engine) VerifyTerraform(ctx context.Context, files []verify.File) (out []verify.Finding, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("policy: panic on this input: %v", r)
		}
	}()
	var tf []verify.File
	for _, f := range files {
		if strings.HasSuffix(strings.ToLower(f.Path), ".tf") {
			tf = append(tf, f)
		}
	}
	if len(tf) == 0 {
		return nil, nil
	}
	in, err := parseTerraform(tf, e.limits)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	found, err := e.eval(ctx, e.tf, in.doc)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	for _, fi := range found {
		if loc, ok := in.locations[fi.Resource]; ok {
			fi.File, fi.Line = loc.file, loc.line
		}
		out = append(out, fi)
	}
	verify.SortFindings(out)
	return out, nil
}

func (e *Engine) eval(ctx context.Context, pq rego.PreparedEvalQuery, input map[string]any) ([]verify.Finding, error) {
	val, err := ast.InterfaceToValue(input)
	if err != nil {
		return nil, fmt.Errorf("converting input: %w", err)
	}
	rs, err := pq.Eval(ctx, rego.EvalParsedInput(val))
	if err != nil {
		return nil, fmt.Errorf("evaluating policies: %w", err)
	}
	var out []verify.Finding
	for _, r := range rs {
		for _, ex := range r.Expressions {
			set, ok := ex.Value.([]any)
			if !ok {
				continue
			}
			for _, item := range set {
				f, err := toFinding(item)
				if err != nil {
					return nil, err
				}
				out = append(out, f)
			}
		}
	}
	return out, nil
}

func toFinding(item any) (verify.Finding, error) {
	m, ok := item.(map[string]any)
	if !ok {
		b, _ := json.Marshal(item)
		return verify.Finding{}, fmt.Errorf("deny produced %s; each member must be an object {id, severity, msg}", clip.Bytes(string(b), 200, clip.Ellipsis))
	}
	id, _ := m["id"].(string)
	if id == "" {
		b, _ := json.Marshal(item)
		return verify.Finding{}, fmt.Errorf("deny produced %s without a string \"id\"", clip.Bytes(string(b), 200, clip.Ellipsis))
	}
	sev, _ := m["severity"].(string)
	msg, _ := m["msg"].(string)
	if msg == "" {
		msg, _ = m["message"].(string)
	}
	res, _ := m["resource"].(string)
	return verify.Finding{
		Tool:        ToolName,
		RuleID:      id,
		Severity:    verify.NormalizeSeverity(sev),
		RawSeverity: sev,
		Message:     msg,
		Resource:    res,
	}, nil
}
