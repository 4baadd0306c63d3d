package sandbox

import (
	"encoding/binary"
	"fmt"
	"slices"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// A seccomp filter narrows what the kernel offers code under test to what a
// unit test needs. Namespaces, capabilities and limits already stop most of
// the denied calls from doing harm; the filter removes the attack surface
// itself (io_uring, keyrings, bpf and perf have been the door of many kernel
// exploits) and the resources no limit counts (SysV shared memory, memfds,
// keys).
//
// Denied calls fail with EPERM instead of killing the process, so a tool that
// probes for a feature (io_uring, a user namespace for its own sandbox) falls
// back the way it does on a host that forbids the feature. clone3 fails with
// ENOSYS: its flags live in memory a filter cannot read, and glibc and the Go
// runtime fall back to clone, whose flags the filter does inspect. A call
// made through another ABI than the native one (the i386 entry of an x86_64
// kernel, x32) kills the process: the syscall numbers differ there, so
// nothing the filter checks would hold.

// seccompData offsets (struct seccomp_data): nr, arch, instruction pointer,
// then six 64-bit arguments. The architectures supported are little-endian,
// so an argument's low 32 bits come first.
const (
	offNr      = 0
	offArch    = 4
	offArg0Low = 16
)

// nsCloneFlags are the clone flags that create namespaces. CLONE_NEWTIME
// shares its value with the exit-signal bits of clone(2) and is accepted only
// by clone3 and unshare, both denied outright.
const nsCloneFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// deniedEverywhere are refused by both filters.
var deniedEverywhere = append([]uint32{
	unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
	unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
	unix.SYS_SETNS,
	unix.SYS_MOVE_MOUNT, unix.SYS_OPEN_TREE, unix.SYS_OPEN_TREE_ATTR, unix.SYS_FSOPEN, unix.SYS_FSMOUNT,
	unix.SYS_FSCONFIG, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
	unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV, unix.SYS_KCMP, unix.SYS_PIDFD_GETFD,
	unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD, unix.SYS_FANOTIFY_INIT,
	unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE, unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE,
	unix.SYS_REBOOT, unix.SYS_SWAPON, unix.SYS_SWAPOFF, unix.SYS_ACCT, unix.SYS_QUOTACTL, unix.SYS_QUOTACTL_FD,
	unix.SYS_OPEN_BY_HANDLE_AT, unix.SYS_LOOKUP_DCOOKIE, unix.SYS_VHANGUP, unix.SYS_SYSLOG, unix.SYS_NFSSERVCTL,
	// Memory no watchdog sees: SysV segments and queues outlive every
	// mapping of them, a memfd is charged to no mount, secret memory to
	// nothing readable.
	unix.SYS_SHMGET, unix.SYS_MSGGET, unix.SYS_MEMFD_CREATE, unix.SYS_MEMFD_SECRET,
	// The rest of SysV IPC: semaphore sets are as persistent and uncounted
	// as segments, and no sandboxed tool uses any of it (Python's
	// multiprocessing semaphores are POSIX ones, files in /dev/shm).
	unix.SYS_SEMGET, unix.SYS_SEMOP, unix.SYS_SEMTIMEDOP, unix.SYS_SEMCTL,
	unix.SYS_SHMAT, unix.SYS_SHMDT, unix.SYS_SHMCTL, unix.SYS_MSGSND, unix.SYS_MSGRCV, unix.SYS_MSGCTL,
	// Linux AIO: kernel-side request rings like io_uring's, unused by the
	// tools (glibc's POSIX AIO is threads in user space).
	unix.SYS_IO_SETUP, unix.SYS_IO_DESTROY, unix.SYS_IO_SUBMIT, unix.SYS_IO_CANCEL,
	unix.SYS_IO_GETEVENTS, unix.SYS_IO_PGETEVENTS,
	// personality turns off address-space randomisation
	// (ADDR_NO_RANDOMIZE) and makes data executable (READ_IMPLIES_EXEC).
	unix.SYS_PERSONALITY,
	// NUMA placement: page migration between nodes of the host, nothing a
	// unit test needs.
	unix.SYS_MBIND, unix.SYS_SET_MEMPOLICY, unix.SYS_GET_MEMPOLICY, unix.SYS_SET_MEMPOLICY_HOME_NODE,
	unix.SYS_MIGRATE_PAGES, unix.SYS_MOVE_PAGES,
	// pidfds of other processes. The Go runtime probes pidfd_open and
	// pidfd_send_signal once at start (os.checkPidfd) and on EPERM falls
	// back to plain pids, as on kernels before 5.3; nothing else calls them
	// (traced: python3, bandit, openssl, go build and go test).
	unix.SYS_PIDFD_OPEN, unix.SYS_PIDFD_SEND_SIGNAL,
}, archDenied...)

// socketFamilies are the address families socket(2) and socketpair(2) may
// open: local and loopback IP sockets, and netlink, which glibc, the Go
// runtime and bubblewrap itself (to bring loopback up) use to list
// interfaces. Every other family (AF_VSOCK to the hypervisor, AF_ALG,
// AF_PACKET, AF_TIPC, AF_RDS, …) is kernel code the tools never reach and
// fails with EPERM.
var socketFamilies = []uint32{unix.AF_UNIX, unix.AF_INET, unix.AF_INET6, unix.AF_NETLINK}

// deniedUnlessNesting are what bubblewrap itself needs to build a nested
// sandbox: namespaces by clone flags, and the classic mount calls.
var deniedUnlessNesting = []uint32{unix.SYS_UNSHARE, unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT}

// seccompProgram assembles the filter. nesting keeps what a trusted program
// needs to start bubblewrap again; the sandbox it starts must then install
// the strict program itself (see SeccompFilterPath).
func seccompProgram(nesting bool) ([]bpf.RawInstruction, error) {
	if auditArch == 0 {
		return nil, fmt.Errorf("sandbox: no seccomp filter for this architecture (supported: amd64, arm64)")
	}
	const (
		allow  = unix.SECCOMP_RET_ALLOW
		kill   = unix.SECCOMP_RET_KILL_PROCESS
		eperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	)
	p := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipTrue: 1},
		bpf.RetConstant{Val: kill},
		bpf.LoadAbsolute{Off: offNr, Size: 4},
	}
	if abiBit != 0 {
		p = append(p,
			bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: abiBit, SkipFalse: 1},
			bpf.RetConstant{Val: kill})
	}
	denied := slices.Clone(deniedEverywhere)
	if !nesting {
		denied = append(denied, deniedUnlessNesting...)
	}
	slices.Sort(denied)
	for _, nr := range slices.Compact(denied) {
		p = append(p,
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: nr, SkipFalse: 1},
			bpf.RetConstant{Val: eperm})
	}
	p = append(p,
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_CLONE3, SkipFalse: 1},
		bpf.RetConstant{Val: enosys})
	// socket and socketpair: the family is an int, the low 32 bits of the
	// first argument, which is all the kernel reads of it either.
	nf := len(socketFamilies)
	p = append(p,
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_SOCKET, SkipTrue: 1},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_SOCKETPAIR, SkipFalse: uint8(nf + 3)},
		bpf.LoadAbsolute{Off: offArg0Low, Size: 4})
	for i, f := range socketFamilies {
		p = append(p, bpf.JumpIf{Cond: bpf.JumpEqual, Val: f, SkipTrue: uint8(nf - i)})
	}
	p = append(p, bpf.RetConstant{Val: eperm}, bpf.RetConstant{Val: allow})
	if !nesting {
		// clone(2) takes the low 32 bits of its flags argument only.
		p = append(p,
			bpf.JumpIf{Cond: bpf.JumpEqual, Val: unix.SYS_CLONE, SkipFalse: 3},
			bpf.LoadAbsolute{Off: offArg0Low, Size: 4},
			bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: nsCloneFlags, SkipFalse: 1},
			bpf.RetConstant{Val: eperm})
	}
	p = append(p, bpf.RetConstant{Val: allow})
	raw, err := bpf.Assemble(p)
	if err != nil {
		return nil, fmt.Errorf("sandbox: assembling the seccomp filter: %w", err)
	}
	return raw, nil
}

// encodeProgram lays a program out as the kernel's struct sock_filter array
// in native (little-endian) order, the form bubblewrap's --seccomp reads.
func encodeProgram(raw []bpf.RawInstruction) []byte {
	b := make([]byte, 0, 8*len(raw))
	for _, ins := range raw {
		b = binary.LittleEndian.AppendUint16(b, ins.Op)
		b = append(b, ins.Jt, ins.Jf)
		b = binary.LittleEndian.AppendUint32(b, ins.K)
	}
	return b
}

// SeccompFilter returns the strict filter every sandboxed program runs under
// (unless its Spec asks for nesting), as bubblewrap's --seccomp reads it. A
// trusted program that starts a nested sandbox for untrusted code passes
// these bytes to that bwrap; inside a nesting sandbox they are also at
// SeccompFilterPath.
func SeccompFilter() ([]byte, error) {
	raw, err := seccompProgram(false)
	if err != nil {
		return nil, err
	}
	return encodeProgram(raw), nil
}

// SeccompFilterPath is where a sandbox run with Spec.Nesting finds the strict
// filter, read-only, to hand to the bwrap it starts:
//
//	fd = os.open(SeccompFilterPath, os.O_RDONLY)
//	bwrap ... --seccomp <fd> ... (the fd passed to bwrap, not close-on-exec)
const SeccompFilterPath = "/run/svbench/seccomp.bpf"
