package ingest

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
)

// Options say how Load re-scores a trainer's rows.
type Options struct {
	// Rubric re-scores every row; "" takes the rubric the rows record,
	// else svbench's default for rows svbench scored, else "reference"
	// (rows without svbench's marks come from the reference's
	// environments).
	Rubric string
	// Dataset is the file rows are joined to by example id; "" joins to
	// every split the environment embeds.
	Dataset string
	// IDColumn names a TRL table's example-id column (DefaultIDColumn
	// when "").
	IDColumn string
}

// Run is a trainer's rows re-scored.
type Run struct {
	Rows []artifact.Result
	// Lines holds each row's 1-based line (JSONL) or row number (parquet,
	// counted across a directory's tables in step order).
	Lines  []int
	Format string
	Rubric string
	// RubricFrom says why Rubric was chosen.
	RubricFrom string
	// Joined counts rows found in the dataset by example id; JoinedFrom
	// names what they were joined to.
	Joined     int
	JoinedFrom string
	// Derived counts rows whose recorded reward svbench made from their
	// recorded components and the rubric's weights (the trainer logged
	// none).
	Derived int
}

// decoded is one input row before re-scoring: the row, or why not.
type decoded struct {
	row  *Row
	line int
	err  string
}

// Load re-scores every row of a trainer's output with e: a JSONL file of
// rows (verifiers, prime-rl, vf-eval, verl dumps, NeMo Gym rollouts), a
// TRL completions table (.parquet) or a directory of them. Rows that are
// not JSON, or not this environment's, become rows with ScoreError naming
// the line; they never stop the others. A TRL table without its
// example-id column is an error (MissingIDError), as nothing in it says
// which example a completion answered.
func Load(ctx context.Context, path string, e env.Environment, opts Options) (*Run, error) {
	var in []decoded
	var err error
	if IsParquet(path) {
		in, err = readTRL(path, opts.IDColumn)
	} else {
		in, err = readJSONL(ctx, path)
	}
	if err != nil {
		return nil, err
	}
	run := &Run{}
	rubric, from, err := chooseRubric(e, in, opts.Rubric)
	if err != nil {
		return nil, err
	}
	run.Rubric, run.RubricFrom = rubric, from
	var lookup func(id string) (*env.Example, error)
	for _, d := range in {
		if d.row == nil {
			continue
		}
		if run.Format == "" {
			run.Format = d.row.Format
		}
		if d.row.JoinID == "" {
			continue
		}
		if lookup == nil {
			if lookup, run.JoinedFrom, err = examplesByID(ctx, e, opts.Dataset); err != nil {
				return nil, err
			}
		}
		ex, lerr := lookup(d.row.JoinID)
		if lerr != nil {
			continue // Rescore says the row was not joined; the error names the id below
		}
		d.row.Example = ex
		run.Joined++
	}
	for _, d := range in {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if d.row == nil {
			run.Rows = append(run.Rows, artifact.Result{Index: len(run.Rows), ScoreError: d.err})
			run.Lines = append(run.Lines, d.line)
			continue
		}
		res := Rescore(ctx, e, rubric, d.row, len(run.Rows))
		if d.row.JoinID != "" && d.row.Example == nil {
			res.ScoreError = fmt.Sprintf("%s: row %d: example id %q is not in %s; pass --dataset with the rows the trainer used", path, d.line, d.row.JoinID, run.JoinedFrom)
		}
		if d.row.Trainer.Reward == nil && res.Trainer != nil && res.Trainer.Reward != nil {
			run.Derived++
		}
		run.Rows = append(run.Rows, res)
		run.Lines = append(run.Lines, d.line)
	}
	return run, nil
}

func readJSONL(ctx context.Context, path string) ([]decoded, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open results: %w", err)
	}
	defer f.Close()
	var in []decoded
	bad := func(line int, msg string) {
		in = append(in, decoded{line: line, err: fmt.Sprintf("%s: line %d: %s", path, line, msg)})
	}
	opts := artifact.ReadOptions{
		MaxRowBytes: maxLine,
		TooLarge:    func(line int, _ int64) { bad(line, errLongLine.Error()) },
		BadRow:      func(line int, err error) error { bad(line, err.Error()); return nil },
	}
	err = artifact.EachRow(f, path, opts, Decode, func(line int, row *Row) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		in = append(in, decoded{row: row, line: line})
		return nil
	})
	return in, err
}

// anyIDColumn reads a table whatever its id column (to peek at names).
const anyIDColumn = "\x00"

// readTRL reads one completions table or a directory of them.
func readTRL(path, idColumn string) ([]decoded, error) {
	if idColumn == "" {
		idColumn = DefaultIDColumn
	}
	files := []string{path}
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		var ferr error
		if files, ferr = trlFiles(path); ferr != nil {
			return nil, ferr
		}
	}
	var in []decoded
	for _, file := range files {
		rows, err := ReadParquet(file)
		if err != nil {
			return nil, err
		}
		if len(rows) > 0 && idColumn != anyIDColumn {
			if _, ok := rows[0][idColumn]; !ok {
				return nil, &MissingIDError{Path: file, Column: idColumn, Columns: slices.Sorted(maps.Keys(rows[0])), Explicit: idColumn != DefaultIDColumn}
			}
		}
		for i, m := range rows {
			n := len(in) + 1
			row, err := decodeTRL(m, idColumn)
			if err != nil {
				in = append(in, decoded{line: n, err: fmt.Sprintf("%s: row %d: %v", file, i+1, err)})
				continue
			}
			in = append(in, decoded{row: row, line: n})
		}
	}
	return in, nil
}

// chooseRubric picks the rubric the rows are re-scored with and says why.
func chooseRubric(e env.Environment, in []decoded, asked string) (string, string, error) {
	info := e.Info()
	check := func(r, from string) (string, string, error) {
		if !slices.Contains(info.Rubrics, r) {
			return "", "", env.Usagef("rubric %q (%s): environment %s has rubrics %v", r, from, info.ID, info.Rubrics)
		}
		return r, from, nil
	}
	if asked != "" {
		return check(asked, "--rubric")
	}
	recorded := map[string]int{}
	scoredBy := ""
	for _, d := range in {
		if d.row == nil {
			continue
		}
		if d.row.Rubric != "" {
			recorded[d.row.Rubric]++
		}
		if scoredBy == "" {
			scoredBy = d.row.ScoredBy
		}
	}
	switch len(recorded) {
	case 0:
	case 1:
		for r := range recorded {
			return check(r, "recorded on the rows")
		}
	default:
		var parts []string
		for _, r := range slices.Sorted(maps.Keys(recorded)) {
			parts = append(parts, fmt.Sprintf("%s (%d rows)", r, recorded[r]))
		}
		return "", "", env.Usagef("the rows record several rubrics: %s; pass --rubric to re-score them all with one", strings.Join(parts, ", "))
	}
	if scoredBy != "" {
		return check(info.DefaultRubric, "svbench's default: the rows were scored by "+scoredBy+" and name no other rubric")
	}
	return check("reference", "the reference's rubric: the rows carry none of svbench's marks (pass --rubric default for svbench's)")
}

// examplesByID indexes the examples rows are joined to: the dataset file
// when one is given, else every split the environment embeds (a trainer
// is served the train split; an evaluation reads test).
func examplesByID(ctx context.Context, e env.Environment, dataset string) (func(string) (*env.Example, error), string, error) {
	byID := map[string]*env.Example{}
	add := func(ds *env.Dataset) {
		for i := range ds.Examples {
			if _, dup := byID[ds.Examples[i].ID]; !dup {
				byID[ds.Examples[i].ID] = &ds.Examples[i]
			}
		}
	}
	from := ""
	switch {
	case dataset != "":
		ds, err := e.Load(ctx, dataset)
		if err != nil {
			return nil, "", err
		}
		add(ds)
		from = dataset
	default:
		var names []string
		for _, split := range env.SplitNames() {
			ds, err := env.LoadDataset(ctx, e, "", split)
			if errors.Is(err, env.ErrNoSplit) {
				continue
			}
			if err != nil {
				return nil, "", err
			}
			add(ds)
			names = append(names, split)
		}
		from = fmt.Sprintf("%s's embedded splits (%s)", e.Info().ID, strings.Join(names, ", "))
	}
	return func(id string) (*env.Example, error) {
		ex, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("no example %q", id)
		}
		return ex, nil
	}, from, nil
}

// EnvName is the environment the first row that names one names (a
// verifiers row's env_name, svbench's Python client's column names, a
// NeMo Gym row's verifier_metadata.env), "" when none does.
func EnvName(ctx context.Context, path string) string {
	var in []decoded
	if IsParquet(path) {
		in, _ = readTRL(path, anyIDColumn)
	} else {
		in, _ = readJSONL(ctx, path)
	}
	for _, d := range in {
		if d.row != nil && d.row.Trainer.EnvName != "" {
			return d.row.Trainer.EnvName
		}
	}
	return ""
}
