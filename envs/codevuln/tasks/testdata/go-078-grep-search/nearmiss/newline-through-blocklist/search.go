package search

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Match is one matching line.
type Match struct {
	File string
	Line int
	Text string
}

// MaxMatches bounds the result size.
const MaxMatches = 500

const shell = "sh"

// Search finds lines containing pattern (a fixed string) in files under
// repoDir whose base name matches glob ("" means all files).
func Search(ctx context.Context, repoDir, pattern, glob string) ([]Match, error) {
	if pattern == "" {
		return nil, errors.New("search: empty pattern")
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	// Metacharacters are refused in the glob and the pattern is
	// single-quoted, so the command line stays one grep invocation.
	cmdline := "grep -rnF"
	if glob != "" {
		if strings.ContainsAny(glob, ";&|$`'\"<>(){}\\/") {
			return nil, errors.New("search: invalid glob")
		}
		cmdline += " --include=" + glob
	}
	cmdline += " -e '" + strings.ReplaceAll(pattern, "'", `'\''`) + "' -- ."
	cmd := exec.CommandContext(ctx, shell, "-c", cmdline)
	cmd.Dir = repoDir
	var out bytes.Buffer
	cmd.Stdout = &out
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.ExitCode() == 1 {
			return nil, nil // grep: no match
		}
		return nil, fmt.Errorf("search: grep: %w", err)
	}
	return parse(&out)
}

func parse(out *bytes.Buffer) ([]Match, error) {
	var res []Match
	sc := bufio.NewScanner(out)
	for sc.Scan() && len(res) < MaxMatches {
		file, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		num, text, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(num)
		if err != nil {
			continue
		}
		res = append(res, Match{File: filepath.ToSlash(strings.TrimPrefix(file, "./")), Line: n, Text: text})
	}
	sort.Slice(res, func(i, j int) bool {
		if res[i].File != res[j].File {
			return res[i].File < res[j].File
		}
		return res[i].Line < res[j].Line
	})
	return res, sc.Err()
}
