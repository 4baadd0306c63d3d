# Network exposure policy (pack network-edge-tf).
package svbench.policypack

import rego.v1

res(t) := object.get(input, ["resource", t], {})

groups := res("aws_security_group")

v(clause, obj, msg) := {"clause": clause, "object": obj, "msg": msg}

# Every rule as {group, object, dir, from, to, protocol, cidrs, description};
# group is the security group's resource name when it can be resolved.
rules contains r if {
	some name, sg in groups
	some dir in ["ingress", "egress"]
	some i, b in object.get(sg, dir, [])
	r := rule(name, sprintf("aws_security_group.%s", [name]), dir, b)
}

rules contains r if {
	some name, b in res("aws_security_group_rule")
	dir := b.type
	r := rule(rule_group(b), sprintf("aws_security_group_rule.%s", [name]), dir, b)
}

rule_group(b) := g if {
	some g, _ in groups
	contains(b.security_group_id, sprintf("aws_security_group.%s.", [g]))
} else := ""

rule(g, obj, dir, b) := {
	"group": g, "object": obj, "dir": dir,
	"from": object.get(b, "from_port", 0), "to": object.get(b, "to_port", 0),
	"protocol": sprintf("%v", [object.get(b, "protocol", "-1")]),
	"cidrs": array.concat(list(object.get(b, "cidr_blocks", [])), list(object.get(b, "ipv6_cidr_blocks", []))),
	"description": object.get(b, "description", ""),
}

list(x) := x if is_array(x)

list(x) := [x] if not is_array(x)

private_ranges := ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"]

private(cidr) if {
	some p in private_ranges
	net.cidr_contains(p, cidr)
}

# Anything that is not provably private counts as internet, including text
# that is not a CIDR (a variable reference): fail closed.
internet(cidr) if not private(cidr)

https_only(r) if {
	r.protocol in {"tcp", "6"}
	r.from == 443
	r.to == 443
}

edge(g) if groups[g].tags.tier == "edge"

violations contains v("NET-PUBLIC-INGRESS", r.object, sprintf("ingress %v-%v/%s from %s", [r.from, r.to, r.protocol, cidr])) if {
	some r in rules
	r.dir == "ingress"
	some cidr in r.cidrs
	internet(cidr)
	not public_ok(r)
}

public_ok(r) if {
	https_only(r)
	edge(r.group)
}

all_ports(r) if r.protocol in {"-1", "all"}

covers(r, port) if all_ports(r)

covers(r, port) if {
	not all_ports(r)
	r.from <= port
	port <= r.to
}

violations contains v("NET-ADMIN-PORTS", r.object, sprintf("ingress %v-%v opens port %d to %s", [r.from, r.to, port, cidr])) if {
	some r in rules
	r.dir == "ingress"
	some port in [22, 3389]
	covers(r, port)
	some cidr in r.cidrs
	not vpn(cidr)
}

vpn(cidr) if net.cidr_contains("10.0.0.0/8", cidr)

violations contains v("NET-EGRESS", r.object, sprintf("egress %v-%v/%s to %s", [r.from, r.to, r.protocol, cidr])) if {
	some r in rules
	r.dir == "egress"
	some cidr in r.cidrs
	internet(cidr)
	not https_only(r)
}

violations contains v("NET-RULE-DESCRIPTION", r.object, sprintf("%s rule %v-%v has no description", [r.dir, r.from, r.to])) if {
	some r in rules
	r.description == ""
}

tiers := {"edge", "app", "data"}

violations contains v("NET-GROUP-TAGS", sprintf("aws_security_group.%s", [name]), sprintf("security group %s lacks an owner tag", [name])) if {
	some name, sg in groups
	object.get(sg, ["tags", "owner"], "") == ""
}

violations contains v("NET-GROUP-TAGS", sprintf("aws_security_group.%s", [name]), sprintf("security group %s has tier %q", [name, object.get(sg, ["tags", "tier"], "")])) if {
	some name, sg in groups
	not tiers[object.get(sg, ["tags", "tier"], "")]
}

violations contains v("NET-GROUP-DESCRIPTION", sprintf("aws_security_group.%s", [name]), sprintf("security group %s has no description of its own", [name])) if {
	some name, sg in groups
	object.get(sg, "description", "Managed by Terraform") in {"", "Managed by Terraform"}
}
