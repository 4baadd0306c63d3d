package svbench.policypack_test

import rego.v1

import data.svbench.policypack

bucket(class) := {"bucket": "b", "tags": {"data-class": class, "owner": "team@example.com"}}

pab := {"bucket": "aws_s3_bucket.b.id", "block_public_acls": true, "block_public_policy": true, "ignore_public_acls": true, "restrict_public_buckets": true}

config(class, acl) := {"resource": {
	"aws_s3_bucket": {"b": bucket(class)},
	"aws_s3_bucket_acl": {"b": {"bucket": "aws_s3_bucket.b.id", "acl": acl}},
	"aws_s3_bucket_public_access_block": {"b": pab},
	"aws_s3_bucket_versioning": {"b": {"bucket": "aws_s3_bucket.b.id", "versioning_configuration": [{"status": "Enabled"}]}},
}}

clauses(cfg) := {v.clause | some v in policypack.violations with input as cfg}

test_public_bucket_may_be_public_read if clauses(config("public", "public-read")) == set()

test_internal_bucket_may_not if clauses(config("internal", "public-read")) == {"S3-PUBLIC-ACL"}

test_public_read_write_never if clauses(config("public", "public-read-write")) == {"S3-PUBLIC-ACL"}

test_acl_matched_by_literal_bucket_name if {
	cfg := json.patch(config("internal", "private"), [{"op": "add", "path": "/resource/aws_s3_bucket_acl/c", "value": {"bucket": "b", "acl": "authenticated-read"}}])
	clauses(cfg) == {"S3-PUBLIC-ACL"}
}

test_confidential_needs_kms if clauses(config("confidential", "private")) == {"S3-CONFIDENTIAL-KMS"}
