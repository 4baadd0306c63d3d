//go:build !linux

package web

import (
	"os/exec"
	"time"
)

// ownProcessGroup leaves the command as it is: the allocator's cancel and
// wait are all this platform gets.
func ownProcessGroup(*exec.Cmd) {}

// stopProcessGroup has nothing more to stop here.
func stopProcessGroup(int, time.Duration) error { return nil }

// stopUsersOf has nothing more to stop here.
func stopUsersOf(string, time.Duration) error { return nil }
