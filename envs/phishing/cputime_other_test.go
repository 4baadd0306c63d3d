//go:build !unix

package phishing

import "time"

// cpuTime falls back to wall time where rusage is unavailable.
func cpuTime() time.Duration { return time.Duration(time.Now().UnixNano()) }
