package tfscan

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/storage"
	"github.com/open-policy-agent/opa/v1/storage/inmem"
	"github.com/open-policy-agent/opa/v1/util"
	"github.com/owenrumney/squealer/pkg/squealer"

	"github.com/aquasecurity/trivy/pkg/iac/providers"
	trivyrego "github.com/aquasecurity/trivy/pkg/iac/rego"
	"github.com/aquasecurity/trivy/pkg/iac/scan"
	"github.com/aquasecurity/trivy/pkg/iac/types"
)

// checkSet evaluates trivy's embedded checks against adapted Terraform state
// with the semantics of trivy's rego.Scanner.ScanInput for source "cloud",
// but through queries prepared once. trivy v0.70 builds a new rego.Rego for
// every check on every scan, so each scan re-parses and re-compiles some 150
// queries (and sorts every OPA built-in for the capabilities) before it
// evaluates anything; that was over half of a Terraform re-verification.
// Prepared queries are safe for concurrent evaluation, so one checkSet
// serves every scan. TestPreparedMatchesTrivy holds the two paths to the
// same findings.
type checkSet struct {
	checks   []preparedCheck
	compiler *ast.Compiler
	// fastObjByPath: the library's obj_by_path calls objByPath (see
	// objbypath.go), so every query must be given the built-in.
	fastObjByPath bool
	// secrets is the one squealer scanner the renamed
	// squealer.scan_string calls share (see squealer.go).
	secrets   *squealer.StringScanner
	store     storage.Store
	providers map[string]bool
	groups    []selectorGroup

	mu   sync.Mutex
	sets map[string]*combinedQuery // by applicableChecks key
	// eachCheck evaluates every check in its own query, as trivy does
	// (tests hold the combined evaluation to it).
	eachCheck bool
}

type preparedCheck struct {
	namespace string
	rule      string
	selectors []trivyrego.Selector
	meta      scan.Rule
	query     rego.PreparedEvalQuery
}

// newCheckSet loads, compiles and filters the embedded checks the way
// trivy's rego.Scanner.LoadPolicies does for a scanner built with
// WithEmbeddedPolicies and WithEmbeddedLibraries, then prepares one query per
// enforced rule.
func newCheckSet(ctx context.Context) (*checkSet, error) {
	modules, err := trivyrego.LoadEmbeddedPolicies()
	if err != nil {
		return nil, fmt.Errorf("loading trivy's embedded checks: %w", err)
	}
	libs, err := trivyrego.LoadEmbeddedLibraries()
	if err != nil {
		return nil, fmt.Errorf("loading trivy's embedded libraries: %w", err)
	}
	maps.Copy(modules, libs)
	fastObjByPath, err := replaceObjByPath(modules)
	if err != nil {
		return nil, fmt.Errorf("replacing obj_by_path: %w", err)
	}
	caps := ast.CapabilitiesForThisVersion()
	if fastObjByPath {
		caps.Builtins = append(caps.Builtins, &ast.Builtin{Name: objByPathDecl.Name, Decl: objByPathDecl.Decl})
	}
	var secrets *squealer.StringScanner
	if renameSquealerCalls(modules) {
		secrets = squealer.NewStringScanner()
		caps.Builtins = append(caps.Builtins, &ast.Builtin{Name: fastSquealerDecl.Name, Decl: fastSquealerDecl.Decl})
	}

	schemas, err := trivyrego.BuildSchemaSetFromPolicies(modules, nil, nil, map[string][]byte{})
	if err != nil {
		return nil, fmt.Errorf("trivy check schemas: %w", err)
	}
	compiler := ast.NewCompiler().
		WithUseTypeCheckAnnotations(true).
		WithCapabilities(caps).
		WithSchemas(schemas)
	compiler.SetErrorLimit(trivyrego.DefaultAllowedRegoErrors + 1)
	if compiler.Compile(modules); compiler.Failed() {
		// trivy drops a few broken user checks; embedded ones must compile.
		return nil, fmt.Errorf("compiling trivy's embedded checks: %w", compiler.Errors)
	}

	namespaces := map[string]bool{}
	for _, m := range modules {
		namespaces[moduleNamespace(m)] = true
	}
	store := inmem.NewFromObject(map[string]any{"namespaces": slices.Sorted(maps.Keys(namespaces))})

	cs := &checkSet{
		fastObjByPath: fastObjByPath,
		secrets:       secrets,
		compiler:      compiler,
		store:         store,
		providers:     map[string]bool{"kind": true},
		sets:          map[string]*combinedQuery{},
	}
	for _, p := range providers.AllProviders() {
		cs.providers[string(p)] = true
	}
	builtin := map[string]bool{}
	for _, ns := range trivyrego.BuiltinNamespaces() {
		builtin[ns] = true
	}
	keep := []func(*ast.Module, *trivyrego.StaticMetadata) bool{
		trivyrego.FrameworksFilter(nil),
		trivyrego.IncludeDeprecatedFilter(false),
	}
	// Map order decides nothing below, but a sorted walk keeps the prepared
	// set, and any error, the same from run to run.
	for _, path := range slices.Sorted(maps.Keys(modules)) {
		m := modules[path]
		ns := moduleNamespace(m)
		if !builtin[strings.Split(ns, ".")[0]] {
			continue
		}
		meta, err := trivyrego.MetadataFromAnnotations(m)
		if err != nil {
			return nil, fmt.Errorf("metadata of trivy check %s: %w", path, err)
		}
		if meta == nil {
			// trivy evaluates an unannotated check's metadata against each
			// input; the pinned bundle has none, and a bundle that brings one
			// must be reviewed before tfscan evaluates it.
			return nil, fmt.Errorf("trivy check %s has no metadata annotations; tfscan evaluates only annotated checks", path)
		}
		if !passes(keep, m, meta) {
			continue
		}
		for _, rule := range enforcedRules(m) {
			pq, err := rego.New(cs.regoOptions("data." + ns + "." + rule)...).PrepareForEval(ctx)
			if err != nil {
				return nil, fmt.Errorf("preparing trivy check %s rule %s: %w", path, rule, err)
			}
			cs.checks = append(cs.checks, preparedCheck{
				namespace: ns,
				rule:      rule,
				selectors: meta.InputOptions.Selectors,
				meta:      meta.ToRule(),
				query:     pq,
			})
		}
	}
	if err := cs.groupChecks(); err != nil {
		return nil, err
	}
	return cs, nil
}

func (cs *checkSet) regoOptions(query string) []func(*rego.Rego) {
	opts := []func(*rego.Rego){rego.Query(query), rego.Compiler(cs.compiler), rego.Store(cs.store)}
	if cs.fastObjByPath {
		opts = append(opts, objByPathBuiltin())
	}
	if cs.secrets != nil {
		opts = append(opts, fastSquealerBuiltin(cs.secrets))
	}
	return opts
}

func passes(filters []func(*ast.Module, *trivyrego.StaticMetadata) bool, m *ast.Module, meta *trivyrego.StaticMetadata) bool {
	for _, f := range filters {
		if !f(m, meta) {
			return false
		}
	}
	return true
}

func moduleNamespace(m *ast.Module) string {
	return strings.TrimPrefix(m.Package.Path.String(), "data.")
}

// enforcedRules are the module's distinct "deny" and "deny_*" rule names, in
// module order: trivy reports every other rule name as neither pass nor fail.
func enforcedRules(m *ast.Module) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range m.Rules {
		name := r.Head.Name.String()
		if seen[name] {
			continue
		}
		seen[name] = true
		if name == "deny" || strings.HasPrefix(name, "deny_") {
			out = append(out, name)
		}
	}
	return out
}

// scan evaluates every applicable check against contents (the adapted
// state's ToRego form) and returns the failed results, each carrying its
// check's rule metadata, as trivy's ScanInput does. Passed results are not
// built: nothing downstream reads them.
func (cs *checkSet) scan(ctx context.Context, contents map[string]any, path string) (scan.Results, error) {
	input, err := regoValue(contents)
	if err != nil {
		// trivy logs this and scans nothing, which would read as "every
		// finding fixed"; a re-verification that cannot run fails closed.
		return nil, fmt.Errorf("trivy input: %w", err)
	}
	checks, key := cs.applicableChecks(contents)
	var results scan.Results
	done := false
	if !cs.eachCheck {
		if q := cs.combined(ctx, key, checks); q != nil {
			results, done = cs.evalCombined(ctx, q, input, contents, path)
		}
	}
	if !done {
		if results, err = cs.evalEach(ctx, checks, input, contents, path); err != nil {
			return nil, err
		}
	}
	return results, nil
}

// regoValue is the value trivy's checks see for x. trivy round-trips its
// input through JSON before handing it to OPA, which made that round trip a
// sixth of a scan; the types ToRego builds (maps, slices, strings, bools,
// ints) are converted directly to what the round trip yields, and anything
// else takes the JSON path. TestRegoValueMatchesRoundTrip holds the two to
// the same value.
func regoValue(x any) (ast.Value, error) {
	switch v := x.(type) {
	case nil:
		return ast.Null{}, nil
	case string:
		if !utf8.ValidString(v) {
			break // encoding/json replaces each invalid byte
		}
		return ast.String(v), nil
	case bool:
		return ast.Boolean(v), nil
	case int:
		return ast.Number(strconv.Itoa(v)), nil
	case map[string]any:
		if v == nil {
			return ast.Null{}, nil
		}
		obj := ast.NewObject()
		for k, e := range v {
			if !utf8.ValidString(k) {
				return viaJSON(x)
			}
			ev, err := regoValue(e)
			if err != nil {
				return nil, err
			}
			obj.Insert(ast.StringTerm(k), ast.NewTerm(ev))
		}
		return obj, nil
	case []any:
		if v == nil {
			return ast.Null{}, nil
		}
		terms := make([]*ast.Term, len(v))
		for i, e := range v {
			ev, err := regoValue(e)
			if err != nil {
				return nil, err
			}
			terms[i] = ast.NewTerm(ev)
		}
		return ast.NewArray(terms...), nil
	}
	return viaJSON(x)
}

// viaJSON is what trivy's round trip makes of one value: encoded, then
// decoded with json.Number into a fresh interface.
func viaJSON(x any) (ast.Value, error) {
	b, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	var v any
	if err := util.UnmarshalJSON(b, &v); err != nil {
		return nil, err
	}
	return ast.InterfaceToValue(v)
}

// applicable is trivy's isPolicyApplicable for source "cloud": no selectors
// means every input; otherwise every selector must be of type cloud and some
// selector's subtype must match a supported provider key of the input.
func (cs *checkSet) applicable(selectors []trivyrego.Selector, contents map[string]any) bool {
	if len(selectors) == 0 {
		return true
	}
	for _, s := range selectors {
		if s.Type != string(types.SourceCloud) {
			return false
		}
	}
	for provider, value := range contents {
		if !cs.providers[provider] {
			continue
		}
		for _, s := range selectors {
			if subtypeMatches(value, provider, s.Subtypes) {
				return true
			}
		}
	}
	return false
}

// subtypeMatches is trivy's checkSubtype: a cloud provider's value maps
// service names to resources; a Kubernetes "kind" is a plain string.
func subtypeMatches(value any, provider string, subtypes []trivyrego.SubType) bool {
	if len(subtypes) == 0 {
		return true
	}
	for _, st := range subtypes {
		switch services := value.(type) {
		case map[string]any:
			if st.Provider != provider {
				continue
			}
			if _, ok := services[st.Service]; ok {
				return true
			}
		case string:
			if strings.EqualFold(services, st.Group) || strings.EqualFold(services, st.Version) || strings.EqualFold(services, st.Kind) {
				return true
			}
		}
	}
	return false
}

// regoCause is one deny result's location, as trivy's regoResult reads it.
type regoCause struct {
	Filepath     string
	Resource     string
	StartLine    int
	EndLine      int
	SourcePrefix string
	Message      string
	Explicit     bool
	Managed      bool
	FSKey        string
	Parent       *regoCause
}

// GetMetadata implements scan.MetadataProvider.
func (r regoCause) GetMetadata() types.Metadata {
	var m types.Metadata
	if !r.Managed {
		m = types.NewUnmanagedMetadata()
	} else {
		rng := types.NewRangeWithFSKey(r.Filepath, r.StartLine, r.EndLine, r.SourcePrefix, r.FSKey, nil)
		if r.Explicit {
			m = types.NewExplicitMetadata(rng, r.Resource)
		} else {
			m = types.NewMetadata(rng, r.Resource)
		}
	}
	if r.Parent != nil {
		return m.WithParent(r.Parent.GetMetadata())
	}
	return m
}

// GetRawValue implements scan.MetadataProvider.
func (regoCause) GetRawValue() any { return nil }

func convertResults(rs rego.ResultSet, contents map[string]any, path, namespace, rule string) scan.Results {
	var results scan.Results
	for _, r := range rs {
		for _, expr := range r.Expressions {
			results = append(results, convertValue(expr.Value, contents, path, namespace, rule)...)
		}
	}
	return results
}

// convertValue is trivy's conversion of one query result: a rule's value,
// a set (array) of deny results or a single one.
func convertValue(value any, contents map[string]any, path, namespace, rule string) scan.Results {
	offset := 0
	if md, ok := contents["__defsec_metadata"].(map[string]any); ok {
		offset, _ = md["offset"].(int)
	}
	values, ok := value.([]any)
	if !ok {
		values = []any{value}
	}
	var results scan.Results
	for _, v := range values {
		c := parseDeny(v)
		if c.Filepath == "" && path != "" {
			c.Filepath = path
		}
		if c.Message == "" {
			c.Message = fmt.Sprintf("Rego check rule: %s.%s", namespace, rule)
		}
		c.StartLine += offset
		c.EndLine += offset
		results.AddRego(c.Message, namespace, rule, nil, c)
	}
	return results
}

// parseDeny reads one element of a deny set: a message, a cause object
// (result.new), or a [message, cause] pair.
func parseDeny(raw any) regoCause {
	c := regoCause{Managed: true}
	switch v := raw.(type) {
	case []any:
		var msg string
		for _, item := range v {
			switch x := item.(type) {
			case map[string]any:
				c = parseCause(x)
			case string:
				msg = x
			}
		}
		c.Message = msg
	case string:
		c.Message = v
	case map[string]any:
		c = parseCause(v)
	default:
		c.Message = "Rego check resulted in DENY"
	}
	return c
}

func parseCause(cause map[string]any) regoCause {
	c := regoCause{Managed: true}
	str := func(k string) (string, bool) {
		v, ok := cause[k]
		if !ok {
			return "", false
		}
		return fmt.Sprintf("%s", v), true
	}
	if s, ok := str("msg"); ok {
		c.Message = s
	}
	if s, ok := str("filepath"); ok {
		c.Filepath = s
	}
	if s, ok := str("fskey"); ok {
		c.FSKey = s
	}
	if s, ok := str("resource"); ok {
		c.Resource = s
	}
	if s, ok := str("startline"); ok {
		c.StartLine, _ = strconv.Atoi(s)
	}
	if s, ok := str("endline"); ok {
		c.EndLine, _ = strconv.Atoi(s)
	}
	if s, ok := str("sourceprefix"); ok {
		c.SourcePrefix = s
	}
	if b, ok := cause["explicit"].(bool); ok {
		c.Explicit = b
	}
	if b, ok := cause["managed"].(bool); ok {
		c.Managed = b
	}
	if p, ok := cause["parent"].(map[string]any); ok {
		parent := parseCause(p)
		c.Parent = &parent
	}
	return c
}
