package runner

import (
	"fmt"
	"log/slog"

	"github.com/svbench/svbench/dataset"
)

// Shard selects a deterministic slice of a run: every Count-th selected
// example starting at Index.
type Shard struct {
	Index, Count int
}

// String renders "i/n", or "" for an unsharded run.
func (s Shard) String() string {
	if s.Count <= 1 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.Index, s.Count)
}

// ParseShard reads "i/n".
func ParseShard(s string) (Shard, error) {
	if s == "" {
		return Shard{}, nil
	}
	var sh Shard
	if _, err := fmt.Sscanf(s, "%d/%d", &sh.Index, &sh.Count); err != nil || sh.Count < 1 || sh.Index < 0 || sh.Index >= sh.Count {
		return Shard{}, fmt.Errorf("--shard %q: want i/n with 0 <= i < n", s)
	}
	return sh, nil
}

// selectExamples shuffles dataset indices with the seed, keeps the first n
// and then this shard's share of them.
// PlannedExamples is how many examples a run of n examples (0 = all) from
// a dataset of rows plays in shard sh: the length of what selectExamples
// returns, without shuffling.
func PlannedExamples(rows, n int, sh Shard) int {
	if n > 0 && n < rows {
		rows = n
	}
	if sh.Count <= 1 {
		return rows
	}
	if rows <= sh.Index {
		return 0
	}
	return (rows-sh.Index-1)/sh.Count + 1
}

func selectExamples(rows, n int, seed uint64, sh Shard, log *slog.Logger) []int {
	perm := dataset.Permutation(rows, seed)
	if n > rows {
		// One warning, through the run's logger (the CLI's goes to stderr).
		log.Warn(fmt.Sprintf("-n %d is larger than the dataset (%d rows); evaluating all %d", n, rows, rows))
	}
	if n > 0 && n < rows {
		perm = perm[:n]
	}
	if sh.Count <= 1 {
		return perm
	}
	var out []int
	for i, idx := range perm {
		if i%sh.Count == sh.Index {
			out = append(out, idx)
		}
	}
	return out
}
