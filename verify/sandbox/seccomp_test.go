package sandbox

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

// seccompVerdict runs a filter on one system call in x/net/bpf's VM. The VM
// loads words big-endian and the kernel natively; storing each word the VM
// reads big-endian gives it the values the kernel would see.
func seccompVerdict(t *testing.T, nesting bool, arch, nr, arg0 uint32) uint32 {
	t.Helper()
	raw, err := seccompProgram(nesting)
	if err != nil {
		t.Fatal(err)
	}
	prog, ok := bpf.Disassemble(raw)
	if !ok {
		t.Fatal("filter does not disassemble")
	}
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, 64)
	binary.BigEndian.PutUint32(data[offNr:], nr)
	binary.BigEndian.PutUint32(data[offArch:], arch)
	binary.BigEndian.PutUint32(data[offArg0Low:], arg0)
	v, err := vm.Run(data)
	if err != nil {
		t.Fatal(err)
	}
	return uint32(v)
}

func TestSeccompProgramVerdicts(t *testing.T) {
	const (
		allow = unix.SECCOMP_RET_ALLOW
		kill  = unix.SECCOMP_RET_KILL_PROCESS
		eperm = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		nosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
	)
	type row struct {
		name            string
		arch, nr, arg0  uint32
		strict, nesting uint32
	}
	rows := []row{
		{"read", auditArch, unix.SYS_READ, 0, allow, allow},
		{"getpid", auditArch, unix.SYS_GETPID, 0, allow, allow},
		{"clone thread", auditArch, unix.SYS_CLONE, unix.CLONE_VM | unix.CLONE_THREAD | unix.CLONE_SIGHAND, allow, allow},
		{"clone fork", auditArch, unix.SYS_CLONE, uint32(syscall.SIGCHLD), allow, allow},
		{"clone CLONE_NEWUSER", auditArch, unix.SYS_CLONE, unix.CLONE_NEWUSER | uint32(syscall.SIGCHLD), eperm, allow},
		{"clone CLONE_NEWNET", auditArch, unix.SYS_CLONE, unix.CLONE_NEWNET, eperm, allow},
		{"clone3", auditArch, unix.SYS_CLONE3, 0, nosys, nosys},
		{"unshare", auditArch, unix.SYS_UNSHARE, unix.CLONE_NEWUSER, eperm, allow},
		{"mount", auditArch, unix.SYS_MOUNT, 0, eperm, allow},
		{"umount2", auditArch, unix.SYS_UMOUNT2, 0, eperm, allow},
		{"pivot_root", auditArch, unix.SYS_PIVOT_ROOT, 0, eperm, allow},
		{"foreign arch (i386 ABI)", unix.AUDIT_ARCH_I386, unix.SYS_GETPID, 0, kill, kill},
		{"socket AF_UNIX", auditArch, unix.SYS_SOCKET, unix.AF_UNIX, allow, allow},
		{"socket AF_INET", auditArch, unix.SYS_SOCKET, unix.AF_INET, allow, allow},
		{"socket AF_INET6", auditArch, unix.SYS_SOCKET, unix.AF_INET6, allow, allow},
		{"socket AF_NETLINK", auditArch, unix.SYS_SOCKET, unix.AF_NETLINK, allow, allow},
		{"socket AF_VSOCK", auditArch, unix.SYS_SOCKET, unix.AF_VSOCK, eperm, eperm},
		{"socket AF_PACKET", auditArch, unix.SYS_SOCKET, unix.AF_PACKET, eperm, eperm},
		{"socket AF_ALG", auditArch, unix.SYS_SOCKET, unix.AF_ALG, eperm, eperm},
		{"socket AF_UNSPEC", auditArch, unix.SYS_SOCKET, unix.AF_UNSPEC, eperm, eperm},
		{"socketpair AF_UNIX", auditArch, unix.SYS_SOCKETPAIR, unix.AF_UNIX, allow, allow},
		{"socketpair AF_VSOCK", auditArch, unix.SYS_SOCKETPAIR, unix.AF_VSOCK, eperm, eperm},
		// The family check reads arguments of socket calls only.
		{"read with AF_VSOCK's value", auditArch, unix.SYS_READ, unix.AF_VSOCK, allow, allow},
	}
	if abiBit != 0 {
		rows = append(rows, row{"x32 ABI", auditArch, abiBit | unix.SYS_GETPID, 0, kill, kill})
	}
	for _, nr := range deniedEverywhere {
		rows = append(rows, row{fmt.Sprintf("nr %d", nr), auditArch, nr, 0, eperm, eperm})
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			if got := seccompVerdict(t, false, r.arch, r.nr, r.arg0); got != r.strict {
				t.Errorf("strict: %#x, want %#x", got, r.strict)
			}
			if got := seccompVerdict(t, true, r.arch, r.nr, r.arg0); got != r.nesting {
				t.Errorf("nesting: %#x, want %#x", got, r.nesting)
			}
		})
	}
}

// syscallProbe calls each system call in a forked child (a call that
// succeeds may change the caller: a new user namespace, a tracer) and
// reports [return value, errno, terminating signal].
const syscallProbe = `
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
out = {}
for name, nr, args in json.loads(sys.argv[1]):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        keep, cargs = [], []
        for a in args:
            if isinstance(a, str) and a.startswith("S:"):
                b = ctypes.create_string_buffer(a[2:].encode())
            elif a == "BUF":
                b = ctypes.create_string_buffer(4096)
            elif a == "PID":
                cargs.append(ctypes.c_long(os.getpid()))
                continue
            else:
                cargs.append(ctypes.c_long(a))
                continue
            keep.append(b)
            cargs.append(ctypes.c_void_p(ctypes.addressof(b)))
        ctypes.set_errno(0)
        res = libc.syscall(ctypes.c_long(nr), *cargs)
        if res == 0 and name.startswith("clone"):
            os._exit(0)  # the new process
        os.write(w, json.dumps([res, ctypes.get_errno() if res == -1 else 0]).encode())
        os._exit(0)
    os.close(w)
    data = os.read(r, 4096)
    os.close(r)
    sig = 0
    while True:
        try:
            p, st = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        if p == pid and os.WIFSIGNALED(st):
            sig = os.WTERMSIG(st)
    out[name] = (json.loads(data) if data else [None, None]) + [sig]
print(json.dumps(out))
`

// TestSeccompDeniesInsideTheSandbox probes the installed filter. Each call's
// arguments are chosen so that without the filter it succeeds or fails with
// another errno than the filter's (measured before the filter existed:
// io_uring_setup, keyctl, add_key, unshare, clone(CLONE_NEWUSER), clone3,
// ptrace, process_vm_readv, userfaultfd, memfd_create, shmget and msgget
// succeeded; mount and perf_event_open gave EFAULT, io_uring_enter and setns
// EBADF, request_key ENOKEY, bpf EINVAL).
func TestSeccompDeniesInsideTheSandbox(t *testing.T) {
	py := python(t)
	const sigchld = int64(syscall.SIGCHLD)
	type probe struct {
		name string
		nr   int64
		args []any
		// want: errno, or "ok" for success, or "SIGSYS"; per mode.
		strict, nesting string
	}
	probes := []probe{
		{"getpid", unix.SYS_GETPID, nil, "ok", "ok"},
		{"clone_fork", unix.SYS_CLONE, []any{sigchld, 0, 0, 0, 0}, "ok", "ok"},
		{"io_uring_setup", unix.SYS_IO_URING_SETUP, []any{1, "BUF"}, "EPERM", "EPERM"},
		{"io_uring_enter", unix.SYS_IO_URING_ENTER, []any{999, 0, 0, 0, 0, 0}, "EPERM", "EPERM"},
		{"keyctl", unix.SYS_KEYCTL, []any{unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_SESSION_KEYRING, 1}, "EPERM", "EPERM"},
		{"add_key", unix.SYS_ADD_KEY, []any{"S:user", "S:svb", "S:x", 1, unix.KEY_SPEC_SESSION_KEYRING}, "EPERM", "EPERM"},
		{"request_key", unix.SYS_REQUEST_KEY, []any{"S:user", "S:svb-none", 0, 0}, "EPERM", "EPERM"},
		{"unshare_newuser", unix.SYS_UNSHARE, []any{unix.CLONE_NEWUSER}, "EPERM", "ok"},
		{"setns", unix.SYS_SETNS, []any{999, 0}, "EPERM", "EPERM"},
		{"clone_newuser", unix.SYS_CLONE, []any{unix.CLONE_NEWUSER | sigchld, 0, 0, 0, 0}, "EPERM", "ok"},
		{"clone3", unix.SYS_CLONE3, []any{"BUF", 88}, "ENOSYS", "ENOSYS"},
		{"mount", unix.SYS_MOUNT, []any{"S:none", "S:/tmp", 1, 0, 0}, "EPERM", "EFAULT"},
		{"ptrace_traceme", unix.SYS_PTRACE, []any{unix.PTRACE_TRACEME, 0, 0, 0}, "EPERM", "EPERM"},
		{"process_vm_readv", unix.SYS_PROCESS_VM_READV, []any{"PID", 0, 0, 0, 0, 0}, "EPERM", "EPERM"},
		{"bpf", unix.SYS_BPF, []any{9999, 0, 0}, "EPERM", "EPERM"},
		{"perf_event_open", unix.SYS_PERF_EVENT_OPEN, []any{0, 0, -1, -1, 0}, "EPERM", "EPERM"},
		{"userfaultfd", unix.SYS_USERFAULTFD, []any{1}, "EPERM", "EPERM"},
		{"memfd_create", unix.SYS_MEMFD_CREATE, []any{"S:x", 0}, "EPERM", "EPERM"},
		{"shmget", unix.SYS_SHMGET, []any{0, 4096, unix.IPC_CREAT | 0o600}, "EPERM", "EPERM"},
		{"msgget", unix.SYS_MSGGET, []any{0, unix.IPC_CREAT | 0o600}, "EPERM", "EPERM"},
		// Measured without these rules (bwrap, both modes): semget,
		// io_setup, personality, get_mempolicy, set_mempolicy, pidfd_open,
		// socket(AF_VSOCK) and the allowed sockets succeeded; semop, shmat
		// and io_submit gave EINVAL, mbind EFAULT, pidfd_send_signal EBADF,
		// socketpair(AF_VSOCK) EOPNOTSUPP. socket(AF_PACKET) already gave
		// EPERM (no CAP_NET_RAW); it stays as a check of the family list.
		{"semget", unix.SYS_SEMGET, []any{0, 1, unix.IPC_CREAT | 0o600}, "EPERM", "EPERM"},
		{"semop", unix.SYS_SEMOP, []any{-1, 0, 0}, "EPERM", "EPERM"},
		{"shmat", unix.SYS_SHMAT, []any{-1, 0, 0}, "EPERM", "EPERM"},
		{"io_setup", unix.SYS_IO_SETUP, []any{1, "BUF"}, "EPERM", "EPERM"},
		{"io_submit", unix.SYS_IO_SUBMIT, []any{0, 0, 0}, "EPERM", "EPERM"},
		{"personality_query", unix.SYS_PERSONALITY, []any{0xffffffff}, "EPERM", "EPERM"},
		{"personality_no_aslr", unix.SYS_PERSONALITY, []any{0x0040000 /* ADDR_NO_RANDOMIZE */}, "EPERM", "EPERM"},
		{"get_mempolicy", unix.SYS_GET_MEMPOLICY, []any{0, 0, 0, 0, 0}, "EPERM", "EPERM"},
		{"set_mempolicy", unix.SYS_SET_MEMPOLICY, []any{0, 0, 0}, "EPERM", "EPERM"},
		{"mbind", unix.SYS_MBIND, []any{0, 4096, 0, 0, 0, 0}, "EPERM", "EPERM"},
		{"pidfd_open", unix.SYS_PIDFD_OPEN, []any{"PID", 0}, "EPERM", "EPERM"},
		{"pidfd_send_signal", unix.SYS_PIDFD_SEND_SIGNAL, []any{999, 0, 0, 0}, "EPERM", "EPERM"},
		{"socket_vsock", unix.SYS_SOCKET, []any{unix.AF_VSOCK, unix.SOCK_STREAM, 0}, "EPERM", "EPERM"},
		{"socket_packet", unix.SYS_SOCKET, []any{unix.AF_PACKET, unix.SOCK_RAW, 0}, "EPERM", "EPERM"},
		{"socketpair_vsock", unix.SYS_SOCKETPAIR, []any{unix.AF_VSOCK, unix.SOCK_STREAM, 0, "BUF"}, "EPERM", "EPERM"},
		{"socket_unix", unix.SYS_SOCKET, []any{unix.AF_UNIX, unix.SOCK_STREAM, 0}, "ok", "ok"},
		{"socket_inet", unix.SYS_SOCKET, []any{unix.AF_INET, unix.SOCK_STREAM, 0}, "ok", "ok"},
		{"socket_inet6", unix.SYS_SOCKET, []any{unix.AF_INET6, unix.SOCK_DGRAM, 0}, "ok", "ok"},
		{"socket_netlink", unix.SYS_SOCKET, []any{unix.AF_NETLINK, unix.SOCK_RAW, unix.NETLINK_ROUTE}, "ok", "ok"},
		{"socketpair_unix", unix.SYS_SOCKETPAIR, []any{unix.AF_UNIX, unix.SOCK_STREAM, 0, "BUF"}, "ok", "ok"},
	}
	if abiBit != 0 {
		probes = append(probes, probe{"x32_getpid", abiBit | unix.SYS_GETPID, nil, "SIGSYS", "SIGSYS"})
	}
	arg := make([][]any, len(probes))
	for i, p := range probes {
		arg[i] = []any{p.name, p.nr, append([]any{}, p.args...)}
	}
	js, err := json.Marshal(arg)
	if err != nil {
		t.Fatal(err)
	}
	errnoName := map[int]string{0: "ok", int(unix.EPERM): "EPERM", int(unix.ENOSYS): "ENOSYS", int(unix.EFAULT): "EFAULT"}
	for m, s := range isolated(t) {
		for _, nesting := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/nesting=%v", m, nesting), func(t *testing.T) {
				res, err := s.Run(context.Background(), Spec{
					Argv: []string{py.Exe, "-I", "-c", syscallProbe, string(js)}, Dir: scratch(t, s),
					ReadOnlyBinds: py.Binds(), Nesting: nesting,
				})
				if err != nil || !res.OK() {
					t.Fatalf("probe run: %v %+v %s", err, res, res.Stderr)
				}
				var got map[string][3]*int
				if err := json.Unmarshal(res.Stdout, &got); err != nil {
					t.Fatalf("probe output %q: %v", res.Stdout, err)
				}
				for _, p := range probes {
					want := p.strict
					if nesting {
						want = p.nesting
					}
					g, ok := got[p.name]
					var have string
					switch {
					case !ok:
						have = "missing"
					case g[2] != nil && *g[2] == int(syscall.SIGSYS):
						have = "SIGSYS"
					case g[2] != nil && *g[2] != 0:
						have = fmt.Sprintf("signal %d", *g[2])
					case g[1] == nil:
						have = "no answer"
					default:
						have = errnoName[*g[1]]
						if have == "" {
							have = syscall.Errno(*g[1]).Error()
						}
					}
					if have != want {
						t.Errorf("%s: %s, want %s", p.name, have, want)
					}
				}
			})
		}
	}
}
