// Package policypack loads, validates and evaluates organisation-policy packs
// for E2's policy condition (issue #11, part 3), and generates rows whose
// ground truth is decided by executing each pack's hidden Rego.
//
// A pack is a directory:
//
//   - policy.md — the document the model sees: a "# Title" line and 5–25
//     numbered clauses written as "N. [CLAUSE-ID] plain-English text"
//     (indented lines continue a clause; other prose is allowed);
//   - pack.json — hidden metadata: id, title, fixture_type ("k8s" or
//     "terraform") and, per clause, its type (requirement, exception,
//     scanner-overlap), severity and the scanner ids it overlaps or excepts;
//   - *.rego — the implementation, never shown to the model: package
//     svbench.policypack (helpers may live in svbench.policypack.*) with a
//     partial set rule violations whose members are objects
//     {"clause": CLAUSE-ID, "object": "Kind/namespace/name" | "TYPE.NAME",
//     "msg": string}; input is one Kubernetes object per evaluation, or the
//     Terraform configuration of the file as verify/policy builds it;
//   - *_test.rego — optional OPA unit tests, run when the pack is loaded;
//   - generator.json and bases/ — optional compliant base configurations
//     and text mutations, from which rows are generated and which the loader
//     checks by execution (every mutation must produce exactly the clauses
//     it declares).
//
// Loading fails with an error naming the file and line for Rego that does
// not compile, clauses no rule can produce, rules producing clauses the
// document does not define, policy.md/pack.json disagreements, duplicate
// ids, a bad fixture type and oversized files.
package policypack
