//go:build linux && !amd64 && !arm64

package sandbox

// auditArch 0 means no filter is known for this architecture; New then
// fails closed with ErrNoIsolation.
const auditArch = 0

const abiBit = 0

var archDenied []uint32
