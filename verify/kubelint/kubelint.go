// Package kubelint runs kube-linter (golang.stackrox.io/kube-linter v0.8.3)
// as a library over manifests held in memory.
//
// kube-linter's own lintcontext package only reads from disk. This package
// builds the lint context itself: files are split and guarded by yamlsafe
// (size, document count, alias expansion), each document is decoded with the
// same Kubernetes scheme kube-linter registers (core types plus OpenShift,
// autoscaling/v2beta1, Prometheus operator and KEDA), falling back to
// unstructured objects exactly as kube-linter does, and the objects are handed
// to kube-linter's run.Run. Cross-object checks (dangling-service,
// non-existent-service-account, …) therefore see every object of the files
// passed to one Verify call, like one directory for the CLI.
//
// Documents that are not Kubernetes objects are skipped, as the kube-linter
// CLI skips them without --fail-on-invalid-resource; Lint reports them.
package kubelint

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"golang.stackrox.io/kube-linter/pkg/builtinchecks"
	"golang.stackrox.io/kube-linter/pkg/checkregistry"
	"golang.stackrox.io/kube-linter/pkg/config"
	"golang.stackrox.io/kube-linter/pkg/configresolver"
	"golang.stackrox.io/kube-linter/pkg/k8sutil"
	"golang.stackrox.io/kube-linter/pkg/lintcontext"
	"golang.stackrox.io/kube-linter/pkg/run"
	_ "golang.stackrox.io/kube-linter/pkg/templates/all" // registers the check templates
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	runtimeYaml "k8s.io/apimachinery/pkg/runtime/serializer/yaml"
	"k8s.io/client-go/kubernetes/scheme"

	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/yamlsafe"
)

// ToolName is the Finding.Tool of every finding this package reports.
const ToolName = "kube-linter"

const version = "kube-linter v0.8.3"

// rawSeverity is what the reference records for every kube-linter finding:
// kube-linter checks carry no severity of their own.
const rawSeverity = "medium"

// offlineExcluded are built-in checks that need the network (kubeconform
// downloads JSON schemas). AllChecks leaves them out unless Include names
// them explicitly.
var offlineExcluded = []string{"schema-validation"}

// Options select the checks. The zero value runs kube-linter's default
// checks, like `kube-linter lint` without a config file.
type Options struct {
	// AllChecks adds every built-in check (kube-linter's addAllBuiltIn),
	// except the ones that need the network.
	AllChecks bool
	// Include and Exclude name checks to add or remove; Exclude wins.
	Include, Exclude []string
	// Limits bound each file before it is parsed.
	Limits yamlsafe.Limits
}

// Linter is a configured kube-linter. It is safe for concurrent use: the
// registry and the instantiated checks are built once and only read after.
type Linter struct {
	registry checkregistry.CheckRegistry
	checks   []string
	remedy   map[string]string
	decoder  runtime.Decoder
	limits   yamlsafe.Limits
}

var _ verify.Verifier = (*Linter)(nil)

// New builds the check registry and resolves the enabled checks.
func New(opts Options) (*Linter, error) {
	reg := checkregistry.New()
	if err := builtinchecks.LoadInto(reg); err != nil {
		return nil, fmt.Errorf("kubelint: loading built-in checks: %w", err)
	}
	cfg := config.Config{Checks: config.ChecksConfig{
		AddAllBuiltIn: opts.AllChecks,
		Include:       opts.Include,
		Exclude:       opts.Exclude,
	}}
	if opts.AllChecks {
		for _, name := range offlineExcluded {
			if !contains(opts.Include, name) {
				cfg.Checks.Exclude = append(cfg.Checks.Exclude, name)
			}
		}
	}
	checks, err := configresolver.GetEnabledChecksAndValidate(&cfg, reg)
	if err != nil {
		return nil, fmt.Errorf("kubelint: %w (list them with `svbench verify --help` or kube-linter's checks list)", err)
	}
	remedy := make(map[string]string, len(checks))
	for _, name := range checks {
		remedy[name] = reg.Load(name).Spec.Remediation
	}
	return &Linter{
		registry: reg,
		checks:   checks,
		remedy:   remedy,
		// The scheme already holds kube-linter's extra API groups: its
		// lintcontext package adds them to client-go's scheme in init.
		decoder: serializer.NewCodecFactory(scheme.Scheme).UniversalDeserializer(),
		limits:  opts.Limits,
	}, nil
}

// Name implements verify.Verifier.
func (l *Linter) Name() string { return ToolName }

// Version implements verify.Verifier.
func (l *Linter) Version() string { return version }

// Checks returns the enabled check names, sorted.
func (l *Linter) Checks() []string { return append([]string(nil), l.checks...) }

// Invalid is a document that was skipped because it is not a Kubernetes
// object kube-linter can decode.
type Invalid struct {
	File string
	Line int
	Err  error
}

// Result is the outcome of Lint.
type Result struct {
	Findings []verify.Finding
	Invalid  []Invalid
	// Untyped are documents that decoded only as unstructured objects: their
	// kind or apiVersion is not one kube-linter knows, so most checks do not
	// apply to them and they lint (almost) clean whatever they hold.
	Untyped []Invalid
	Objects int
}

// Verify implements verify.Verifier: the files form one lint context. Every
// file is read as YAML whatever its name; callers dispatch by type.
func (l *Linter) Verify(ctx context.Context, files []verify.File) ([]verify.Finding, error) {
	res, err := l.Lint(ctx, files)
	return res.Findings, err
}

// Lint lints the files as one context and also reports skipped documents.
func (l *Linter) Lint(ctx context.Context, files []verify.File) (res Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			res, err = Result{}, fmt.Errorf("kubelint: kube-linter panicked on this input: %v", r)
		}
	}()
	lc := &lintContext{}
	lines := map[k8sutil.Object]int{}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		docs, err := yamlsafe.SplitWith(f.YAML, f.Path, f.Content, l.limits)
		if err != nil {
			return Result{}, fmt.Errorf("kubelint: %w", err)
		}
		for _, d := range docs {
			if d.Empty() {
				continue
			}
			raw := bytes.TrimSpace(d.Raw)
			objs, typed, err := l.parseObjects(raw)
			if err != nil {
				lc.invalid = append(lc.invalid, lintcontext.InvalidObject{
					Metadata: lintcontext.ObjectMetadata{FilePath: f.Path, Raw: raw}, LoadErr: err,
				})
				res.Invalid = append(res.Invalid, Invalid{File: f.Path, Line: d.Line, Err: err})
				continue
			}
			if !typed && len(objs) > 0 {
				gvk := objs[0].GetObjectKind().GroupVersionKind()
				res.Untyped = append(res.Untyped, Invalid{File: f.Path, Line: d.Line,
					Err: fmt.Errorf("kind %q of apiVersion %q is not a Kubernetes type kube-linter knows", gvk.Kind, gvk.GroupVersion().String())})
			}
			for _, o := range objs {
				lines[o] = d.Line
				lc.objects = append(lc.objects, lintcontext.Object{
					Metadata:  lintcontext.ObjectMetadata{FilePath: f.Path, Raw: raw},
					K8sObject: o,
				})
			}
		}
	}
	res.Objects = len(lc.objects)
	if len(lc.objects) == 0 {
		return res, nil
	}
	out, err := run.Run([]lintcontext.LintContext{lc}, l.registry, l.checks)
	if err != nil {
		return Result{}, fmt.Errorf("kubelint: %w", err)
	}
	for _, r := range out.Reports {
		o := r.Object.K8sObject
		res.Findings = append(res.Findings, verify.Finding{
			Tool:        ToolName,
			RuleID:      r.Check,
			Severity:    verify.NormalizeSeverity(rawSeverity),
			RawSeverity: rawSeverity,
			Message:     r.Diagnostic.Message,
			Object: verify.Object{
				Kind:      o.GetObjectKind().GroupVersionKind().Kind,
				Name:      o.GetName(),
				Namespace: o.GetNamespace(),
			},
			File:        r.Object.Metadata.FilePath,
			Line:        lines[o],
			Remediation: r.Remediation,
		})
	}
	verify.SortFindings(res.Findings)
	return res, nil
}

// parseObjects follows kube-linter's lintcontext.parseObjects: typed decode,
// fall back to unstructured, and expand v1.List items. typed is false when
// the fallback was taken.
func (l *Linter) parseObjects(data []byte) ([]k8sutil.Object, bool, error) {
	typed := true
	obj, _, err := l.decoder.Decode(data, nil, nil)
	if err != nil {
		if strings.Contains(err.Error(), "json: cannot unmarshal") {
			return nil, false, fmt.Errorf("failed to decode: %w", err)
		}
		typed = false
		dec := runtimeYaml.NewDecodingSerializer(unstructured.UnstructuredJSONScheme)
		var uerr error
		obj, _, uerr = dec.Decode(data, nil, obj)
		if uerr != nil {
			return nil, false, fmt.Errorf("not a Kubernetes object: %w", uerr)
		}
	}
	if list, ok := obj.(*v1.List); ok {
		objs := make([]k8sutil.Object, 0, len(list.Items))
		for i, item := range list.Items {
			o, _, err := l.decoder.Decode(item.Raw, nil, nil)
			if err != nil {
				return nil, false, fmt.Errorf("decoding item %d in the list: %w", i, err)
			}
			k, _ := o.(k8sutil.Object)
			if k == nil {
				return nil, false, fmt.Errorf("list item %d is not a Kubernetes object", i)
			}
			objs = append(objs, k)
		}
		return objs, typed, nil
	}
	k, _ := obj.(k8sutil.Object)
	if k == nil {
		return nil, false, fmt.Errorf("not a Kubernetes object")
	}
	return []k8sutil.Object{k}, typed, nil
}

// lintContext is an in-memory lintcontext.LintContext.
type lintContext struct {
	objects []lintcontext.Object
	invalid []lintcontext.InvalidObject
}

func (c *lintContext) Objects() []lintcontext.Object               { return c.objects }
func (c *lintContext) InvalidObjects() []lintcontext.InvalidObject { return c.invalid }

// IsYAML reports whether a path names a YAML file.
func IsYAML(p string) bool {
	p = strings.ToLower(p)
	return strings.HasSuffix(p, ".yaml") || strings.HasSuffix(p, ".yml")
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
