# svbench default Terraform policies.
#
# Input: the Terraform configuration of one lint context converted from HCL:
#   {"resource": {TYPE: {NAME: BODY}}, "data": {TYPE: {NAME: BODY}},
#    "variable": {...}, "module": {...}, "provider": {...}, "locals": {...}}
# where BODY maps attribute names to values and nested block types to lists
# of bodies. Attributes that reference other objects (var.x, aws_s3_bucket.b.id)
# cannot be evaluated statically and hold their source text instead.
# Each finding: {"id", "severity", "msg", "resource": "TYPE.NAME"}.
package svbench.terraform

import rego.v1

res(t) := object.get(input, ["resource", t], {})

finding(id, sev, t, name, msg) := {"id": id, "severity": sev, "msg": msg, "resource": sprintf("%s.%s", [t, name])}

# A resource refers to bucket NAME when an attribute's source text names it
# (aws_s3_bucket.NAME.id / .bucket) or holds the bucket's literal name.
refers_to_bucket(attr, name, _) if {
	is_string(attr)
	contains(attr, sprintf("aws_s3_bucket.%s.", [name]))
}

refers_to_bucket(attr, _, bucket) if {
	is_string(attr)
	attr == bucket.bucket
}

# --- S3 ---------------------------------------------------------------------------

deny contains f if {
	some name, bucket in res("aws_s3_bucket")
	not has_public_access_block(name, bucket)
	f := finding("TF_S3_NO_PUBLIC_ACCESS_BLOCK", "high", "aws_s3_bucket", name, sprintf("S3 bucket %s has no aws_s3_bucket_public_access_block; public ACLs and policies are not blocked", [name]))
}

has_public_access_block(name, bucket) if {
	some _, pab in res("aws_s3_bucket_public_access_block")
	refers_to_bucket(pab.bucket, name, bucket)
}

public_acls := {"public-read", "public-read-write", "authenticated-read"}

deny contains f if {
	some t in ["aws_s3_bucket", "aws_s3_bucket_acl"]
	some name, r in res(t)
	public_acls[r.acl]
	f := finding("TF_S3_PUBLIC_ACL", "high", t, name, sprintf("%s.%s sets the public canned ACL %q", [t, name, r.acl]))
}

deny contains f if {
	some name, bucket in res("aws_s3_bucket")
	not bucket.logging
	not has_logging_resource(name, bucket)
	f := finding("TF_S3_NO_LOGGING", "low", "aws_s3_bucket", name, sprintf("S3 bucket %s has access logging disabled", [name]))
}

has_logging_resource(name, bucket) if {
	some _, l in res("aws_s3_bucket_logging")
	refers_to_bucket(l.bucket, name, bucket)
}

# --- security groups ----------------------------------------------------------------

admin_ports := {22, 3389}

open_cidr(r) if {
	some c in object.get(r, "cidr_blocks", [])
	c == "0.0.0.0/0"
}

open_cidr(r) if {
	some c in object.get(r, "ipv6_cidr_blocks", [])
	c == "::/0"
}

open_cidr(r) if r.cidr_ipv4 == "0.0.0.0/0"

open_cidr(r) if r.cidr_ipv6 == "::/0"

covers_admin_port(r) if {
	r.protocol in {"-1", "all", -1}
}

covers_admin_port(r) if {
	some p in admin_ports
	is_number(r.from_port)
	is_number(r.to_port)
	r.from_port <= p
	p <= r.to_port
}

covers_admin_port(r) if {
	not r.from_port
	not r.to_port
	not r.protocol
}

deny contains f if {
	some name, sg in res("aws_security_group")
	some rule in object.get(sg, "ingress", [])
	open_cidr(rule)
	covers_admin_port(rule)
	f := finding("TF_SG_OPEN_ADMIN", "high", "aws_security_group", name, sprintf("security group %s allows SSH/RDP (22/3389) from the whole internet", [name]))
}

deny contains f if {
	some name, rule in res("aws_security_group_rule")
	rule.type == "ingress"
	open_cidr(rule)
	covers_admin_port(rule)
	f := finding("TF_SG_OPEN_ADMIN", "high", "aws_security_group_rule", name, sprintf("security group rule %s allows SSH/RDP (22/3389) from the whole internet", [name]))
}

deny contains f if {
	some name, rule in res("aws_vpc_security_group_ingress_rule")
	open_cidr(rule)
	vpc_rule_ports(rule)
	f := finding("TF_SG_OPEN_ADMIN", "high", "aws_vpc_security_group_ingress_rule", name, sprintf("ingress rule %s allows SSH/RDP (22/3389) from the whole internet", [name]))
}

vpc_rule_ports(r) if r.ip_protocol in {"-1", -1}

vpc_rule_ports(r) if covers_admin_port(r)

# --- IAM ------------------------------------------------------------------------------

iam_policy_types := {"aws_iam_policy", "aws_iam_role_policy", "aws_iam_user_policy", "aws_iam_group_policy"}

as_list(x) := x if is_array(x)

as_list(x) := [x] if not is_array(x)

wildcard_action(a) if a == "*"

wildcard_action(a) if {
	is_string(a)
	endswith(a, ":*")
}

deny contains f if {
	some t in iam_policy_types
	some name, p in res(t)
	is_string(p.policy)
	doc := json.unmarshal(p.policy)
	some st in as_list(doc.Statement)
	object.get(st, "Effect", "Allow") == "Allow"
	some a in as_list(object.get(st, "Action", []))
	wildcard_action(a)
	f := finding("TF_IAM_WILDCARD_ACTION", "high", t, name, sprintf("%s.%s allows the wildcard action %q", [t, name, a]))
}

deny contains f if {
	some name, d in object.get(input, ["data", "aws_iam_policy_document"], {})
	some st in object.get(d, "statement", [])
	object.get(st, "effect", "Allow") == "Allow"
	some a in object.get(st, "actions", [])
	wildcard_action(a)
	f := {"id": "TF_IAM_WILDCARD_ACTION", "severity": "high", "msg": sprintf("policy document %s allows the wildcard action %q", [name, a]), "resource": sprintf("data.aws_iam_policy_document.%s", [name])}
}

# --- databases and disks -----------------------------------------------------------------

deny contains f if {
	some name, db in res("aws_db_instance")
	db.publicly_accessible == true
	f := finding("TF_RDS_PUBLIC", "high", "aws_db_instance", name, sprintf("RDS instance %s is publicly accessible", [name]))
}

deny contains f if {
	some t in ["aws_db_instance", "aws_rds_cluster"]
	some name, db in res(t)
	not db.storage_encrypted == true
	f := finding("TF_RDS_UNENCRYPTED", "high", t, name, sprintf("%s.%s does not set storage_encrypted = true", [t, name]))
}

deny contains f if {
	some name, v in res("aws_ebs_volume")
	not v.encrypted == true
	f := finding("TF_EBS_UNENCRYPTED", "high", "aws_ebs_volume", name, sprintf("EBS volume %s is not encrypted", [name]))
}

# --- GCP and Azure --------------------------------------------------------------------------

deny contains f if {
	some name, b in res("google_storage_bucket")
	not b.uniform_bucket_level_access == true
	f := finding("TF_GCS_UNIFORM_ACCESS_OFF", "medium", "google_storage_bucket", name, sprintf("GCS bucket %s does not enable uniform_bucket_level_access; per-object ACLs stay in force", [name]))
}

deny contains f if {
	some name, sa in res("azurerm_storage_account")
	some attr in ["enable_https_traffic_only", "https_traffic_only_enabled"]
	sa[attr] == false
	f := finding("TF_AZURE_STORAGE_HTTP", "high", "azurerm_storage_account", name, sprintf("storage account %s accepts plain HTTP (%s = false)", [name, attr]))
}
