package codevuln

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestGoCacheKeepsTheUsersFiles: go_cache names a directory that may hold the
// user's own files; preparing the build cache there changes none of their
// owners or modes (it used to hand the whole tree to the sandbox's uid).
func TestGoCacheKeepsTheUsersFiles(t *testing.T) {
	e := testEnv(t)
	dir := t.TempDir()
	// The compile stage's uid reaches the cache through this directory.
	if err := os.Chmod(filepath.Dir(dir), 0o711); err != nil {
		t.Fatal(err)
	}
	ssh := filepath.Join(dir, ".ssh")
	if err := os.Mkdir(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(ssh, "id_rsa")
	if err := os.WriteFile(key, []byte("PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	paths := []string{dir, ssh, key}
	before := map[string]string{}
	for _, p := range paths {
		before[p] = ownerMode(t, p)
	}
	v, err := NewVerifier(context.Background(), e.sb, dir, e.v.limits.Wall)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if got := ownerMode(t, p); got != before[p] {
			t.Errorf("%s: %s after preparing the cache, %s before", p, got, before[p])
		}
	}
	if want := filepath.Join(dir, GoCacheSubdir); v.cache != want {
		t.Errorf("cache = %s, want svbench's own subdirectory %s", v.cache, want)
	}
	if uid := e.sb.SharedUID(); uid >= 0 {
		if got, want := ownerMode(t, v.cache), fmt.Sprintf("uid %d", uid); got[:len(want)] != want {
			t.Errorf("cache %s: %s, want it handed to the shared uid %d", v.cache, got, uid)
		}
	}
}

func ownerMode(t *testing.T, p string) string {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	return fmt.Sprintf("uid %d gid %d mode %v", st.Uid, st.Gid, fi.Mode())
}
