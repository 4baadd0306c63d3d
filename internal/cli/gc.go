package cli

import (
	"os"
	"runtime/debug"
)

// gcPercent is svbench's heap target. Verifiers (trivy, OPA, kube-linter)
// allocate heavily and keep little: at Go's default GOGC=100 the collector
// took about a fifth of the CPU of scoring E2 rollouts
// (BenchmarkScoreUniqueMix); a larger target buys that back at a few
// hundred MiB.
const gcPercent = 400

// TuneGC applies svbench's heap target unless GOGC is set in the
// environment, which wins, and returns what undoes it. The command calls
// it once at start; a benchmark of the whole command calls it too, so it
// measures the process users run.
func TuneGC() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	old := debug.SetGCPercent(gcPercent)
	return func() { debug.SetGCPercent(old) }
}
