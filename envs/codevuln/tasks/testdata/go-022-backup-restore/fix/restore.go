package restore

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Limits of one archive.
const (
	MaxFiles = 1000
	MaxBytes = 64 << 20
)

// Restore extracts the archive at zipPath into dest.
func Restore(zipPath, dest string) ([]string, error) {
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		return nil, fmt.Errorf("restore: %w", err)
	}
	defer zr.Close()
	if len(zr.File) > MaxFiles {
		return nil, errors.New("restore: too many files")
	}
	var total uint64
	for _, f := range zr.File {
		total += f.UncompressedSize64
	}
	if total > MaxBytes {
		return nil, errors.New("restore: archive too large")
	}
	root, err := filepath.Abs(dest)
	if err != nil {
		return nil, err
	}
	// Check every entry before writing anything.
	targets := make([]string, len(zr.File))
	for i, f := range zr.File {
		t, err := safeTarget(root, f)
		if err != nil {
			return nil, err
		}
		targets[i] = t
	}
	var restored []string
	for i, f := range zr.File {
		target := targets[i]
		if f.FileInfo().IsDir() {
			if err := os.MkdirAll(target, 0o755); err != nil {
				return restored, err
			}
			continue
		}
		if err := extract(f, target); err != nil {
			return restored, err
		}
		restored = append(restored, f.Name)
	}
	return restored, nil
}

// safeTarget maps an entry to a path strictly inside root. Names are
// slash-separated in zip files, but backslashes are refused too because
// Windows-made archives use them as separators.
func safeTarget(root string, f *zip.File) (string, error) {
	name := f.Name
	if name == "" || strings.ContainsAny(name, "\\\x00") || strings.HasPrefix(name, "/") || filepath.IsAbs(name) || filepath.VolumeName(name) != "" {
		return "", fmt.Errorf("restore: unsafe entry %q", name)
	}
	if f.Mode()&os.ModeSymlink != 0 {
		return "", fmt.Errorf("restore: symlink entry %q", name)
	}
	target := filepath.Join(root, filepath.FromSlash(name))
	rel, err := filepath.Rel(root, target)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("restore: entry %q escapes the destination", name)
	}
	return target, nil
}

func extract(f *zip.File, target string) error {
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return err
	}
	rc, err := f.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	out, err := os.OpenFile(target, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer out.Close()
	_, err = io.Copy(out, io.LimitReader(rc, MaxBytes))
	return err
}
