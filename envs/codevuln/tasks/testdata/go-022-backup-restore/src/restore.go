package restore

import (
	"archive/zip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
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
	var restored []string
	for _, f := range zr.File {
		target := filepath.Join(dest, f.Name)
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
