//go:build unix

package procs

import (
	"syscall"
	"time"
)

// processCPU is the user and system CPU time of the process's threads (its
// children's, such as E3's sandboxes, are theirs).
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
