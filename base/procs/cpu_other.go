//go:build !unix

package procs

import "time"

// processCPU is unknown here: the adapter leaves GOMAXPROCS as it is.
func processCPU() (time.Duration, bool) { return 0, false }
