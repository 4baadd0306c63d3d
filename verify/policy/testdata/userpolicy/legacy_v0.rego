package svbench.terraform

deny[f] {
	some name
	input.resource.aws_s3_bucket[name]
	not input.resource.aws_s3_bucket[name].tags
	f := {"id": "TF_TAGS", "severity": "critical", "msg": sprintf("bucket %s has no tags", [name]), "resource": sprintf("aws_s3_bucket.%s", [name])}
}
