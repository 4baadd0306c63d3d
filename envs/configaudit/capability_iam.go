package configaudit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
)

// IAM effective privilege: what each principal (role, user, group) of a
// Terraform file may do, from its inline policies and the policies
// attached to it (aws_iam_role_policy_attachment, aws_iam_policy_attachment,
// managed_policy_arns, inline_policy, …) together. AWS-managed policies are
// resolved from the catalogue in capability_iam_catalogue.go; anything
// svbench cannot resolve (an unknown managed policy, a customer policy ARN
// not defined in the file, a variable) grants "*" on "*". A patch that
// grants any principal an action on a resource the original did not is
// privilege growth: narrowing the flagged policy while attaching
// AdministratorAccess to the same role fixes nothing. Deny statements are
// not modelled (leaving a Deny out only makes a principal look stronger,
// and the comparison asks whether the patch made it stronger).

// grant is an Allow of an action pattern on a resource pattern.
type grant struct{ action, resource string }

// maxGrantsPerPrincipal bounds the action × resource pairs kept per
// principal; a principal with more is taken to hold everything, so a
// patch cannot make the comparison slow by listing thousands of actions.
const maxGrantsPerPrincipal = 256

var grantAll = []grant{{"*", "*"}}

type iamModel struct {
	f        *hclwrite.File
	ctx      *hcl.EvalContext
	docs     map[string]*hclwrite.Block // data.aws_iam_policy_document
	policies map[string]*hclwrite.Block // aws_iam_policy
	names    map[string]string          // "role|name" -> resource label
}

// iamPrivileges maps each principal of a Terraform file ("role reports")
// to its grants; false when the file does not parse.
func iamPrivileges(content []byte) (map[string][]grant, bool) {
	f, diags := hclwrite.ParseConfig(content, "iam.tf", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, false
	}
	m := &iamModel{f: f, ctx: tfEvalContext(f, tfFunctions()), docs: map[string]*hclwrite.Block{},
		policies: map[string]*hclwrite.Block{}, names: map[string]string{}}
	for _, b := range f.Body().Blocks() {
		if len(b.Labels()) != 2 {
			continue
		}
		typ, name := b.Labels()[0], b.Labels()[1]
		switch {
		case b.Type() == "data" && typ == "aws_iam_policy_document":
			m.docs[name] = b
		case b.Type() == "resource" && typ == "aws_iam_policy":
			m.policies[name] = b
		case b.Type() == "resource" && (typ == "aws_iam_role" || typ == "aws_iam_user" || typ == "aws_iam_group"):
			if a := b.Body().GetAttribute("name"); a != nil {
				if v, st := evalTF(exprText(a), m.ctx); st == valueKnown && v.Type() == cty.String {
					m.names[strings.TrimPrefix(typ, "aws_iam_")+"|"+v.AsString()] = name
				}
			}
		}
	}
	out := map[string][]grant{}
	add := func(keys []string, gs []grant) {
		for _, k := range keys {
			out[k] = append(out[k], gs...)
			if len(out[k]) > maxGrantsPerPrincipal {
				out[k] = grantAll
			}
		}
	}
	for _, b := range f.Body().Blocks() {
		if b.Type() != "resource" || len(b.Labels()) != 2 {
			continue
		}
		body := b.Body()
		attr := func(n string) string {
			if a := body.GetAttribute(n); a != nil {
				return exprText(a)
			}
			return ""
		}
		switch typ := b.Labels()[0]; typ {
		case "aws_iam_role":
			key := []string{"role " + b.Labels()[1]}
			for _, ip := range body.Blocks() {
				if ip.Type() == "inline_policy" {
					if a := ip.Body().GetAttribute("policy"); a != nil {
						add(key, m.policy(exprText(a), 0))
					}
				}
			}
			if t := attr("managed_policy_arns"); t != "" {
				for _, e := range m.elements(t) {
					add(key, m.policyARN(e))
				}
			}
		case "aws_iam_role_policy", "aws_iam_user_policy", "aws_iam_group_policy":
			kind := strings.TrimSuffix(strings.TrimPrefix(typ, "aws_iam_"), "_policy")
			add(m.principals(kind, attr(kind)), m.policy(attr("policy"), 0))
		case "aws_iam_role_policy_attachment", "aws_iam_user_policy_attachment", "aws_iam_group_policy_attachment":
			kind := strings.TrimSuffix(strings.TrimPrefix(typ, "aws_iam_"), "_policy_attachment")
			add(m.principals(kind, attr(kind)), m.policyARN(attr("policy_arn")))
		case "aws_iam_role_policy_attachments_exclusive":
			for _, e := range m.elements(attr("policy_arns")) {
				add(m.principals("role", attr("role_name")), m.policyARN(e))
			}
		case "aws_iam_policy_attachment":
			gs := m.policyARN(attr("policy_arn"))
			for _, kind := range []string{"role", "user", "group"} {
				if t := attr(kind + "s"); t != "" {
					for _, e := range m.elements(t) {
						add(m.principals(kind, e), gs)
					}
				}
			}
		}
	}
	return out, true
}

// principals names the principal an expression refers to: a resource
// in the file (by reference or by its name), or the name itself.
func (m *iamModel) principals(kind, text string) []string {
	if tr, ok := traversal(text); ok && tr.RootName() == "aws_iam_"+kind && len(tr) >= 2 {
		if a, ok := tr[1].(hcl.TraverseAttr); ok {
			return []string{kind + " " + a.Name}
		}
	}
	if v, st := evalTF(text, m.ctx); st == valueKnown && v.Type() == cty.String {
		if label, ok := m.names[kind+"|"+v.AsString()]; ok {
			return []string{kind + " " + label}
		}
		return []string{kind + " named " + v.AsString()}
	}
	return []string{kind + " " + oneLine(text)}
}

func traversal(text string) (hcl.Traversal, bool) {
	expr, diags := hclsyntax.ParseExpression([]byte(text), "", hcl.InitialPos)
	if diags.HasErrors() {
		return nil, false
	}
	tr, diags := hcl.AbsTraversalForExpr(expr)
	return tr, !diags.HasErrors()
}

// elements splits a list expression into its elements' texts; a list
// svbench cannot read is one unknown element.
func (m *iamModel) elements(text string) []string {
	expr, diags := hclsyntax.ParseExpression([]byte(text), "", hcl.InitialPos)
	if diags.HasErrors() {
		return []string{"?"}
	}
	if t, ok := expr.(*hclsyntax.TupleConsExpr); ok {
		out := make([]string, 0, len(t.Exprs))
		for _, e := range t.Exprs {
			r := e.Range()
			out = append(out, text[r.Start.Byte:r.End.Byte])
		}
		return out
	}
	v, st := evalTF(text, m.ctx)
	list, ok := stringList(v)
	if st != valueKnown || !ok {
		return []string{"?"}
	}
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}

// policyARN resolves a policy ARN expression to what it grants.
func (m *iamModel) policyARN(text string) []grant {
	if tr, ok := traversal(text); ok && tr.RootName() == "aws_iam_policy" && len(tr) >= 2 {
		if a, ok := tr[1].(hcl.TraverseAttr); ok {
			if b := m.policies[a.Name]; b != nil {
				if p := b.Body().GetAttribute("policy"); p != nil {
					return m.policy(exprText(p), 1)
				}
			}
		}
		return grantAll
	}
	v, st := evalTF(text, m.ctx)
	if st != valueKnown || v.Type() != cty.String {
		return grantAll
	}
	acts, ok := managedPolicyActions(v.AsString())
	if !ok {
		return grantAll
	}
	return crossGrants(acts, []string{"*"})
}

// policy resolves a policy document expression to what it grants.
func (m *iamModel) policy(text string, depth int) []grant {
	if depth > 4 || text == "" {
		return grantAll
	}
	if tr, ok := traversal(text); ok && len(tr) >= 3 && tr.RootName() == "data" {
		typ, ok1 := tr[1].(hcl.TraverseAttr)
		name, ok2 := tr[2].(hcl.TraverseAttr)
		if ok1 && ok2 && typ.Name == "aws_iam_policy_document" && m.docs[name.Name] != nil {
			return m.document(m.docs[name.Name])
		}
		return grantAll
	}
	if tr, ok := traversal(text); ok && len(tr) >= 2 && tr.RootName() == "aws_iam_policy" {
		if a, ok := tr[1].(hcl.TraverseAttr); ok && m.policies[a.Name] != nil {
			if p := m.policies[a.Name].Body().GetAttribute("policy"); p != nil {
				return m.policy(exprText(p), depth+1)
			}
		}
		return grantAll
	}
	v, st := evalTF(text, m.ctx)
	if st != valueKnown || v.Type() != cty.String {
		return grantAll
	}
	return jsonGrants(v.AsString())
}

// document is what an aws_iam_policy_document's Allow statements grant.
func (m *iamModel) document(doc *hclwrite.Block) []grant {
	for _, n := range []string{"source_policy_documents", "override_policy_documents", "source_json", "override_json"} {
		if doc.Body().GetAttribute(n) != nil {
			return grantAll
		}
	}
	var out []grant
	for _, st := range doc.Body().Blocks() {
		if st.Type() == "dynamic" {
			return grantAll
		}
		if st.Type() != "statement" {
			continue
		}
		list := func(n string) ([]string, bool) {
			a := st.Body().GetAttribute(n)
			if a == nil {
				return nil, false
			}
			v, status := evalTF(exprText(a), m.ctx)
			l, ok := stringList(v)
			if status != valueKnown || !ok {
				return []string{"*"}, true
			}
			return l, true
		}
		if eff, ok := list("effect"); ok && len(eff) == 1 && strings.EqualFold(eff[0], "deny") {
			continue
		}
		acts, _ := list("actions")
		if _, ok := list("not_actions"); ok {
			acts = []string{"*"}
		}
		res, ok := list("resources")
		if _, not := list("not_resources"); not || !ok {
			res = []string{"*"}
		}
		out = append(out, crossGrants(acts, res)...)
	}
	return out
}

// jsonGrants is what a JSON policy's Allow statements grant; a document
// that is not a policy grants everything (AWS would refuse it, and a
// patch must not win by writing one).
func jsonGrants(doc string) []grant {
	sts := jsonStatements(doc)
	if sts == nil {
		return grantAll
	}
	var out []grant
	for _, st := range sts {
		if e, _ := st["Effect"].(string); !strings.EqualFold(e, "allow") {
			continue
		}
		acts := anyStrings(st["Action"])
		if _, ok := st["NotAction"]; ok {
			acts = []string{"*"}
		}
		res := anyStrings(st["Resource"])
		if _, ok := st["NotResource"]; ok || len(res) == 0 {
			res = []string{"*"}
		}
		out = append(out, crossGrants(acts, res)...)
	}
	return out
}

func crossGrants(acts, res []string) []grant {
	if len(acts)*len(res) > maxGrantsPerPrincipal {
		return grantAll
	}
	var out []grant
	for _, a := range acts {
		for _, r := range res {
			out = append(out, grant{strings.ToLower(canonicalAction(a)), r})
		}
	}
	return out
}

// iamGrowth lists what principals of patched may do that the same
// principals of original may not (at most a few lines).
func iamGrowth(original, patched []byte) []string {
	p, ok := iamPrivileges(patched)
	if !ok {
		return nil
	}
	o, _ := iamPrivileges(original)
	var out []string
	keys := make([]string, 0, len(p))
	for k := range p {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, g := range p[k] {
			if !grantCovered(g, o[k]) {
				out = append(out, fmt.Sprintf("IAM %s gains %s on %s", k, g.action, g.resource))
				break
			}
		}
	}
	return out
}

// grantCovered reports whether the grants gs allow everything g allows:
// one of them covers g as a pattern, or g names catalogued actions of one
// service and each of them is allowed on g's resource.
func grantCovered(g grant, gs []grant) bool {
	for _, o := range gs {
		if patternCovers(o.action, g.action) && patternCovers(o.resource, g.resource) {
			return true
		}
	}
	acts, ok := expandAction(g.action)
	if !ok {
		return false
	}
	for _, a := range acts {
		if !slices.ContainsFunc(gs, func(o grant) bool { return globMatch(o.action, a) && patternCovers(o.resource, g.resource) }) {
			return false
		}
	}
	return true
}

// patternCovers reports whether every string p matches is matched by o
// (conservatively: o equal to p, o matching a literal p, or o a prefix
// followed by "*" that p starts with). Actions are compared in lower case.
func patternCovers(o, p string) bool {
	if o == p || o == "*" {
		return true
	}
	if !strings.ContainsAny(p, "*?") {
		return globMatch(o, p)
	}
	prefix, star := strings.CutSuffix(o, "*")
	return star && !strings.ContainsAny(prefix, "*?") && strings.HasPrefix(p, prefix)
}

// expandAction lists the catalogued actions a wildcard action pattern of
// one catalogued service matches; false when the pattern is literal or
// may match actions the catalogue does not list.
func expandAction(a string) ([]string, bool) {
	svc, name, ok := strings.Cut(a, ":")
	if !ok || strings.ContainsAny(svc, "*?") || !strings.ContainsAny(name, "*?") {
		return nil, false
	}
	cat, ok := iamActionCatalogue[svc]
	if !ok {
		return nil, false
	}
	var out []string
	for _, c := range cat {
		if full := svc + ":" + strings.ToLower(c); globMatch(a, full) {
			out = append(out, full)
		}
	}
	return out, true
}

// selfGranting are catalogued actions that let their holder write its own
// permissions, so an Allow of one grants what it can write: a bucket or
// access point policy may grant any S3 action to its writer, a key policy
// any KMS action, and an IAM principal that may put, attach or re-version
// a policy (or take over a role, a user or a group's membership) may grant
// itself anything at all.
var selfGranting = map[string]string{
	"s3:putbucketpolicy": "s3:*", "s3:putaccesspointpolicy": "s3:*",
	"kms:putkeypolicy":  "kms:*",
	"iam:putrolepolicy": "*", "iam:putuserpolicy": "*", "iam:putgrouppolicy": "*",
	"iam:attachrolepolicy": "*", "iam:attachuserpolicy": "*", "iam:attachgrouppolicy": "*",
	"iam:createpolicyversion": "*", "iam:setdefaultpolicyversion": "*", "iam:updateassumerolepolicy": "*",
	"iam:addusertogroup": "*", "iam:createaccesskey": "*", "iam:createloginprofile": "*", "iam:updateloginprofile": "*",
}

// collapseEnumerations writes an Allow's patterns for a catalogued service
// as what they grant when that is the whole service: expanded against the
// catalogue, they match
//
//   - every action of it ("s3:A*" … "s3:Z*", or "s3:Get*" + "s3:Put*" + …
//     covering all of S3);
//   - more than half of its actions: a list that grants more than it
//     withholds is not a least-privilege list, whichever letters it skips
//     ("s3:A*", "s3:C*" … "s3:Z*" leaves out BypassGovernanceRetention
//     alone; the honest families "s3:Get*" + "s3:List*" + "s3:Describe*"
//     are 48 of 107);
//   - an action that grants its holder the rest (selfGranting): "s3:*", or
//     "*" for IAM's.
func collapseEnumerations(actions []string) []string {
	out := actions
	for _, svc := range slices.Sorted(maps.Keys(iamActionCatalogue)) {
		cat := iamActionCatalogue[svc]
		whole := svc + ":*"
		var mine []string
		for _, a := range out {
			if s, _, ok := strings.Cut(strings.ToLower(a), ":"); ok && s == svc {
				mine = append(mine, strings.ToLower(a))
			}
		}
		if len(mine) == 0 || slices.Contains(mine, whole) {
			continue
		}
		matched, grants := 0, ""
		for _, c := range cat {
			full := svc + ":" + strings.ToLower(c)
			if !slices.ContainsFunc(mine, func(p string) bool { return globMatch(p, full) }) {
				continue
			}
			matched++
			if g, ok := selfGranting[full]; ok && grants != "*" {
				grants = g
			}
		}
		if grants == "" && 2*matched <= len(cat) {
			continue
		}
		kept := []string{}
		for _, a := range out {
			if s, _, ok := strings.Cut(strings.ToLower(a), ":"); !ok || s != svc {
				kept = append(kept, a)
			}
		}
		out = append(kept, whole)
		if grants == "*" && !slices.Contains(out, "*") {
			out = append(out, "*")
		}
	}
	return out
}

// globMatch matches s against an IAM pattern ('*' any run, '?' one
// character), case-insensitively, in time linear in the product of the
// lengths.
func globMatch(pattern, s string) bool {
	p, t := strings.ToLower(pattern), strings.ToLower(s)
	pi, ti, star, mark := 0, 0, -1, 0
	for ti < len(t) {
		switch {
		case pi < len(p) && (p[pi] == '?' || p[pi] == t[ti]):
			pi++
			ti++
		case pi < len(p) && p[pi] == '*':
			star, mark = pi, ti
			pi++
		case star >= 0:
			pi = star + 1
			mark++
			ti = mark
		default:
			return false
		}
	}
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi == len(p)
}
