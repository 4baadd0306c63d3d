# Key management policy (pack kms-keys-tf).
package svbench.policypack

import rego.v1

res(t) := object.get(input, ["resource", t], {})

keys := res("aws_kms_key")

v(clause, name, msg) := {"clause": clause, "object": sprintf("aws_kms_key.%s", [name]), "msg": msg}

ephemeral(k) if k.tags.lifecycle == "ephemeral"

symmetric(k) if object.get(k, "customer_master_key_spec", "SYMMETRIC_DEFAULT") == "SYMMETRIC_DEFAULT"

violations contains v("KMS-ROTATION", name, sprintf("symmetric key %s does not rotate", [name])) if {
	some name, k in keys
	symmetric(k)
	not ephemeral(k)
	object.get(k, "enable_key_rotation", false) != true
}

min_window(k) := 7 if ephemeral(k)

min_window(k) := 30 if not ephemeral(k)

violations contains v("KMS-DELETION-WINDOW", name, sprintf("key %s has deletion window %v, %d required", [name, days, min_window(k)])) if {
	some name, k in keys
	days := object.get(k, "deletion_window_in_days", 0)
	not window_ok(days, min_window(k))
}

window_ok(days, need) if {
	is_number(days)
	days >= need
}

aliased(name, k) if {
	some _, a in res("aws_kms_alias")
	is_string(a.target_key_id)
	contains(a.target_key_id, sprintf("aws_kms_key.%s.", [name]))
	owner := object.get(k, ["tags", "owner"], "")
	owner != ""
	startswith(a.name, sprintf("alias/%s/", [owner]))
}

violations contains v("KMS-ALIAS", name, sprintf("key %s has no alias under alias/<owner>/", [name])) if {
	some name, k in keys
	not aliased(name, k)
}

# The policy is JSON text (jsonencode of a literal is evaluated; a heredoc is
# text). A policy that references variables cannot be decoded and is judged
# by its text instead.
statements(k) := s if {
	doc := json.unmarshal(k.policy)
	s := as_list(doc.Statement)
}

as_list(x) := x if is_array(x)

as_list(x) := [x] if is_object(x)

everyone(p) if p == "*"

everyone(p) if {
	is_object(p)
	some a in as_list_any(p.AWS)
	a == "*"
}

as_list_any(x) := x if is_array(x)

as_list_any(x) := [x] if not is_array(x)

violations contains v("KMS-POLICY-PRINCIPAL", name, sprintf("key %s's policy allows %v to every principal", [name, object.get(st, "Action", "?")])) if {
	some name, k in keys
	some st in statements(k)
	st.Effect == "Allow"
	everyone(st.Principal)
}

violations contains v("KMS-POLICY-PRINCIPAL", name, sprintf("key %s's policy cannot be read and names a wildcard principal", [name])) if {
	some name, k in keys
	is_string(k.policy)
	not statements(k)
	regex.match(`"(AWS|Principal)"\s*[:=]\s*\[?\s*"\*"`, k.policy)
}

violations contains v("KMS-TAGS", name, sprintf("key %s lacks the %q tag", [name, t])) if {
	some name, k in keys
	some t in ["owner", "data-class"]
	object.get(k, ["tags", t], "") == ""
}

violations contains v("KMS-MULTI-REGION", name, sprintf("key %s is multi-region without dr = \"true\"", [name])) if {
	some name, k in keys
	k.multi_region == true
	object.get(k, ["tags", "dr"], "") != "true"
}
