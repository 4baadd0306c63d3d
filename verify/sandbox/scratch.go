package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// NewScratch creates an empty scratch directory and a function removing it.
func (s *Sandbox) NewScratch() (string, func(), error) {
	s.scratchMu.Lock()
	if s.scratchBase == "" {
		base, err := scratchBase()
		if err != nil {
			s.scratchMu.Unlock()
			return "", nil, fmt.Errorf("sandbox: scratch base: %w", err)
		}
		s.scratchBase = base
	}
	base := s.scratchBase
	s.scratchMu.Unlock()
	dir, err := os.MkdirTemp(base, "run-")
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: scratch dir: %w", err)
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// scratchBase is one directory per user under the temp dir, shared by
// svbench processes so none leaves an empty directory behind. It is used
// only if it is a real directory owned by us that nobody else can write;
// otherwise a fresh private one is made. It is traversable but not listable
// by others (0711): bwrap, running as a pool uid, resolves the scratch
// directory's descriptor through it. Nothing inside a sandbox sees it: each
// run's directory is bound alone at ScratchMount.
func scratchBase() (string, error) {
	base := filepath.Join(os.TempDir(), fmt.Sprintf("svbench-sandbox-%d", os.Geteuid()))
	if err := os.Mkdir(base, 0o711); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	if fi, err := os.Lstat(base); err == nil && fi.IsDir() && fi.Mode()&0o022 == 0 {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) == os.Geteuid() {
			if fi.Mode().Perm() != 0o711 {
				if err := os.Chmod(base, 0o711); err != nil {
					return "", err
				}
			}
			return base, nil
		}
	}
	base, err := os.MkdirTemp("", "svbench-sandbox-")
	if err == nil {
		err = os.Chmod(base, 0o711)
	}
	return base, err
}

// ScratchBase is the directory NewScratch creates scratch directories in
// ("" before the first one).
func (s *Sandbox) ScratchBase() string {
	s.scratchMu.Lock()
	defer s.scratchMu.Unlock()
	return s.scratchBase
}

// SharedMarker is the file that marks a directory as one SharedDir made.
const SharedMarker = ".svbench-shared-dir"

// SharedDir returns parent/name, a directory for writable binds (a build
// cache) that runs execute against as the shared uid. svbench creates it
// with a marker file inside and only ever changes the ownership of what is
// inside it: parent is whatever directory a user named, and may hold their
// own files (an id_rsa), which svbench never touches. An existing parent/name
// is used only if it carries the marker, is a real directory and belongs to
// svbench (its uid or the shared uid); anything else is refused.
func (s *Sandbox) SharedDir(parent, name string) (string, error) {
	if name == "" || !filepath.IsLocal(name) || strings.ContainsRune(name, filepath.Separator) {
		return "", fmt.Errorf("sandbox: shared directory name %q must be one path element", name)
	}
	if fi, err := os.Stat(parent); err != nil || !fi.IsDir() {
		return "", fmt.Errorf("sandbox: shared directory parent %s is not a directory (%v); create it or name another", parent, err)
	}
	dir := filepath.Join(parent, name)
	marker := filepath.Join(dir, SharedMarker)
	switch err := os.Mkdir(dir, 0o755); {
	case err == nil:
		if err := os.WriteFile(marker, []byte("created by svbench for sandboxed build caches; svbench changes the ownership of what is in this directory and nothing outside it\n"), 0o644); err != nil {
			return "", fmt.Errorf("sandbox: marking %s: %w", dir, err)
		}
	case errors.Is(err, fs.ErrExist):
		if err := s.checkShared(dir, marker); err != nil {
			return "", err
		}
	default:
		return "", fmt.Errorf("sandbox: creating %s: %w", dir, err)
	}
	if !s.root {
		return dir, nil
	}
	if err := chownTree(dir, s.SharedUID()); err != nil {
		return "", fmt.Errorf("sandbox: handing %s to uid %d: %w", dir, s.SharedUID(), err)
	}
	return dir, nil
}

// checkShared accepts an existing directory as SharedDir's own.
func (s *Sandbox) checkShared(dir, marker string) error {
	refuse := func(why string) error {
		return fmt.Errorf("sandbox: %s exists but %s, so svbench will not use it or change its ownership; remove it or name another parent directory", dir, why)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("sandbox: %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return refuse("is not a directory")
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || (int(st.Uid) != os.Geteuid() && (!s.root || int(st.Uid) != s.SharedUID())) {
		return refuse("belongs to another user")
	}
	if mfi, err := os.Lstat(marker); err != nil || !mfi.Mode().IsRegular() {
		return refuse("was not created by svbench (no " + SharedMarker + " file)")
	}
	return nil
}

// chownTree hands a directory svbench made (a scratch or shared directory)
// to uid. A file with more than one link is left alone: its other name may
// be outside the tree, on a file svbench did not create.
func chownTree(dir string, uid int) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
					return nil
				}
			}
		}
		return os.Lchown(p, uid, uid)
	})
}
