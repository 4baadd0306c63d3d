package policypack

import "github.com/svbench/svbench/verify"

// Row is one policy-condition E2 row. It follows E2's row format (id,
// fixture_type "k8s"|"tf", path, content, labels.expected as {id, severity})
// with the clause ids as violation ids, plus the pack and the compliant
// counterpart an oracle can patch towards.
type Row struct {
	ID          string `json:"id"`
	FixtureType string `json:"fixture_type"`
	Path        string `json:"path"`
	Content     string `json:"content"`
	PolicyPack  string `json:"policy_pack"`
	Labels      Labels `json:"labels"`
	// Compliant is the row's configuration before its breaking mutations
	// (exception mutations kept): the pack's Rego reports nothing on it.
	Compliant string  `json:"compliant"`
	Meta      RowMeta `json:"meta"`
}

// Labels are the row's ground truth, decided by executing the pack's Rego.
type Labels struct {
	Mutations []string         `json:"mutations"`
	Expected  []ExpectedClause `json:"expected"`
	// Source is always "policy-rego".
	Source string `json:"source"`
}

// ExpectedClause is a violated clause with the pack's severity for it.
type ExpectedClause struct {
	ID       string          `json:"id"`
	Severity verify.Severity `json:"severity"`
}

// RowMeta describes how the row was built, for reports and splits.
type RowMeta struct {
	Pack     string `json:"pack"`
	Baseline string `json:"baseline"`
	// Group is pack/baseline|sorted mutations: the split unit.
	Group string `json:"group"`
	Seed  int64  `json:"seed"`
	// Clean is true when the row violates nothing.
	Clean bool `json:"clean"`
	// ClauseTypes are the types of the violated clauses (sorted, distinct).
	ClauseTypes []ClauseType `json:"clause_types"`
	// Exception is true when the row uses an exception's allowance: a
	// scanner flags something the policy accepts.
	Exception        bool     `json:"exception"`
	ExceptionClauses []string `json:"exception_clauses,omitempty"`
	// BreakingMutations are the mutations the compliant counterpart lacks.
	BreakingMutations []string `json:"breaking_mutations,omitempty"`
	// ScannerIDs are the scanner findings the row's mutations trigger
	// (declared in generator.json and confirmed by a test).
	ScannerIDs []string `json:"scanner_ids,omitempty"`
	// ScannerOverlap lists violated clauses of type scanner-overlap.
	ScannerOverlap []string `json:"scanner_overlap,omitempty"`
	Source         string   `json:"source"`
}

// RowFixtureType maps a pack's fixture type onto E2's row value.
func RowFixtureType(packType string) string {
	if packType == FixtureTerraform {
		return "tf"
	}
	return "k8s"
}
