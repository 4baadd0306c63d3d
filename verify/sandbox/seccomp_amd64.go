package sandbox

import "golang.org/x/sys/unix"

// auditArch is the only ABI the filter lets through.
const auditArch = unix.AUDIT_ARCH_X86_64

// abiBit marks x32 system calls, which share AUDIT_ARCH_X86_64 but number
// calls differently: any call with it set is refused.
const abiBit = 0x40000000

// archDenied are calls only this architecture has.
var archDenied = []uint32{unix.SYS_IOPL, unix.SYS_IOPERM, unix.SYS_MODIFY_LDT, unix.SYS_USELIB, unix.SYS_CREATE_MODULE}
