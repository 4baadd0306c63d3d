# Object storage data-classification policy (pack s3-data-tf).
# Input: the file's Terraform configuration; attributes that reference other
# objects hold their source text (aws_s3_bucket.records.id).
package svbench.policypack

import rego.v1

res(t) := object.get(input, ["resource", t], {})

buckets := res("aws_s3_bucket")

v(clause, t, name, msg) := {"clause": clause, "object": sprintf("%s.%s", [t, name]), "msg": msg}

# A configuring resource refers to bucket NAME by reference or literal name.
refers(attr, name) if {
	is_string(attr)
	contains(attr, sprintf("aws_s3_bucket.%s.", [name]))
}

refers(attr, name) if {
	is_string(attr)
	attr == buckets[name].bucket
}

class(name) := object.get(buckets[name], ["tags", "data-class"], "")

public(name) if class(name) == "public"

# --- S3-CLASS-TAG -----------------------------------------------------------------

classes := {"public", "internal", "confidential"}

violations contains v("S3-CLASS-TAG", "aws_s3_bucket", name, sprintf("bucket %s has data-class %q", [name, class(name)])) if {
	some name, _ in buckets
	not classes[class(name)]
}

# --- S3-PUBLIC-ACL ----------------------------------------------------------------

public_acls := {"public-read", "public-read-write", "authenticated-read"}

# [bucket name, canned ACL] for inline and separate ACLs; a set, so a bucket
# configured both ways is judged on every ACL it has.
bucket_acls contains [name, b.acl] if {
	some name, b in buckets
	is_string(b.acl)
}

bucket_acls contains [name, r.acl] if {
	some name, _ in buckets
	some _, r in res("aws_s3_bucket_acl")
	refers(r.bucket, name)
}

acl_allowed(name, "public-read") if public(name)

violations contains v("S3-PUBLIC-ACL", "aws_s3_bucket", name, sprintf("bucket %s (data-class %q) uses the public ACL %q", [name, class(name), acl])) if {
	some [name, acl] in bucket_acls
	public_acls[acl]
	not acl_allowed(name, acl)
}

# --- S3-BLOCK-PUBLIC --------------------------------------------------------------

pab_fields := ["block_public_acls", "block_public_policy", "ignore_public_acls", "restrict_public_buckets"]

fully_blocked(name) if {
	some _, pab in res("aws_s3_bucket_public_access_block")
	refers(pab.bucket, name)
	every f in pab_fields {
		pab[f] == true
	}
}

violations contains v("S3-BLOCK-PUBLIC", "aws_s3_bucket", name, sprintf("bucket %s (data-class %q) has no public access block with all four settings true", [name, class(name)])) if {
	some name, _ in buckets
	not public(name)
	not fully_blocked(name)
}

# --- S3-CONFIDENTIAL-KMS ----------------------------------------------------------

kms_encrypted(name) if {
	some _, sse in res("aws_s3_bucket_server_side_encryption_configuration")
	refers(sse.bucket, name)
	some rule in sse.rule
	some d in rule.apply_server_side_encryption_by_default
	d.sse_algorithm == "aws:kms"
	object.get(d, "kms_master_key_id", "") != ""
}

violations contains v("S3-CONFIDENTIAL-KMS", "aws_s3_bucket", name, sprintf("confidential bucket %s is not encrypted with a customer-managed KMS key", [name])) if {
	some name, _ in buckets
	class(name) == "confidential"
	not kms_encrypted(name)
}

# --- S3-VERSIONING ----------------------------------------------------------------

versioned(name) if {
	some _, ver in res("aws_s3_bucket_versioning")
	refers(ver.bucket, name)
	some c in ver.versioning_configuration
	c.status == "Enabled"
}

versioned(name) if {
	some vb in buckets[name].versioning
	vb.enabled == true
}

violations contains v("S3-VERSIONING", "aws_s3_bucket", name, sprintf("%s bucket %s does not have versioning enabled", [class(name), name])) if {
	some name, _ in buckets
	class(name) in {"internal", "confidential"}
	not versioned(name)
}

# --- S3-OWNER-TAG -----------------------------------------------------------------

violations contains v("S3-OWNER-TAG", "aws_s3_bucket", name, sprintf("bucket %s has owner %q, not an e-mail address", [name, owner])) if {
	some name, b in buckets
	owner := object.get(b, ["tags", "owner"], "")
	not regex.match(`^[^@\s]+@[^@\s]+\.[a-z]+$`, owner)
}
