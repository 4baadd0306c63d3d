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
	// MaxTableBytes bounds what one TRL table may decode to
	// (DefaultMaxTableBytes when 0): ReadParquet's limit.
	MaxTableBytes int64
	// Keep trims each re-scored row as soon as it is made (report.Slim
	// keeps what reports read): a run's rows are then held as a report
	// needs them, not whole. nil keeps them whole.
	Keep func(*artifact.Result)
}

// Run is a trainer's rows re-scored.
type Run struct {
	Rows []artifact.Result
	// Lines holds each row's 1-based line (JSONL) or row number (parquet,
	// counted across a directory's tables in step order; a table that
	// cannot be read takes one number).
	Lines  []int
	Format string
	Rubric string
	// RubricFrom says why Rubric was chosen.
	RubricFrom string
	// Joined counts rows found in the dataset (by example id, or by
	// prompt: JoinedByPrompt of them); JoinedFrom names what they were
	// joined to.
	Joined, JoinedByPrompt int
	JoinedFrom             string
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
// the line; they never stop the others, and neither does a table of a
// directory that cannot be read (it becomes one such row naming the
// table). A TRL table without its example-id column is an error
// (MissingIDError), as nothing in it says which example a completion
// answered.
//
// Rows are read as they are re-scored, not all first: a run's input is
// read twice when the rubric has to be chosen from what the rows record,
// so that only the re-scored rows (trimmed by opts.Keep) are ever held.
func Load(ctx context.Context, path string, e env.Environment, opts Options) (*Run, error) {
	run := &Run{}
	var seen recorded
	if opts.Rubric == "" {
		if err := eachInput(ctx, path, opts, func(d decoded) error { seen.add(d); return nil }); err != nil {
			return nil, err
		}
	}
	rubric, from, err := chooseRubric(e, seen, opts.Rubric)
	if err != nil {
		return nil, err
	}
	run.Rubric, run.RubricFrom = rubric, from
	var index *exampleIndex
	err = eachInput(ctx, path, opts, func(d decoded) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.row == nil {
			run.Rows = append(run.Rows, artifact.Result{Index: len(run.Rows), ScoreError: d.err})
			run.Lines = append(run.Lines, d.line)
			return nil
		}
		if run.Format == "" {
			run.Format = d.row.Format
		}
		// A NeMo Gym rollout from a dataset svbench did not write names no
		// example (no verifier_metadata) and holds no answer: its prompt
		// is what says which example it answered.
		byPrompt := d.row.Format == FormatNemoGym && d.row.JoinID == "" && d.row.ExampleRow == nil && !present(d.row.Answer)
		var joinErr error
		if d.row.JoinID != "" || byPrompt {
			if index == nil {
				var err error
				if index, err = examplesOf(ctx, e, opts.Dataset); err != nil {
					return err
				}
				run.JoinedFrom = index.from
			}
			var ex *env.Example
			if byPrompt {
				if ex, joinErr = index.byPromptOf(d.row.Prompt); joinErr == nil {
					run.JoinedByPrompt++
				}
			} else if ex = index.byID[d.row.JoinID]; ex == nil {
				joinErr = fmt.Errorf("example id %q is not in %s", d.row.JoinID, index.from)
			}
			if ex != nil {
				d.row.Example = ex
				run.Joined++
			}
		}
		res := Rescore(ctx, e, rubric, d.row, len(run.Rows))
		switch {
		case joinErr != nil && byPrompt:
			res.ScoreError = fmt.Sprintf("%s: row %d: no verifier_metadata names its example, and %v; pass --dataset with the rows the trainer used", path, d.line, joinErr)
		case joinErr != nil:
			res.ScoreError = fmt.Sprintf("%s: row %d: %v; pass --dataset with the rows the trainer used", path, d.line, joinErr)
		}
		if d.row.Trainer.Reward == nil && res.Trainer != nil && res.Trainer.Reward != nil {
			run.Derived++
		}
		if opts.Keep != nil {
			opts.Keep(&res)
		}
		run.Rows = append(run.Rows, res)
		run.Lines = append(run.Lines, d.line)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return run, nil
}

// eachInput hands fn every row of a trainer's output in file order; an
// error from fn stops the reading and is returned.
func eachInput(ctx context.Context, path string, opts Options, fn func(decoded) error) error {
	if IsParquet(path) {
		return eachTRL(path, opts.IDColumn, opts.MaxTableBytes, fn)
	}
	if files := verlFiles(path); len(files) > 0 {
		return eachVerlStep(ctx, files, fn)
	}
	return eachJSONL(ctx, path, fn)
}

// eachVerlStep reads a verl rollout_data_dir's step files in step order as
// one run: a row's line counts across the files (each error still names
// its own file and line), and each row carries the step verl wrote in it.
func eachVerlStep(ctx context.Context, files []string, fn func(decoded) error) error {
	off := 0
	for _, file := range files {
		last := 0
		err := eachJSONL(ctx, file, func(d decoded) error {
			last = d.line
			d.line += off
			return fn(d)
		})
		if err != nil {
			return err
		}
		off += last
	}
	return nil
}

func eachJSONL(ctx context.Context, path string, fn func(decoded) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("open results: %w", err)
	}
	defer f.Close()
	var ferr error // fn's error, returned as is
	bad := func(line int, msg string) {
		if ferr == nil {
			ferr = fn(decoded{line: line, err: fmt.Sprintf("%s: line %d: %s", path, line, msg)})
		}
	}
	opts := artifact.ReadOptions{
		MaxRowBytes: maxLine,
		TooLarge:    func(line int, _ int64) { bad(line, errLongLine.Error()) },
		BadRow:      func(line int, err error) error { bad(line, err.Error()); return ferr },
	}
	err = artifact.EachRow(f, path, opts, Decode, func(line int, row *Row) error {
		if ferr != nil {
			return ferr
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if ferr = fn(decoded{row: row, line: line}); ferr != nil {
			return ferr
		}
		return nil
	})
	if ferr != nil {
		return ferr
	}
	return err
}

// anyIDColumn reads a table whatever its id column (to peek at names).
const anyIDColumn = "\x00"

// eachTRL reads one completions table or a directory of them, a table at a
// time (each bounded by limit). In a directory, a table that cannot be
// read is one bad row naming it, and the tables after it are read: one
// corrupt logging step must not hide the run. A single table that cannot
// be read is the error.
func eachTRL(path, idColumn string, limit int64, fn func(decoded) error) error {
	if idColumn == "" {
		idColumn = DefaultIDColumn
	}
	files := []string{path}
	dir := false
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		var ferr error
		if files, ferr = trlFiles(path); ferr != nil {
			return ferr
		}
		dir = true
	}
	n := 0
	for _, file := range files {
		rows, err := ReadParquet(file, limit)
		if err != nil {
			if !dir {
				return err
			}
			n++
			if ferr := fn(decoded{line: n, err: fmt.Sprintf("table skipped: %v", err)}); ferr != nil {
				return ferr
			}
			continue
		}
		if len(rows) > 0 && idColumn != anyIDColumn {
			if _, ok := rows[0][idColumn]; !ok {
				return &MissingIDError{Path: file, Column: idColumn, Columns: slices.Sorted(maps.Keys(rows[0])), Explicit: idColumn != DefaultIDColumn}
			}
		}
		for i, m := range rows {
			rows[i] = nil // the re-scored row is all that is kept of it
			n++
			d := decoded{line: n}
			if row, err := decodeTRL(m, idColumn); err != nil {
				d.err = fmt.Sprintf("%s: row %d: %v", file, i+1, err)
			} else {
				d.row = row
			}
			if ferr := fn(d); ferr != nil {
				return ferr
			}
		}
	}
	return nil
}

// recorded is what the rows say about how they were scored: what
// chooseRubric reads.
type recorded struct {
	rubrics  map[string]int
	scoredBy string
}

func (r *recorded) add(d decoded) {
	if d.row == nil {
		return
	}
	if d.row.Rubric != "" {
		if r.rubrics == nil {
			r.rubrics = map[string]int{}
		}
		r.rubrics[d.row.Rubric]++
	}
	if r.scoredBy == "" {
		r.scoredBy = d.row.ScoredBy
	}
}

// chooseRubric picks the rubric the rows are re-scored with and says why.
func chooseRubric(e env.Environment, seen recorded, asked string) (string, string, error) {
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
	recorded, scoredBy := seen.rubrics, seen.scoredBy
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
// exampleIndex finds the examples a trainer's rows answered: by id, or
// by prompt for a row that names none.
type exampleIndex struct {
	byID     map[string]*env.Example
	byPrompt map[string][]*env.Example
	from     string // what the examples were read from
}

func examplesOf(ctx context.Context, e env.Environment, dataset string) (*exampleIndex, error) {
	ix := &exampleIndex{byID: map[string]*env.Example{}, byPrompt: map[string][]*env.Example{}}
	add := func(ds *env.Dataset) {
		for i := range ds.Examples {
			ex := &ds.Examples[i]
			if _, dup := ix.byID[ex.ID]; dup {
				continue
			}
			ix.byID[ex.ID] = ex
			if k := promptKey(ex.Prompt); k != "" {
				ix.byPrompt[k] = append(ix.byPrompt[k], ex)
			}
		}
	}
	switch {
	case dataset != "":
		ds, err := e.Load(ctx, dataset)
		if err != nil {
			return nil, err
		}
		add(ds)
		ix.from = dataset
	default:
		var names []string
		for _, split := range env.SplitNames() {
			ds, err := env.LoadDataset(ctx, e, "", split)
			if errors.Is(err, env.ErrNoSplit) {
				continue
			}
			if err != nil {
				return nil, err
			}
			add(ds)
			names = append(names, split)
		}
		ix.from = fmt.Sprintf("%s's embedded splits (%s)", e.Info().ID, strings.Join(names, ", "))
	}
	return ix, nil
}

// promptKey is what a row's prompt is matched on: its last user message,
// whitespace collapsed. A trainer's dataset wraps svbench's prompt in its
// own system message and template as often as not; the task text itself
// is what both keep.
func promptKey(msgs []env.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == env.RoleUser {
			return strings.Join(strings.Fields(msgs[i].Content), " ")
		}
	}
	return ""
}

// byPromptOf is the one example whose prompt the row's last user message
// is; several examples sharing it are ambiguous, and no guess is made.
func (ix *exampleIndex) byPromptOf(prompt []env.Message) (*env.Example, error) {
	k := promptKey(prompt)
	if k == "" {
		return nil, errors.New("it has no user message to match")
	}
	switch m := ix.byPrompt[k]; len(m) {
	case 0:
		return nil, fmt.Errorf("its last user message is the prompt of no example in %s", ix.from)
	case 1:
		return m[0], nil
	default:
		return nil, fmt.Errorf("its last user message is the prompt of %d examples in %s (%s, %s, ...)", len(m), ix.from, m[0].ID, m[1].ID)
	}
}

// EnvName is the environment the first row that names one names (a
// verifiers row's env_name, svbench's Python client's column names, a
// NeMo Gym row's verifier_metadata.env), "" when none does.
func EnvName(ctx context.Context, path string) string {
	name := ""
	errFound := errors.New("found")
	_ = eachInput(ctx, path, Options{IDColumn: anyIDColumn}, func(d decoded) error {
		if d.row != nil && d.row.Trainer.EnvName != "" {
			name = d.row.Trainer.EnvName
			return errFound // the rows after it are not read
		}
		return nil
	})
	return name
}
