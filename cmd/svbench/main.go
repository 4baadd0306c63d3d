// Command svbench evaluates models on security tasks scored by real verifiers
// and serves those rewards to RL trainers.
package main

import (
	"context"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/svbench/svbench/internal/cli"
)

func main() {
	// Verifiers (trivy, OPA, kube-linter) allocate heavily and keep little:
	// at Go's default GOGC=100 the collector took about a fifth of the CPU
	// of scoring E2 rollouts (BenchmarkScoreUniqueMix). A larger heap target
	// buys that back at a few hundred MiB; GOGC in the environment still wins.
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
