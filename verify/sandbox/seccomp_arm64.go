package sandbox

import "golang.org/x/sys/unix"

// auditArch is the only ABI the filter lets through (a 32-bit arm task has
// another AUDIT_ARCH value and is killed).
const auditArch = unix.AUDIT_ARCH_AARCH64

// abiBit: arm64 has no second ABI sharing its AUDIT_ARCH value.
const abiBit = 0

var archDenied []uint32
