package sandbox

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// hostLayout records how the host lays out /lib, /lib64 and /bin (merged-/usr
// symlinks or directories) so bwrap reproduces it.
func (s *Sandbox) hostLayout() {
	s.hostRO = []string{"/usr"}
	for _, p := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(p)
		if err != nil {
			continue
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if t, err := os.Readlink(p); err == nil {
				s.symlink = append(s.symlink, [2]string{t, p})
			}
			continue
		}
		s.hostRO = append(s.hostRO, p)
	}
	for _, p := range []string{"/etc/alternatives", "/etc/ld.so.cache", "/etc/localtime", "/etc/ssl"} {
		if _, err := os.Stat(p); err == nil {
			s.hostRO = append(s.hostRO, p)
		}
	}
}

// bwrapFiles are the descriptors bwrap inherits. It receives its binds as
// open file descriptors, opened here with svbench's own permissions: a
// pool uid need not be able to traverse the parents of the scratch
// directory or of a toolchain. They follow the caller's own extra files,
// which keep fds 3, 4, ….
type bwrapFiles struct {
	files  []*os.File // in fd order from 3
	opened []*os.File // ours to close
}

// bind opens p for a bind and returns its fd number in bwrap.
func (b *bwrapFiles) bind(p string) (string, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", fmt.Errorf("sandbox: bind %s: %w", p, err)
	}
	b.opened = append(b.opened, f)
	b.files = append(b.files, f)
	return strconv.Itoa(2 + len(b.files)), nil
}

// data passes bytes bwrap copies (a seccomp program) through a pipe: they
// are far smaller than a pipe's buffer, so writing them all before bwrap
// starts cannot block.
func (b *bwrapFiles) data(p []byte) (string, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", fmt.Errorf("sandbox: pipe for bwrap: %w", err)
	}
	b.opened = append(b.opened, r)
	_, err = w.Write(p)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", fmt.Errorf("sandbox: writing the seccomp filter for bwrap: %w", err)
	}
	b.files = append(b.files, r)
	return strconv.Itoa(2 + len(b.files)), nil
}

func (b *bwrapFiles) close() {
	for _, f := range b.opened {
		f.Close()
	}
}

func hasWritableMount(ms []Mount) bool {
	for _, m := range ms {
		if m.Writable {
			return true
		}
	}
	return false
}

// wrap builds the bwrap command around spec.Argv. Every mount the program
// can write is either a bind svbench reads back (scratch, the caller's
// writable mounts and binds) or a tmpfs of bounded size; the tmpfs root
// bwrap builds the tree in, and /dev, are remounted read-only so they cannot
// hold anything.
func (s *Sandbox) wrap(spec Spec, dir string, lim Limits, fdOf func(string) (string, error), dataFd func([]byte) (string, error)) ([]string, error) {
	filter := s.strict
	if spec.Nesting {
		filter = s.nesting
	}
	sfd, err := dataFd(filter)
	if err != nil {
		return nil, err
	}
	a := []string{s.bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--seccomp", sfd}
	for _, p := range s.hostRO {
		a = append(a, "--ro-bind", p, p)
	}
	for _, l := range s.symlink {
		a = append(a, "--symlink", l[0], l[1])
	}
	for _, p := range spec.ReadOnlyBinds {
		fd, err := fdOf(p)
		if err != nil {
			return nil, err
		}
		a = append(a, "--ro-bind-fd", fd, p)
	}
	if !spec.NoProc {
		a = append(a, "--proc", "/proc")
	}
	size := strconv.FormatInt(lim.Tmpfs, 10)
	// bwrap's /dev is a tmpfs of its own, /dev/shm a directory in it: the
	// whole of /dev goes read-only (its device nodes are separate binds and
	// stay usable) and /dev/shm becomes a sized tmpfs.
	a = append(a, "--dev", "/dev", "--remount-ro", "/dev",
		"--size", size, "--tmpfs", "/dev/shm", "--size", size, "--tmpfs", "/tmp")
	for _, p := range spec.WritableBinds {
		fd, err := fdOf(p)
		if err != nil {
			return nil, err
		}
		a = append(a, "--bind-fd", fd, p)
	}
	fd, err := fdOf(dir)
	if err != nil {
		return nil, err
	}
	a = append(a, "--bind-fd", fd, ScratchMount)
	for _, m := range spec.Mounts {
		if !filepath.IsAbs(m.Target) {
			return nil, fmt.Errorf("sandbox: mount target %q is not absolute", m.Target)
		}
		fd, err := fdOf(m.Source)
		if err != nil {
			return nil, err
		}
		op := "--ro-bind-fd"
		if m.Writable {
			op = "--bind-fd"
		}
		a = append(a, op, fd, m.Target)
	}
	if spec.Nesting {
		sfd, err := dataFd(s.strict)
		if err != nil {
			return nil, err
		}
		a = append(a, "--perms", "0444", "--ro-bind-data", sfd, SeccompFilterPath)
	}
	a = append(a, "--remount-ro", "/", "--chdir", filepath.Join(ScratchMount, spec.Subdir), "--clearenv")
	for _, kv := range spec.Env {
		k, v, ok := strings.Cut(kv, "=")
		if ok && k != "" {
			a = append(a, "--setenv", k, v)
		}
	}
	return append(append(a, "--"), spec.Argv...), nil
}
