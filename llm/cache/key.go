package cache

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// KeyFileName is the file, under svbench's user config directory, that
// holds the secret every cache entry's MAC is keyed with.
const KeyFileName = "cache.key"

// keyBytes is the secret's length: HMAC-SHA256's block-sized key.
const keyBytes = 32

// DefaultKeyFile is KeyFileName under svbench's directory in the user config
// directory ($XDG_CONFIG_HOME, ~/.config, ~/Library/Application Support,
// %AppData%). The key lives apart from the cache on purpose: a cache
// directory that is copied, shared or checked in never carries the secret
// that vouches for its entries, so entries written anywhere else are misses.
func DefaultKeyFile() (string, error) {
	d, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no user config directory for the response cache key (%w): set $HOME or $XDG_CONFIG_HOME", err)
	}
	return filepath.Join(d, "svbench", KeyFileName), nil
}

// loadKey reads the secret in path, creating it (owner-only, 0600) on
// first use. Concurrent first uses agree on one key: each writes a complete
// candidate to a temporary file and links it into place, and whoever loses
// the race reads the winner's.
func loadKey(path string) ([]byte, error) {
	key, err := readKey(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("response cache key: %w", err)
	}
	key = make([]byte, keyBytes)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("response cache key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, KeyFileName+".tmp*") // created 0600
	if err != nil {
		return nil, fmt.Errorf("response cache key: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(hex.EncodeToString(key) + "\n")
	serr := tmp.Sync()
	if err := errors.Join(werr, serr, tmp.Close()); err != nil {
		return nil, fmt.Errorf("response cache key %s: %w", path, err)
	}
	// Link, unlike rename, never replaces a key another process made first:
	// replacing it would orphan every entry that process writes.
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("response cache key %s: %w", path, err)
	}
	return readKey(path)
}

// readKey reads and checks an existing key file. A key others can read is
// refused rather than used: anyone holding it can forge entries.
func readKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	const fix = "delete it to make a new key (entries written under the old one become misses)"
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("response cache key %s: not a regular file; %s", path, fix)
	}
	// Windows reports synthesized permission bits; there the user profile's
	// ACL is what keeps the key private.
	if runtime.GOOS != "windows" && st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("response cache key %s: mode %v lets others read it, and whoever reads it can forge cache entries; chmod 600 it, or %s", path, st.Mode().Perm(), fix)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4*keyBytes))
	if err != nil {
		return nil, fmt.Errorf("response cache key %s: %w; %s", path, err, fix)
	}
	key, err := hex.DecodeString(strings.TrimSpace(string(b)))
	if err != nil || len(key) != keyBytes {
		return nil, fmt.Errorf("response cache key %s: not %d hex-encoded bytes; %s", path, keyBytes, fix)
	}
	return key, nil
}
