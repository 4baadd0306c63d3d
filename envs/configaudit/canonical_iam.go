package configaudit

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/zclconf/go-cty/cty"
	"github.com/zclconf/go-cty/cty/function"
)

// IAM policies, in aws_iam_policy_document statements and in JSON policy
// strings, are rewritten to what they grant:
//
//   - an action pattern of wildcards alone after the service ("s3:?*",
//     "s3:**") is the service's "s3:*"; "*:*" and "?*" are "*";
//   - an Allow with NotAction grants every action but a few: "*";
//   - an Allow whose patterns match every catalogued action of a service
//     between them ("s3:A*" … "s3:Z*"), more than half of them, or one that
//     lets its holder write its own permissions (collapseEnumerations) is
//     that service's "s3:*" ("*" for IAM's);
//   - an Allow of "*" grants every service's "svc:*" too: the ones the
//     original allowed are listed beside it, so replacing "s3:*" by "*"
//     (or by an Allow of everything but IAM) still allows "s3:*";
//   - a Deny the patch added that is narrower than everything (a
//     condition, a resource list other than "*", NotResource) is left out:
//     scanners take any Deny of an action as overriding an Allow of it, so
//     a Deny on a bucket that does not exist would otherwise silence the
//     finding while granting all it granted.
//
// The original's own statements are never dropped, so nothing it meant
// counts as changed.

// wildcardOnly matches an action name of wildcards with at least one '*'.
var wildcardOnly = regexp.MustCompile(`^[*?]*\*[*?]*$`)

// canonicalAction is the pattern an IAM action pattern grants.
func canonicalAction(a string) string {
	t := strings.TrimSpace(a)
	if wildcardOnly.MatchString(t) {
		return "*"
	}
	svc, name, ok := strings.Cut(t, ":")
	if !ok || !wildcardOnly.MatchString(name) {
		return a
	}
	if wildcardOnly.MatchString(svc) {
		return "*"
	}
	return strings.ToLower(svc) + ":*"
}

// policyAttributes hold IAM policy documents as JSON strings.
var policyAttributes = map[string]bool{"policy": true, "assume_role_policy": true}

// canonicaliseIAM rewrites the IAM statements of pf (see above); orig is the
// original file's attributes, whose statements are kept as they are.
func canonicaliseIAM(pf *hclwrite.File, fns map[string]function.Function, orig map[string]tfAttr) []string {
	origStatements := map[string]bool{}
	granted := map[string]bool{} // the "svc:*" the original allows
	for _, a := range orig {
		if policyAttributes[a.name] && a.status == valueKnown && a.value.Type() == cty.String {
			for _, st := range jsonStatements(a.value.AsString()) {
				origStatements[statementKey(st)] = true
				if e, _ := st["Effect"].(string); strings.EqualFold(e, "allow") {
					for _, act := range anyStrings(st["Action"]) {
						granted[canonicalAction(act)] = true
					}
				}
			}
		}
		if a.name == "effect" && strings.HasSuffix(a.chain, ".statement.effect") {
			origStatements[hclStatementKey(a.siblings)] = true
		}
		if a.name == "actions" && strings.HasSuffix(a.chain, ".statement.actions") && a.status == valueKnown &&
			!strings.Contains(strings.ToLower(a.siblings["effect"]), "deny") {
			acts, _ := stringList(a.value)
			for _, act := range acts {
				granted[canonicalAction(act)] = true
			}
		}
	}
	var services []string
	for g := range granted {
		if strings.HasSuffix(g, ":*") {
			services = append(services, g)
		}
	}
	slices.Sort(services)
	ctx := tfEvalContext(pf, fns)
	var notes []string
	for _, b := range pf.Body().Blocks() {
		if b.Type() == "data" && len(b.Labels()) > 0 && b.Labels()[0] == "aws_iam_policy_document" {
			notes = append(notes, canonicalStatements(b, ctx, origStatements, services)...)
		}
	}
	attrs := map[string]tfAttr{}
	var order []string
	collectTFAttrs(pf.Body(), "", ctx, attrs, &order)
	for _, path := range order {
		a := attrs[path]
		if !policyAttributes[a.name] || a.status != valueKnown || a.value.Type() != cty.String {
			continue
		}
		out, changes := canonicalPolicyJSON(a.value.AsString(), origStatements, services)
		if len(changes) == 0 {
			continue
		}
		a.body.SetAttributeValue(a.name, cty.StringVal(out))
		for _, c := range changes {
			notes = append(notes, path+": "+c)
		}
	}
	return notes
}

// canonicalStatements rewrites the statement blocks of one policy document.
func canonicalStatements(doc *hclwrite.Block, ctx *hcl.EvalContext, origStatements map[string]bool, services []string) []string {
	var notes []string
	label := strings.Join(doc.Labels(), ".")
	for i, st := range doc.Body().Blocks() {
		if st.Type() != "statement" {
			continue
		}
		where := fmt.Sprintf("data.%s.statement[%d]", label, i)
		body := st.Body()
		text := func(name string) (string, bool) {
			a := body.GetAttribute(name)
			if a == nil {
				return "", false
			}
			return strings.TrimSpace(string(a.Expr().BuildTokens(nil).Bytes())), true
		}
		effect := "allow"
		if t, ok := text("effect"); ok {
			v, status := evalTF(t, ctx)
			if status != valueKnown || v.Type() != cty.String {
				continue
			}
			effect = strings.ToLower(v.AsString())
		}
		if effect == "allow" {
			if _, ok := text("not_actions"); ok {
				body.RemoveAttribute("not_actions")
				body.SetAttributeValue("actions", cty.TupleVal([]cty.Value{cty.StringVal("*")}))
				notes = append(notes, where+": an Allow of every action but not_actions grants \"*\"")
			}
		}
		if t, ok := text("actions"); ok {
			if v, status := evalTF(t, ctx); status == valueKnown {
				if acts, ok := stringList(v); ok {
					if canon := grantedActions(acts, effect == "allow", services); !slices.Equal(canon, acts) {
						vals := make([]cty.Value, len(canon))
						for j, a := range canon {
							vals[j] = cty.StringVal(a)
						}
						body.SetAttributeValue("actions", cty.TupleVal(vals))
						notes = append(notes, fmt.Sprintf("%s: actions %s grant %s", where, oneLine(t), strings.Join(canon, ", ")))
					}
				}
			}
		}
		if effect != "deny" {
			continue
		}
		siblings := map[string]string{}
		for name := range body.Attributes() {
			siblings[name], _ = text(name)
		}
		if origStatements[hclStatementKey(siblings)] {
			continue
		}
		narrow := false
		if t, ok := text("resources"); ok {
			v, status := evalTF(t, ctx)
			list, isList := stringList(v)
			narrow = status != valueKnown || !isList || !slices.Equal(list, []string{"*"})
		}
		_, notRes := text("not_resources")
		hasCondition := slices.ContainsFunc(body.Blocks(), func(b *hclwrite.Block) bool { return b.Type() == "condition" })
		if narrow || notRes || hasCondition {
			doc.Body().RemoveBlock(st)
			notes = append(notes, where+": a Deny narrower than every resource overrides no Allow for the scanners: left out")
		}
	}
	return notes
}

// hclStatementKey identifies a statement block by its attributes' text.
func hclStatementKey(siblings map[string]string) string {
	keys := make([]string, 0, len(siblings))
	for k, v := range siblings {
		keys = append(keys, k+"="+strings.Join(strings.Fields(v), " "))
	}
	slices.Sort(keys)
	return "hcl:" + strings.Join(keys, "\n")
}

// stringList reads a string or a list of strings.
func stringList(v cty.Value) ([]string, bool) {
	if v.IsNull() || !v.IsWhollyKnown() {
		return nil, false
	}
	if v.Type() == cty.String {
		return []string{v.AsString()}, true
	}
	if !v.CanIterateElements() {
		return nil, false
	}
	var out []string
	for it := v.ElementIterator(); it.Next(); {
		_, e := it.Element()
		if e.IsNull() || e.Type() != cty.String {
			return nil, false
		}
		out = append(out, e.AsString())
	}
	return out, true
}

// jsonStatements returns a JSON policy's statements (nil if it is none).
func jsonStatements(doc string) []map[string]any {
	var d map[string]any
	if json.Unmarshal([]byte(doc), &d) != nil {
		return nil
	}
	switch st := d["Statement"].(type) {
	case map[string]any:
		return []map[string]any{st}
	case []any:
		var out []map[string]any
		for _, s := range st {
			if m, ok := s.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	return nil
}

func statementKey(st map[string]any) string {
	b, _ := json.Marshal(st) // map keys are sorted
	return "json:" + string(b)
}

// canonicalPolicyJSON rewrites a JSON policy document's statements; no
// changes means doc is returned as it was.
func canonicalPolicyJSON(doc string, origStatements map[string]bool, services []string) (string, []string) {
	var d map[string]any
	if json.Unmarshal([]byte(doc), &d) != nil {
		return doc, nil
	}
	var list []any
	single := false
	switch st := d["Statement"].(type) {
	case map[string]any:
		list, single = []any{st}, true
	case []any:
		list = st
	default:
		return doc, nil
	}
	var changes []string
	var kept []any
	for i, s := range list {
		st, ok := s.(map[string]any)
		if !ok {
			kept = append(kept, s)
			continue
		}
		key := statementKey(st)
		effect, _ := st["Effect"].(string)
		effect = strings.ToLower(effect)
		if _, ok := st["NotAction"]; ok && effect == "allow" {
			delete(st, "NotAction")
			st["Action"] = []any{"*"}
			changes = append(changes, fmt.Sprintf("Statement[%d]: an Allow of every action but NotAction grants \"*\"", i))
		}
		if _, ok := st["Action"]; ok {
			acts := anyStrings(st["Action"])
			if canon := grantedActions(acts, effect == "allow", services); !slices.Equal(canon, acts) {
				list := make([]any, len(canon))
				for j, a := range canon {
					list[j] = a
				}
				st["Action"] = list
				changes = append(changes, fmt.Sprintf("Statement[%d]: Action %s grants %s", i, strings.Join(acts, ", "), strings.Join(canon, ", ")))
			}
		}
		if effect == "deny" && !origStatements[key] {
			_, cond := st["Condition"]
			_, notRes := st["NotResource"]
			all := false
			switch r := st["Resource"].(type) {
			case string:
				all = r == "*"
			case []any:
				all = len(r) == 1 && r[0] == "*"
			}
			if cond || notRes || !all {
				changes = append(changes, fmt.Sprintf("Statement[%d]: a Deny narrower than every resource overrides no Allow for the scanners: left out", i))
				continue
			}
		}
		kept = append(kept, st)
	}
	if len(changes) == 0 {
		return doc, nil
	}
	if single && len(kept) == 1 {
		d["Statement"] = kept[0]
	} else {
		if kept == nil {
			kept = []any{}
		}
		d["Statement"] = kept
	}
	b, err := json.Marshal(d)
	if err != nil {
		return doc, nil
	}
	return string(b), changes
}

// grantedActions is an action list as it grants: each pattern canonical,
// and in an Allow of "*" the "svc:*" the original allowed listed beside it
// (the "*" grants them all).
func grantedActions(actions []string, allow bool, services []string) []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = canonicalAction(a)
	}
	if allow {
		out = collapseEnumerations(out)
	}
	if !allow || !slices.Contains(out, "*") {
		return out
	}
	for _, s := range services {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// anyStrings reads a JSON string or list of strings.
func anyStrings(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		var out []string
		for _, e := range x {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
		return out
	}
	return nil
}
