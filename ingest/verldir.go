package ingest

import (
	"cmp"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
)

// verlStepFile is a file verl's trainer writes under rollout_data_dir (and
// validation_data_dir): one JSONL file per step, named by the step.
var verlStepFile = regexp.MustCompile(`^[0-9]{1,12}\.jsonl$`)

// verlFiles lists the step files of a verl rollout_data_dir in step order
// (numeric: 10.jsonl follows 9.jsonl); nil when dir is not a directory or
// holds none.
func verlFiles(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	type stepFile struct {
		step int64
		path string
	}
	var fs []stepFile
	for _, e := range ents {
		if e.IsDir() || !verlStepFile.MatchString(e.Name()) {
			continue
		}
		n, err := strconv.ParseInt(e.Name()[:len(e.Name())-len(".jsonl")], 10, 64)
		if err != nil {
			continue
		}
		fs = append(fs, stepFile{n, filepath.Join(dir, e.Name())})
	}
	slices.SortFunc(fs, func(a, b stepFile) int { return cmp.Compare(a.step, b.step) })
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.path
	}
	return out
}

// IsVerlDir reports whether path is a directory of verl step dumps
// ({step}.jsonl), which svbench reads as one run, steps in order.
func IsVerlDir(path string) bool {
	return len(verlFiles(path)) > 0
}
