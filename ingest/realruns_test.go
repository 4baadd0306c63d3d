package ingest_test

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/svbench/svbench/base/sharedtest"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/configaudit"
	"github.com/svbench/svbench/envs/netlogs"
	"github.com/svbench/svbench/ingest"
)

// TestRealRunsRescore re-scores the reference's real hosted-training rows
// with the reference rubric: every recorded reward and component must come
// back (E1: the answers sit in reasoning_content with content null; E2: the
// configuration is read from the prompt, never from the row's absolute
// fixture path; judge components are kept as recorded).
func TestRealRunsRescore(t *testing.T) {
	for _, c := range []struct {
		run        string
		rows       int
		judgeOnly  bool
		execMean   float64 // svbench's executable re-score, mean over rows
		recordMean float64
	}{
		{run: "e1-hybrid", rows: 25, execMean: 1.7064, recordMean: 1.7064},
		{run: "e1-llm_judge", rows: 25, judgeOnly: true, execMean: -1, recordMean: 0.56},
		{run: "e2-hybrid", rows: 16, execMean: 0.2, recordMean: 0.575},
	} {
		t.Run(c.run, func(t *testing.T) {
			dir := sharedtest.RealRun(t, c.run)
			var rows, reproduced int
			var execSum, recSum float64
			envE := envFor(t, c.run)
			res, _, err := ingest.LoadRun(context.Background(), filepath.Join(dir, "results.jsonl"), envE, "reference")
			if err != nil {
				t.Fatal(err)
			}
			for i := range res {
				r := &res[i]
				rows++
				if r.ScoreError != "" || r.Unverifiable != "" {
					t.Errorf("row %d: score error %q, unverifiable %q", i, r.ScoreError, r.Unverifiable)
					continue
				}
				a := ingest.Compare(r)
				if a == nil {
					t.Fatalf("row %d: no agreement", i)
				}
				if a.Reproduce && len(a.Components) == 0 {
					reproduced++
				} else {
					t.Errorf("row %d: recorded %v %v, re-scored %v %v (differing %v)", i, a.Recorded, r.Trainer.Components, a.Rescored, r.Components, a.Components)
				}
				if r.Trainer.Executable == nil {
					t.Fatalf("row %d: no executable re-score", i)
				}
				execSum += *r.Trainer.Executable
				recSum += *r.Trainer.Reward
				if r.Trainer.Rebuilt == "" && c.run != "e2-hybrid" {
					t.Errorf("row %d: completion not rebuilt", i)
				}
				if _, ok := r.Trainer.Components["judge"]; ok && r.Trainer.Kept == "" {
					t.Errorf("row %d: judge component kept without saying so", i)
				}
			}
			if rows != c.rows || reproduced != c.rows {
				t.Errorf("reproduced %d/%d rows, want %d/%d", reproduced, rows, c.rows, c.rows)
			}
			n := float64(rows)
			if got := recSum / n; math.Abs(got-c.recordMean) > 1e-3 {
				t.Errorf("recorded mean %.4f, want %.4f", got, c.recordMean)
			}
			if c.execMean >= 0 {
				if got := execSum / n; math.Abs(got-c.execMean) > 1e-3 {
					t.Errorf("executable mean %.4f, want %.4f", got, c.execMean)
				}
			}
			t.Logf("%s: %d/%d reproduced; recorded mean %.4f, executable mean %.4f", c.run, reproduced, rows, recSum/n, execSum/n)
		})
	}
}

func envFor(t *testing.T, run string) env.Environment {
	t.Helper()
	if run == "e2-hybrid" {
		e, err := configaudit.New(env.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	return netlogs.New()
}
