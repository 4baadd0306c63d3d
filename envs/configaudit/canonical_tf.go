package configaudit

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/aquasecurity/trivy/pkg/iac/scanners/terraform/parser"
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/svbench/svbench/base/clip"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// Terraform's meaning is what its expressions evaluate to; trivy's checks
// match literal values. Before a patched Terraform file is re-verified:
//
//   - an attribute the patch changed whose value svbench can evaluate
//     (literals, variables with defaults, locals, terraform_data inputs and
//     outputs, a bounded set of Terraform's own functions) is written as
//     that literal value, so `cidrsubnet("0.0.0.0/0", 0, 0)` is "0.0.0.0/0"
//     and `terraform_data.x.output` is the input it holds;
//   - an attribute whose value cannot be known here (a variable without a
//     default, a data source, a module output, a function svbench does not
//     evaluate or that reads files or the clock) is unsafe for the finding
//     it would hide: it gets the original's value back, or is removed when
//     the original did not set it. References to managed resources, `each`,
//     `count` and `self` are left alone: they are how real fixes wire a KMS
//     key or a log bucket in; but in a security setting (securitySetting) a
//     managed resource's attribute is the argument the file gives it, and
//     one that resolves to nothing here is unknowable (evalSetting);
//   - a set of network ranges that admits more public address space than
//     the task needs (capability_net.go: a prefix wider than a site, a /24
//     or a /48, or than the original's own public blocks; 256 sites
//     together), an Azure service tag other than the
//     customer's own network (Internet, AzureCloud, Any), or a prefix list
//     that holds such a range or cannot be resolved in the file, is the
//     open range trivy recognises ("0.0.0.0/0", "::/0", Azure's "*").

// cidrAttributes hold network ranges in the providers the corpus uses.
var cidrAttributes = map[string]bool{
	"cidr_blocks": true, "ipv6_cidr_blocks": true, "cidr_block": true, "ipv6_cidr_block": true,
	"cidr_ipv4": true, "cidr_ipv6": true, "public_access_cidrs": true,
	"source_ranges": true, "destination_ranges": true,
	"source_address_prefix": true, "source_address_prefixes": true,
	"destination_address_prefix": true, "destination_address_prefixes": true,
	"ip_rules": true, "ip_range_filter": true,
}

// evaluableFunctions are the Terraform functions svbench evaluates: their
// output is no larger than a small multiple of their input. Anything else
// (files, the clock, random values, and functions whose output a patch can
// make huge: range, format widths, setproduct, replace chains) is unknown
// here, so an attribute that calls one is judged by the original's value.
var evaluableFunctions = []string{"lower", "upper", "title", "trimspace", "trim", "trimprefix",
	"trimsuffix", "chomp", "tostring", "tonumber", "tobool", "tolist", "toset", "tomap",
	"concat", "distinct", "flatten", "compact", "coalesce", "coalescelist", "element", "lookup",
	"merge", "try", "can", "length", "contains", "join", "split", "keys", "values", "min", "max",
	"abs", "ceil", "floor", "jsonencode", "jsondecode", "cidrsubnet", "cidrsubnets", "cidrhost",
	"cidrnetmask", "one", "alltrue", "anytrue", "startswith", "endswith", "substr"}

// maxEvaluatedBytes bounds a value svbench keeps from evaluating a patched
// file (a variable default, a local, an attribute): locals that double one
// another would otherwise grow exponentially.
const maxEvaluatedBytes = 4096

func tfFunctions() map[string]function.Function {
	all := parser.Functions(fstest.MapFS{}, ".")
	fns := make(map[string]function.Function, len(evaluableFunctions))
	for _, n := range evaluableFunctions {
		if fn, ok := all[n]; ok {
			fns[n] = fn
		}
	}
	return fns
}

// valueSize approximates a value's encoded size, stopping early past the
// bound.
func valueSize(v cty.Value) int {
	if v.IsNull() || !v.IsKnown() {
		return 4
	}
	ty := v.Type()
	switch {
	case ty == cty.String:
		return len(v.AsString()) + 2
	case ty.IsPrimitiveType():
		return 8
	case v.CanIterateElements():
		n := 2
		for it := v.ElementIterator(); it.Next() && n <= maxEvaluatedBytes; {
			k, e := it.Element()
			n += valueSize(e) + 1
			if ty.IsMapType() || ty.IsObjectType() {
				n += valueSize(k)
			}
		}
		return n
	}
	return 8
}

// tfAttr is one attribute of a resource-like block, addressed by the
// block path and the attribute name.
type tfAttr struct {
	body *hclwrite.Body
	// chain is the path without sibling indices; siblings holds the text
	// of the other attributes of the same block. Together they match a
	// patched attribute with its original when the patch reorders blocks.
	chain    string
	siblings map[string]string
	name     string
	text     string
	value    cty.Value
	status   valueStatus
}

type valueStatus int

const (
	valueKnown      valueStatus = iota // evaluated to a wholly known value
	valueReference                     // depends on managed resources, each, count or self
	valueUnknowable                    // variables without defaults, data sources, unknown functions
)

// canonicaliseTF rewrites patched (see above) given the original; the notes
// say what was rewritten. A file that does not parse is returned unchanged:
// the structure check refuses it.
func canonicaliseTF(original, patched []byte) ([]byte, []string) {
	fns := tfFunctions()
	origFile, diags := hclwrite.ParseConfig(original, "original.tf", hcl.InitialPos)
	if diags.HasErrors() {
		origFile = nil
	}
	pf, diags := hclwrite.ParseConfig(patched, "patched.tf", hcl.InitialPos)
	if diags.HasErrors() {
		return patched, nil
	}
	origAttrs := map[string]tfAttr{}
	if origFile != nil {
		octx := tfEvalContext(origFile, fns)
		collectTFAttrs(origFile.Body(), "", octx, origAttrs, nil)
		settleSettings(origAttrs, origFile, octx)
	}
	need := needOf(origAttrs)
	pctx := tfEvalContext(pf, fns)
	var order []string
	attrs := map[string]tfAttr{}
	collectTFAttrs(pf.Body(), "", pctx, attrs, &order)
	settleSettings(attrs, pf, pctx)
	var notes []string
	for _, path := range order {
		a := attrs[path]
		o, had := matchOriginal(origAttrs, path, a)
		changed := !had || o.text != a.text || (a.status == valueKnown && o.status == valueKnown && !o.value.RawEquals(a.value)) || o.status != a.status
		switch {
		case changed && a.status == valueUnknowable:
			if had && o.status == valueKnown {
				a.body.SetAttributeValue(a.name, o.value)
				notes = append(notes, fmt.Sprintf("%s = %s cannot be evaluated here: the original value stands", path, oneLine(a.text)))
			} else if had {
				a.body.SetAttributeRaw(a.name, rawTokens(o.text))
				notes = append(notes, fmt.Sprintf("%s = %s cannot be evaluated here: the original expression stands", path, oneLine(a.text)))
			} else {
				a.body.RemoveAttribute(a.name)
				notes = append(notes, fmt.Sprintf("%s = %s cannot be evaluated here: treated as unset", path, oneLine(a.text)))
			}
			continue
		case a.status != valueKnown:
			continue
		}
		v := a.value
		lit := func(v cty.Value) string { return oneLine(string(hclwrite.TokensForValue(v).Bytes())) }
		if open, ok := openRange(a.name, v, need); ok && cidrAttributes[a.name] && !v.RawEquals(open) {
			notes = append(notes, fmt.Sprintf("%s = %s admits more public address space than the file's own networks need: %s", path, oneLine(a.text), lit(open)))
			a.body.SetAttributeValue(a.name, open)
			continue
		}
		if changed && !isLiteral(a.text) {
			notes = append(notes, fmt.Sprintf("%s = %s evaluates to %s", path, oneLine(a.text), lit(v)))
			a.body.SetAttributeValue(a.name, v)
		}
	}
	notes = append(notes, openPrefixLists(pf, fns, need)...)
	notes = append(notes, openUnions(pf, fns, need)...)
	notes = append(notes, canonicaliseIAM(pf, fns, origAttrs)...)
	if len(notes) == 0 {
		return patched, nil
	}
	return pf.Bytes(), notes
}

// oneLine is s with its white space collapsed, cut to a note's width.
func oneLine(s string) string {
	return clip.Within(strings.Join(strings.Fields(s), " "), 80, clip.Ellipsis)
}

func rawTokens(text string) hclwrite.Tokens {
	f, diags := hclwrite.ParseConfig([]byte("x = "+text+"\n"), "", hcl.InitialPos)
	if diags.HasErrors() {
		return hclwrite.TokensForValue(cty.NullVal(cty.DynamicPseudoType))
	}
	return f.Body().GetAttribute("x").Expr().BuildTokens(nil)
}

// isLiteral reports whether an expression is a plain literal (no
// references, no calls, no templates).
func isLiteral(text string) bool {
	expr, diags := hclsyntax.ParseExpression([]byte(text), "", hcl.InitialPos)
	if diags.HasErrors() {
		return false
	}
	if len(expr.Variables()) > 0 {
		return false
	}
	lit := true
	hclsyntax.VisitAll(expr, func(n hclsyntax.Node) hcl.Diagnostics {
		switch n.(type) {
		case *hclsyntax.FunctionCallExpr, *hclsyntax.ConditionalExpr, *hclsyntax.ForExpr, *hclsyntax.BinaryOpExpr, *hclsyntax.UnaryOpExpr, *hclsyntax.SplatExpr, *hclsyntax.IndexExpr:
			lit = false
		case *hclsyntax.TemplateExpr:
			if !n.(*hclsyntax.TemplateExpr).IsStringLiteral() {
				lit = false
			}
		}
		return nil
	})
	return lit
}

// collectTFAttrs records the attributes of resource, data and module blocks
// (and the blocks nested in them) by path.
func collectTFAttrs(body *hclwrite.Body, prefix string, ctx *hcl.EvalContext, out map[string]tfAttr, order *[]string) {
	seen := map[string]int{}
	for _, b := range body.Blocks() {
		if prefix == "" && b.Type() != "resource" && b.Type() != "data" && b.Type() != "module" {
			continue
		}
		key := b.Type()
		if prefix == "" {
			key += "." + strings.Join(b.Labels(), ".")
		} else {
			key = fmt.Sprintf("%s.%s[%d]", prefix, b.Type(), seen[b.Type()])
			seen[b.Type()]++
		}
		names := make([]string, 0, len(b.Body().Attributes()))
		names = slices.Sorted(maps.Keys(b.Body().Attributes()))
		texts := map[string]string{}
		for _, n := range names {
			texts[n] = strings.TrimSpace(string(b.Body().GetAttribute(n).Expr().BuildTokens(nil).Bytes()))
		}
		for _, n := range names {
			a := b.Body().GetAttribute(n)
			text := strings.TrimSpace(string(a.Expr().BuildTokens(nil).Bytes()))
			v, st := evalTF(text, ctx)
			p := key + "." + n
			out[p] = tfAttr{body: b.Body(), chain: blockIndex.ReplaceAllString(key, "") + "." + n, siblings: texts, name: n, text: text, value: v, status: st}
			if order != nil {
				*order = append(*order, p)
			}
		}
		collectTFAttrs(b.Body(), key, ctx, out, order)
	}
}

var blockIndex = regexp.MustCompile(`\[\d+\]`)

// matchOriginal finds the original attribute a patched one stands for: the
// one at the same place in the same kind of block whose block agrees with
// the patched block on the most other attributes (the same index wins a
// tie). A patch that reorders ingress blocks and then makes one port's
// range unknown gets that port's original range back, not its neighbour's.
func matchOriginal(orig map[string]tfAttr, path string, a tfAttr) (tfAttr, bool) {
	best, bestPath, bestScore, found := tfAttr{}, "", -1, false
	for p, o := range orig {
		if o.chain != a.chain {
			continue
		}
		score := 0
		for k, v := range a.siblings {
			if k != a.name && o.siblings[k] == v {
				score += 2
			}
		}
		if o.text == a.text {
			score += 2
		}
		if p == path {
			score++
		}
		if score > bestScore || (score == bestScore && p < bestPath) {
			best, bestPath, bestScore, found = o, p, score, true
		}
	}
	return best, found
}

// evalTF evaluates an expression's text in ctx.
func evalTF(text string, ctx *hcl.EvalContext) (cty.Value, valueStatus) {
	return evalExpr(text, ctx, false)
}

// evalSetting evaluates the value of a security setting (securitySetting)
// in a context from withResources: a reference to a managed resource
// resolves to the argument the file gives that resource, and one that does
// not resolve (a computed attribute, an SSM parameter's value) is
// unknowable rather than a reference, since a setting svbench cannot read
// is not shown to be safe. each, count and self stay references.
func evalSetting(text string, ctx *hcl.EvalContext) (cty.Value, valueStatus) {
	return evalExpr(text, ctx, true)
}

func evalExpr(text string, ctx *hcl.EvalContext, setting bool) (cty.Value, valueStatus) {
	expr, diags := hclsyntax.ParseExpression([]byte(text), "", hcl.InitialPos)
	if diags.HasErrors() {
		return cty.NilVal, valueUnknowable
	}
	reference := false
	for _, tr := range expr.Variables() {
		switch root := tr.RootName(); root {
		case "var", "local", "terraform_data":
			// terraform_data holds the value it is given: its input and
			// output are what the file wrote, evaluated like a local.
			if !resolvable(tr, ctx) {
				return cty.NilVal, valueUnknowable
			}
		case "data", "module", "terraform", "path":
			return cty.NilVal, valueUnknowable
		case "each", "count", "self":
			reference = true
		default:
			// a managed resource
			if !setting {
				reference = true
			} else if !resolvable(tr, ctx) {
				return cty.NilVal, valueUnknowable
			}
		}
	}
	if reference {
		return cty.NilVal, valueReference
	}
	loops := false
	hclsyntax.VisitAll(expr, func(n hclsyntax.Node) hcl.Diagnostics {
		if _, ok := n.(*hclsyntax.ForExpr); ok {
			loops = true
		}
		return nil
	})
	if loops {
		// A for expression over a for expression multiplies sizes: not
		// evaluated here.
		return cty.NilVal, valueUnknowable
	}
	v, diags := expr.Value(ctx)
	if diags.HasErrors() || !v.IsWhollyKnown() || valueSize(v) > maxEvaluatedBytes {
		return cty.NilVal, valueUnknowable
	}
	return v, valueKnown
}

func resolvable(tr hcl.Traversal, ctx *hcl.EvalContext) bool {
	v, diags := tr.TraverseAbs(ctx)
	return !diags.HasErrors() && v.IsWhollyKnown()
}

// tfEvalContext holds the file's variables that have defaults, and the
// locals and terraform_data values (input, and output, which Terraform
// sets to the input) that evaluate from them.
func tfEvalContext(f *hclwrite.File, fns map[string]function.Function) *hcl.EvalContext {
	vars := map[string]cty.Value{}
	var localExprs = map[string]string{}
	dataInputs := map[string]string{}
	for _, b := range f.Body().Blocks() {
		switch b.Type() {
		case "variable":
			if len(b.Labels()) != 1 {
				continue
			}
			def := b.Body().GetAttribute("default")
			if def == nil {
				continue
			}
			expr, diags := hclsyntax.ParseExpression(def.Expr().BuildTokens(nil).Bytes(), "", hcl.InitialPos)
			if diags.HasErrors() {
				continue
			}
			if v, diags := expr.Value(&hcl.EvalContext{Functions: fns}); !diags.HasErrors() && v.IsWhollyKnown() && valueSize(v) <= maxEvaluatedBytes {
				vars[b.Labels()[0]] = v
			}
		case "locals":
			for n, a := range b.Body().Attributes() {
				localExprs[n] = string(a.Expr().BuildTokens(nil).Bytes())
			}
		case "resource":
			// One instance only: with count or for_each the output is
			// indexed, and an index svbench does not follow is unknowable.
			body := b.Body()
			if len(b.Labels()) == 2 && b.Labels()[0] == "terraform_data" && body.GetAttribute("count") == nil && body.GetAttribute("for_each") == nil {
				if in := body.GetAttribute("input"); in != nil {
					dataInputs[b.Labels()[1]] = string(in.Expr().BuildTokens(nil).Bytes())
				}
			}
		}
	}
	ctx := &hcl.EvalContext{Functions: fns, Variables: map[string]cty.Value{
		"var": cty.ObjectVal(vars), "local": cty.EmptyObjectVal, "terraform_data": cty.EmptyObjectVal,
	}}
	locals := map[string]cty.Value{}
	data := map[string]cty.Value{}
	// Locals and terraform_data inputs may read each other in any order; a
	// pass per value settles every chain that has an end.
	for range len(localExprs) + len(dataInputs) + 1 {
		progress := false
		for n, text := range localExprs {
			if _, done := locals[n]; done {
				continue
			}
			if v, st := evalTF(text, ctx); st == valueKnown {
				locals[n] = v
				progress = true
			}
		}
		for n, text := range dataInputs {
			if _, done := data[n]; done {
				continue
			}
			if v, st := evalTF(text, ctx); st == valueKnown {
				data[n] = cty.ObjectVal(map[string]cty.Value{"input": v, "output": v})
				progress = true
			}
		}
		ctx.Variables["local"] = cty.ObjectVal(locals)
		ctx.Variables["terraform_data"] = cty.ObjectVal(data)
		if !progress {
			break
		}
	}
	return ctx
}

// withResources extends ctx with the arguments the file gives its managed
// resources (single instances, top-level attributes whose value is known),
// so that a setting read from another resource (`cidr_blocks =
// [aws_vpc.main.cidr_block]`) is judged by that value. Terraform keeps a
// configured argument as written; an attribute the provider computes (an
// id, an ARN) is absent and does not resolve.
func withResources(f *hclwrite.File, ctx *hcl.EvalContext) *hcl.EvalContext {
	byType := map[string]map[string]cty.Value{}
	for _, b := range f.Body().Blocks() {
		body := b.Body()
		if b.Type() != "resource" || len(b.Labels()) != 2 || b.Labels()[0] == "terraform_data" ||
			body.GetAttribute("count") != nil || body.GetAttribute("for_each") != nil {
			continue
		}
		args := map[string]cty.Value{}
		for n, a := range body.Attributes() {
			if v, st := evalTF(exprText(a), ctx); st == valueKnown {
				args[n] = v
			}
		}
		if byType[b.Labels()[0]] == nil {
			byType[b.Labels()[0]] = map[string]cty.Value{}
		}
		byType[b.Labels()[0]][b.Labels()[1]] = cty.ObjectVal(args)
	}
	out := &hcl.EvalContext{Functions: ctx.Functions, Variables: maps.Clone(ctx.Variables)}
	for typ, rs := range byType {
		if _, taken := out.Variables[typ]; !taken {
			out.Variables[typ] = cty.ObjectVal(rs)
		}
	}
	return out
}

// settingNames are string attributes that scanners compare with a literal
// (an ACL, a token mode, a TLS version, a default action, a member, a
// protocol, an IAM statement's effect and actions). With cidrAttributes and
// every boolean or number tfSchema lists they are the security settings:
// where one of them is written, a literal value is required to judge it.
var settingNames = map[string]bool{
	"acl": true, "http_tokens": true, "http_endpoint": true, "status": true, "min_tls_version": true,
	"container_access_type": true, "default_action": true, "public_access_prevention": true,
	"member": true, "members": true, "access": true, "direction": true, "type": true, "protocol": true,
	"ip_protocol": true, "source_port_range": true, "destination_port_range": true,
	"effect": true, "actions": true, "not_actions": true, "enabled_cluster_log_types": true,
}

// scalarSettings are the attribute names tfSchema types as bool or number.
var scalarSettings = func() map[string]bool {
	out := map[string]bool{}
	for _, attrs := range tfSchema {
		for path, typ := range attrs {
			if typ == tBool || typ == tNum {
				out[path[strings.LastIndexByte(path, '.')+1:]] = true
			}
		}
	}
	return out
}()

func securitySetting(name string) bool {
	return cidrAttributes[name] || settingNames[name] || scalarSettings[name]
}

// settleSettings re-evaluates the security settings that read managed
// resources (see evalSetting). The resources' context is built only for a
// file that has such a setting, which most patched files do not.
func settleSettings(attrs map[string]tfAttr, f *hclwrite.File, ctx *hcl.EvalContext) {
	var rctx *hcl.EvalContext
	for p, a := range attrs {
		if a.status != valueReference || !securitySetting(a.name) {
			continue
		}
		if rctx == nil {
			rctx = withResources(f, ctx)
		}
		a.value, a.status = evalSetting(a.text, rctx)
		attrs[p] = a
	}
}

// openRange returns the open range trivy recognises when v (a string or a
// list of strings) covers at least half of an address family.
func openRange(attr string, v cty.Value, need netNeed) (cty.Value, bool) {
	r, ok := rangesOf(attr, v)
	if !ok {
		return v, false
	}
	open4 := r.open4 || need.tooOpen(r.v4, false)
	open6 := r.open6 || need.tooOpen(r.v6, true)
	if !open4 && !open6 {
		return v, false
	}
	return openValue(attr, v, open4), true
}

// ranges are the network ranges one attribute's value names, by family;
// open4 marks a spelling of "everything" that is no prefix (Azure's "*").
type ranges struct {
	v4, v6 []netip.Prefix
	open4  bool
	open6  bool
}

// rangesOf reads v (a string or a list of strings) as network ranges;
// false when it is no such value.
func rangesOf(attr string, v cty.Value) (ranges, bool) {
	var r ranges
	items, ok := stringList(v)
	if !ok {
		return r, false
	}
	azure := strings.Contains(attr, "address_prefix")
	for _, s := range items {
		s = strings.TrimSpace(s)
		p, ok := parseRange(s)
		switch {
		case ok && !(azure && s == "0.0.0.0"):
		case s == "*":
			r.open4 = true
			continue
		case azure && !internalServiceTags[strings.ToLower(s)]:
			// A service tag (Internet, AzureCloud, Any, …) or the
			// unspecified address: open unless it names the customer's own
			// network.
			r.open4 = true
			continue
		default:
			continue
		}
		if p.Addr().Is4() {
			r.v4 = append(r.v4, p)
		} else {
			r.v6 = append(r.v6, p)
		}
	}
	return r, true
}

// openValue is the open range trivy recognises, in v's shape (a string, a
// set or a list): IPv4's unless only IPv6 is open.
func openValue(attr string, v cty.Value, open4 bool) cty.Value {
	canon := "0.0.0.0/0"
	switch {
	case strings.Contains(attr, "address_prefix"):
		canon = canonicalOpenAzure
	case !open4:
		canon = "::/0"
	}
	if v.Type() == cty.String {
		return cty.StringVal(canon)
	}
	if v.Type().IsSetType() {
		return cty.SetVal([]cty.Value{cty.StringVal(canon)})
	}
	return cty.TupleVal([]cty.Value{cty.StringVal(canon)})
}

// sgReference names the security group a rule resource attaches to.
var sgReference = regexp.MustCompile(`^aws_security_group\.([A-Za-z0-9_-]+)\.id$`)

// rangeGroup is the set of rules whose ranges together decide who can
// reach one thing in one direction: the ingress (or egress) blocks of one
// security group, and the rule resources attached to it; the rules of one
// network security group or network. "" for a range belonging to no group.
func rangeGroup(path string, a tfAttr) string {
	parent := strings.TrimSuffix(path, "."+a.name)
	if i := strings.LastIndexByte(parent, '['); i >= 0 && strings.HasSuffix(parent, "]") {
		block := parent[:i] // resource.aws_security_group.edge.ingress
		j := strings.LastIndexByte(block, '.')
		return block[:j] + "|" + block[j+1:]
	}
	parts := strings.SplitN(parent, ".", 3) // resource, type, name
	if len(parts) != 3 || parts[0] != "resource" {
		return ""
	}
	unquote := func(s string) string { return strings.ToLower(strings.Trim(s, `"`)) }
	direction := unquote(cmp.Or(a.siblings["type"], a.siblings["direction"]))
	switch {
	case strings.Contains(parts[1], "ingress"):
		direction = "ingress"
	case strings.Contains(parts[1], "egress"):
		direction = "egress"
	}
	for _, k := range []string{"security_group_id", "network_security_group_name", "network"} {
		owner, ok := a.siblings[k]
		if !ok {
			continue
		}
		if m := sgReference.FindStringSubmatch(owner); m != nil {
			return "resource.aws_security_group." + m[1] + "|" + direction
		}
		return k + "=" + owner + "|" + direction
	}
	return ""
}

// openUnions rewrites ranges that are open only together: a patch that
// splits 0.0.0.0/0 into four /2s over four ingress blocks, or over rule
// resources attached to the group, leaves each rule under half the
// address space, which no scanner flags. When a group's rules cover half
// an address family or more between them, each rule naming that family is
// written as the open range. An honest restriction names a few small
// ranges and never comes near.
func openUnions(pf *hclwrite.File, fns map[string]function.Function, need netNeed) []string {
	attrs := map[string]tfAttr{}
	var order []string
	collectTFAttrs(pf.Body(), "", tfEvalContext(pf, fns), attrs, &order)
	type member struct {
		path string
		a    tfAttr
		r    ranges
	}
	groups := map[string][]member{}
	var keys []string
	for _, path := range order {
		a := attrs[path]
		if !cidrAttributes[a.name] || a.status != valueKnown {
			continue
		}
		r, ok := rangesOf(a.name, a.value)
		g := rangeGroup(path, a)
		if !ok || g == "" {
			continue
		}
		if _, seen := groups[g]; !seen {
			keys = append(keys, g)
		}
		groups[g] = append(groups[g], member{path, a, r})
	}
	var notes []string
	for _, g := range keys {
		ms := groups[g]
		if len(ms) < 2 {
			continue
		}
		var v4, v6 []netip.Prefix
		for _, m := range ms {
			v4, v6 = append(v4, m.r.v4...), append(v6, m.r.v6...)
		}
		open4, open6 := need.tooOpen(v4, false), need.tooOpen(v6, true)
		if !open4 && !open6 {
			continue
		}
		for _, m := range ms {
			names4, names6 := len(m.r.v4) > 0, len(m.r.v6) > 0
			if !(open4 && names4) && !(open6 && names6) {
				continue
			}
			open := openValue(m.a.name, m.a.value, open4 && names4)
			if m.a.value.RawEquals(open) {
				continue
			}
			m.a.body.SetAttributeValue(m.a.name, open)
			notes = append(notes, fmt.Sprintf("%s = %s: with the other rules of %s it admits more public address space than the file's own networks need: %s",
				m.path, oneLine(m.a.text), strings.ReplaceAll(g, "|", " "), oneLine(string(hclwrite.TokensForValue(open).Bytes()))))
		}
	}
	return notes
}
