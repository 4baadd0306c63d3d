package svbench.policypack_test

import rego.v1

import data.svbench.policypack

deployment(ns, image, ro) := {
	"kind": "Deployment",
	"metadata": {"name": "api", "namespace": ns, "labels": {"team": "t", "cost-center": "c"}},
	"spec": {"template": {"spec": {
		"securityContext": {"runAsNonRoot": true},
		"containers": [{"name": "api", "image": image, "securityContext": {"allowPrivilegeEscalation": false, "readOnlyRootFilesystem": ro}}],
	}}},
}

pinned := "registry.internal.example/payments/api@sha256:0000000000000000000000000000000000000000000000000000000000000000"

clauses(obj) := {v.clause | some v in policypack.violations with input as obj}

test_compliant if count(clauses(deployment("payments", pinned, true))) == 0

test_tag_breaks_digest_only_in_payments if {
	clauses(deployment("payments", "registry.internal.example/payments/api:1.0", true)) == {"PAY-DIGEST"}
	clauses(deployment("shop", "registry.internal.example/payments/api:1.0", true)) == set()
}

test_migrate_job_may_write if {
	job := object.union(deployment("payments", pinned, false), {"kind": "Job", "metadata": {"name": "db-migrate"}})
	clauses(job) == set()
	clauses(object.union(job, {"metadata": {"name": "db-schema"}})) == {"PAY-READONLY-FS"}
}
