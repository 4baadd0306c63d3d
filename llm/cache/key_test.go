package cache

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// TestMain points the user config directory at a temporary one, so no test
// of this package creates or reads the real response cache key.
func TestMain(m *testing.M) {
	os.Exit(func() int {
		home, err := os.MkdirTemp("", "svbench-cache-test")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(home)
		os.Setenv("XDG_CONFIG_HOME", filepath.Join(home, "config"))
		os.Setenv("HOME", home)
		os.Setenv("AppData", filepath.Join(home, "appdata"))
		return m.Run()
	}())
}

func TestKeyCreatedOwnerOnlyAndReused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("permission bits are synthesized on Windows")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "svbench", KeyFileName)
	k1, err := loadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, want 0600", st.Mode().Perm())
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("key directory: %v %v, want mode 0700", st.Mode(), err)
	}
	k2, err := loadKey(path)
	if err != nil || !bytes.Equal(k1, k2) || len(k1) != keyBytes {
		t.Fatalf("second load: %x %v, want the first key %x", k2, err, k1)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(path), KeyFileName+".tmp*")); len(left) != 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
}

// Processes opening a fresh cache at once must agree on one key, or the
// entries each writes would be misses for the others.
func TestConcurrentFirstUseAgreesOnOneKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), KeyFileName)
	const n = 16
	keys := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { keys[i], errs[i] = loadKey(path) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || !bytes.Equal(keys[i], keys[0]) {
			t.Fatalf("loader %d: %x %v, loader 0: %x", i, keys[i], errs[i], keys[0])
		}
	}
}

func TestBadKeyFileRefused(t *testing.T) {
	for _, tc := range []struct {
		name    string
		content string
		mode    os.FileMode
		want    string
	}{
		{"readable by others", strings.Repeat("ab", keyBytes) + "\n", 0o644, "lets others read it"},
		{"not hex", strings.Repeat("zz", keyBytes), 0o600, "hex-encoded"},
		{"too short", "abcd\n", 0o600, "hex-encoded"},
		{"empty", "", 0o600, "hex-encoded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.mode&0o077 != 0 && runtime.GOOS == "windows" {
				t.Skip("permission bits are synthesized on Windows")
			}
			path := filepath.Join(t.TempDir(), KeyFileName)
			if err := os.WriteFile(path, []byte(tc.content), tc.mode); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tc.mode); err != nil { // past the umask
				t.Fatal(err)
			}
			if _, err := loadKey(path); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("loadKey: %v, want an error containing %q", err, tc.want)
			}
			// A run is never failed by it: the cache is bypassed with a warning.
			var w warnings
			c := OpenOrBypass(context.Background(), Options{Dir: t.TempDir(), KeyFile: path, Warn: w.warn})
			defer c.Close()
			if !c.Bypassed() || len(w.list()) != 1 || !strings.Contains(w.list()[0].Error(), tc.want) {
				t.Fatalf("bypassed %v, warnings %v", c.Bypassed(), w.list())
			}
		})
	}
}

// The default key lives in the user config directory, not beside the cache:
// a copied or shared cache directory does not carry it.
func TestDefaultKeyOutsideTheCacheDir(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("XDG_CONFIG_HOME steers os.UserConfigDir on Linux only")
	}
	cfg := t.TempDir()
	t.Setenv("XDG_CONFIG_HOME", cfg)
	dir := t.TempDir()
	c, err := Open(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := os.Stat(filepath.Join(cfg, "svbench", KeyFileName)); err != nil {
		t.Fatalf("default key not in the config directory: %v", err)
	}
	if ents, _ := filepath.Glob(filepath.Join(dir, "*.key")); len(ents) != 0 {
		t.Fatalf("key written into the cache directory: %v", ents)
	}
}
