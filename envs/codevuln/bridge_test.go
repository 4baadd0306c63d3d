package codevuln

import (
	"os/exec"
	"testing"
)

// TestBridgeHoldsAgainstAHostilePeer runs testdata/bridge_check.py: values
// round-trip, kept containers stay shared, remote objects compare by
// identity, callbacks expose no private attributes, and crafted or random
// replies of a hostile candidate end (SystemExit, SkipTest, modules, bad
// tags, unknown handles, 1,500 random frames) surface only as ordinary
// errors in the trusted runner.
func TestBridgeHoldsAgainstAHostilePeer(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not on PATH")
	}
	out, err := exec.Command(py, "-I", "-B", "testdata/bridge_check.py", "pyrunner").CombinedOutput()
	if err != nil {
		t.Fatalf("bridge checks failed: %v\n%s", err, out)
	}
}
