package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/base/version"
	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/ingest"
	_ "github.com/svbench/svbench/internal/envs" // registers every environment
	"github.com/svbench/svbench/report"
	"github.com/svbench/svbench/runner"
)

// scoredRow is one output line of `svbench score`.
type scoredRow struct {
	Line       int                `json:"line"`
	Reward     float64            `json:"reward"`
	Components map[string]float64 `json:"components"`
	Parsed     map[string]any     `json:"parsed,omitempty"`
	Solved     *bool              `json:"solved,omitempty"`
	Error      string             `json:"error,omitempty"`
	// Unverifiable says why a trainer's row could not be re-scored here;
	// Reward and Components then repeat what the trainer recorded.
	Unverifiable string `json:"unverifiable,omitempty"`
	// Trainer and Agreement are set for a trainer's rows (verifiers /
	// prime-rl format): its bookkeeping and whether svbench reproduced
	// the reward it recorded.
	Trainer   *artifact.Trainer `json:"trainer,omitempty"`
	Agreement *ingest.Agreement `json:"agreement,omitempty"`

	// result is the row as a run's results.jsonl holds it, for --run-dir.
	result *artifact.Result
}

// scoreBatch bounds the rows held at once: output stays in input order while
// a batch is scored in parallel.
const scoreBatch = 4096

// scoreBatchBytes bounds the input bytes held at once: 4,096 E2 rows with
// whole transcripts once held gigabytes.
const scoreBatchBytes = 64 << 20

func newScoreCmd() *cobra.Command {
	var envName, rubric, input, output, runDir, model string
	var workers int
	var pf paramFlags
	cmd := &cobra.Command{
		Use:   "score",
		Short: "Score completions produced elsewhere (e.g. vLLM batch outputs) offline",
		Long: `Score rows {completion: string | messages, answer, ...} with an environment's rubric.
Any other fields of the environment's dataset row format may ride along. Writes one JSON
line per input row, in input order: line, reward, components, parsed, and error when the
row is invalid (an invalid row never stops the others). --param and -a set the
environment's parameters as for eval (svbench envs lists them).`,
		Example: `  svbench score --env e1 --input completions.jsonl
  svbench score --env e1 --rubric reference --input vllm_out.jsonl --output scored.jsonl
  svbench score --env e3 --param sandbox=bwrap --param test_timeout=60 --input patches.jsonl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if input == "" {
				return usagef("--input is required (a JSONL file, or - for standard input)")
			}
			if err := checkConcurrency("-c/--concurrency", workers); err != nil {
				return err
			}
			params, err := pf.parse()
			if err != nil {
				return err
			}
			e, err := newEnv(envName, params, nil)
			if err != nil {
				return err
			}
			if rubric != "" && !contains(e.Info().Rubrics, rubric) {
				return usagef("--rubric %q: environment %s has rubrics %v", rubric, e.Info().ID, e.Info().Rubrics)
			}
			var in io.Reader = cmd.InOrStdin()
			name := "stdin"
			if input != "-" {
				f, err := os.Open(input)
				if err != nil {
					return err
				}
				defer f.Close()
				in, name = f, input
			}
			out := cmd.OutOrStdout()
			if output != "" {
				f, err := os.Create(output)
				if err != nil {
					return err
				}
				defer f.Close()
				out = f
			}
			if workers == 0 {
				workers = runtime.GOMAXPROCS(0)
			}
			var runResults *os.File
			if runDir != "" {
				if err := os.MkdirAll(runDir, 0o755); err != nil {
					return err
				}
				if runResults, err = os.Create(filepath.Join(runDir, artifact.ResultsFile)); err != nil {
					return err
				}
				defer runResults.Close()
			}
			var rw io.Writer
			if runResults != nil {
				rw = runResults
			}
			n, bad, unverifiable, err := scoreStream(cmd.Context(), e, rubric, in, name, out, rw, workers)
			if err != nil {
				return err
			}
			if runDir != "" {
				if err := runResults.Close(); err != nil {
					return err
				}
				if err := writeScoredRun(cmd, runDir, e, params, rubric, input, model, n); err != nil {
					return err
				}
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "scored %d rows (%d invalid, %d not re-verifiable) with %s/%s\n", n, bad, unverifiable, e.Info().ID, orDefault(rubric, e.Info().DefaultRubric))
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&envName, "env", "", "environment (e1, e2, e4, …)")
	fs.StringVar(&rubric, "rubric", "", "rubric (default: the environment's default)")
	fs.StringVar(&input, "input", "", "rows to score (JSONL; - for stdin)")
	fs.StringVarP(&output, "output", "o", "", "write scores here instead of stdout")
	fs.IntVarP(&workers, "concurrency", "c", 0, "scoring workers (default: all cores)")
	fs.StringVar(&model, "model", "unknown", "the model that wrote the completions, recorded with --run-dir")
	fs.StringVar(&runDir, "run-dir", "", "also write the scored rows as a run (results.jsonl + metadata.json) with its report into this directory")
	pf.register(fs)
	return cmd
}

func scoreStream(ctx context.Context, e env.Environment, rubric string, in io.Reader, name string, out, runResults io.Writer, workers int) (n, bad, unverifiable int, err error) {
	w := bufio.NewWriterSize(out, 1<<16)
	var rw *json.Encoder
	if runResults != nil {
		rw = json.NewEncoder(runResults)
	}
	type item struct {
		line    int
		raw     []byte
		lineErr error
	}
	batch := make([]item, 0, scoreBatch)
	held := 0
	results := make([]scoredRow, scoreBatch)
	flush := func() error {
		var wg sync.WaitGroup
		next := make(chan int)
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					if batch[i].lineErr != nil {
						results[i] = scoredRow{Line: batch[i].line, Error: batch[i].lineErr.Error()}
						continue
					}
					results[i] = scoreOne(ctx, e, rubric, batch[i].line, batch[i].raw)
				}
			}()
		}
		for i := range batch {
			next <- i
		}
		close(next)
		wg.Wait()
		enc := json.NewEncoder(w)
		for i := range batch {
			if results[i].Error != "" {
				bad++
			}
			if results[i].Unverifiable != "" {
				unverifiable++
			}
			if err := enc.Encode(&results[i]); err != nil {
				return err
			}
			if rw != nil {
				res := results[i].result
				if res == nil {
					res = &artifact.Result{Index: results[i].Line - 1, ScoreError: results[i].Error}
				}
				if err := rw.Encode(res); err != nil {
					return fmt.Errorf("write run results: %w", err)
				}
			}
			results[i] = scoredRow{}
		}
		n += len(batch)
		clear(batch)
		batch, held = batch[:0], 0
		return w.Flush()
	}
	err = eachRawLine(in, name, func(line int, raw []byte, lineErr error) error {
		batch = append(batch, item{line, append([]byte(nil), raw...), lineErr})
		held += len(raw)
		if len(batch) == scoreBatch || held >= scoreBatchBytes {
			return flush()
		}
		return ctx.Err()
	})
	if err != nil {
		return n, bad, unverifiable, err
	}
	if len(batch) > 0 {
		if err := flush(); err != nil {
			return n, bad, unverifiable, err
		}
	}
	return n, bad, unverifiable, nil
}

// eachRawLine is like dataset.EachLine but hands every problem line to the
// scorer as a row error instead of stopping: invalid JSON, and a line over
// dataset.MaxLine (skipped without buffering it). One bad row must not lose
// the rest. A UTF-8 byte-order mark is dropped.
func eachRawLine(in io.Reader, name string, fn func(line int, raw []byte, lineErr error) error) error {
	br := bufio.NewReaderSize(in, 1<<20)
	for line := 1; ; line++ {
		raw, long, err := dataset.ReadLine(br, dataset.MaxLine)
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: line %d: %w", name, line, err)
		}
		switch {
		case long:
			if ferr := fn(line, nil, fmt.Errorf("line %d is longer than %d MiB; skipped", line, dataset.MaxLine>>20)); ferr != nil {
				return ferr
			}
		case len(bytes.TrimSpace(dataset.TrimBOM(raw))) > 0:
			if ferr := fn(line, bytes.TrimSpace(dataset.TrimBOM(raw)), nil); ferr != nil {
				return ferr
			}
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}

func scoreOne(ctx context.Context, e env.Environment, rubric string, line int, raw []byte) (row scoredRow) {
	row.Line = line
	defer func() {
		if r := recover(); r != nil {
			row = scoredRow{Line: line, Error: fmt.Sprintf("internal error scoring this row: %v", r)}
		}
	}()
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) == nil && ingest.IsTrainerRow(fields) {
		return scoreTrainerRow(ctx, e, rubric, line, raw)
	}
	var head struct {
		Completion *env.Completion `json:"completion"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		row.Error = fmt.Sprintf("line %d: not a JSON object with a valid \"completion\": %v", line, err)
		return row
	}
	if head.Completion == nil {
		row.Error = fmt.Sprintf("line %d: field \"completion\" missing (a string, or a list of messages)", line)
		return row
	}
	ex, err := e.ParseExample(raw)
	if err != nil {
		row.Error = fmt.Sprintf("line %d: %v", line, err)
		return row
	}
	ro := env.OutsideRollout(head.Completion.Messages)
	sc, err := e.Score(ctx, ex, ro, rubric)
	if err != nil {
		row.Error = fmt.Sprintf("line %d: %v", line, err)
		return row
	}
	solved := sc.Solved
	row.Reward, row.Components, row.Parsed, row.Solved = sc.Total, sc.Components, sc.Parsed, &solved
	row.result = &artifact.Result{
		Index: line - 1, ExampleID: ex.ID, Prompt: ex.Prompt, Answer: ex.Answer, Meta: ex.Meta,
		Completion: ro.Completion, FinalText: ro.FinalText(), Turns: ro.Turns,
		Reward: sc.Total, Components: sc.Components, Parsed: sc.Parsed, Solved: &solved, Rubric: sc.Rubric,
	}
	return row
}

// scoreTrainerRow re-scores one row in the verifiers / prime-rl format.
func scoreTrainerRow(ctx context.Context, e env.Environment, rubric string, line int, raw []byte) scoredRow {
	row := scoredRow{Line: line}
	tr, err := ingest.Decode(raw)
	if err != nil {
		row.Error = fmt.Sprintf("line %d: %v", line, err)
		return row
	}
	if len(tr.Completion) == 0 {
		row.Error = fmt.Sprintf("line %d: field \"completion\" missing or empty (a string, a list of messages, or one as JSON text)", line)
		return row
	}
	res := ingest.Rescore(ctx, e, rubric, tr, line-1)
	row.result = &res
	row.Reward, row.Components, row.Parsed, row.Solved = res.Reward, res.Components, res.Parsed, res.Solved
	row.Unverifiable, row.Trainer = res.Unverifiable, res.Trainer
	if res.ScoreError != "" {
		row.Error = fmt.Sprintf("line %d: %s", line, res.ScoreError)
	}
	row.Agreement = ingest.Compare(&res)
	return row
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// writeScoredRun gives rows scored offline the artifacts of a run, so the
// report, scoreboard and dashboard read them like an evaluation's.
func writeScoredRun(cmd *cobra.Command, dir string, e env.Environment, params map[string]string, rubric, input, model string, n int) error {
	info := e.Info()
	meta := &artifact.Metadata{
		RunID: runner.NewRunID(time.Now()), Source: "score", Environment: info.ID, EnvVersion: info.Version,
		Rubric: orDefault(rubric, info.DefaultRubric), Params: params, Model: model, Dataset: input, DatasetRows: n, NumExamples: n,
		Rollouts: 1, Status: artifact.StatusCompleted, Completed: n, SolvedWhen: info.SolvedWhen,
		GitCommit: version.GitCommit(), SvbenchVersion: version.Version, GoVersion: version.Go(), Started: time.Now().UTC(),
	}
	meta.RubricInfo = env.RubricInfoOf(e, meta.Rubric)
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), meta); err != nil {
		return err
	}
	rep, err := report.FromRun(dir, info.ID, report.Options{})
	if err != nil {
		return fmt.Errorf("report for %s: %w", dir, err)
	}
	if err := report.WriteDir(dir, rep); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "wrote the scored rows as a run with its report to %s\n", dir)
	return nil
}
