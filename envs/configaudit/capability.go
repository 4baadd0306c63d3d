package configaudit

// A patch fixes a finding only if the capability the finding names is
// reduced to what the policy allows and no other capability grows, in a
// configuration that is still valid. The scanners judge spellings; the
// canonicalisers (canonical*.go) rewrite meanings into the spellings they
// judge; what no spelling captures is judged here, on the patched file
// with suppressions removed, against the original:
//
//   - validity (capability_valid.go): new problems make the patch
//     destructive;
//   - growth (capability_iam.go, capability_rbac.go): a principal that may
//     do anything it could not do before voids the patch's fix credit and
//     costs as much as one new high-severity finding;
//   - held capabilities (capability_rbac.go): a finding whose capability a
//     subject still holds through another role stays unfixed.
//
// Network exposure needs no separate check: capability_net.go's bound is
// applied by the Terraform canonicaliser, so an open range in any spelling
// is re-reported by the scanners.

// capabilityVerdict is what judging by capability adds to the scanners.
type capabilityVerdict struct {
	invalid []string    // validity problems the patch introduced
	grown   []string    // privileges some principal gains
	held    []Violation // findings whose capability survives
	heldWhy []string
}

func judgeCapability(fixtureType string, original, patched []byte, checkable []Violation) capabilityVerdict {
	var v capabilityVerdict
	v.invalid = newValidityProblems(fixtureType, original, patched)
	if len(v.invalid) > 0 {
		return v
	}
	if fixtureType == FixtureTF {
		v.grown = iamGrowth(original, patched)
		return v
	}
	v.grown = rbacGrowth(original, patched)
	v.held, v.heldWhy = rbacStillHeld(patched, checkable)
	return v
}
