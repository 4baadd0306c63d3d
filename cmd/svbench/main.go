// Command svbench evaluates models on security tasks scored by real verifiers
// and serves those rewards to RL trainers.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/svbench/svbench/internal/cli"
)

func main() {
	cli.TuneGC()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
