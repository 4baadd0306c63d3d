package scannercheck

import (
	"slices"
	"testing"

	"github.com/svbench/svbench/envs/configaudit/policypack"
)

// TestScannerMappingIsNotEnough scores, on the mini set, a policy that runs
// the public scanners and maps each finding to the clauses listing its id
// (ClausesForScannerID): the "copy the scanners and map to the nearest
// clause" probe, detection only. Exceptions make it report compliant files
// and requirements make it miss breaches, so its mean F1 must stay well
// below the oracle's 1.0.
func TestScannerMappingIsNotEnough(t *testing.T) {
	if testing.Short() {
		t.Skip("runs kube-linter and trivy on the mini set")
	}
	s := newScanners(t)
	rows, err := policypack.MiniSet()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	byKind := map[string][2]float64{}
	for _, r := range rows {
		p, _ := policypack.Lookup(r.PolicyPack)
		found := s.scan(t, p.FixtureType(), r.Path, r.Content)
		var pred []string
		for id := range found {
			pred = append(pred, p.ClausesForScannerID(id)...)
		}
		slices.Sort(pred)
		pred = slices.Compact(pred)
		var want []string
		for _, e := range r.Labels.Expected {
			want = append(want, e.ID)
		}
		f1 := setF1(pred, want)
		sum += f1
		kind := "breach"
		switch {
		case r.Meta.Clean && r.Meta.Exception:
			kind = "exception-only"
		case r.Meta.Clean:
			kind = "clean"
		case r.Meta.Exception:
			kind = "exception+breach"
		}
		k := byKind[kind]
		byKind[kind] = [2]float64{k[0] + f1, k[1] + 1}
	}
	mean := sum / float64(len(rows))
	for k, v := range byKind {
		t.Logf("%s rows: mean F1 %.3f over %v", k, v[0]/v[1], v[1])
	}
	t.Logf("scanner findings mapped to clauses: mean F1 %.3f over %d rows (oracle 1.000)", mean, len(rows))
	if mean >= 0.6 {
		t.Errorf("mapping scanner findings to clauses reaches mean F1 %.3f; the policy condition must not be solvable that way", mean)
	}
}

// setF1 is the unweighted F1 of two id sets; two empty sets score 1.
func setF1(pred, want []string) float64 {
	if len(pred) == 0 && len(want) == 0 {
		return 1
	}
	tp := 0
	for _, p := range pred {
		if slices.Contains(want, p) {
			tp++
		}
	}
	if tp == 0 {
		return 0
	}
	prec, rec := float64(tp)/float64(len(pred)), float64(tp)/float64(len(want))
	return 2 * prec * rec / (prec + rec)
}
