package report

import (
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
)

// TestRunTableSaysWhichSplit: the run table names the split, and a run of
// any split but test opens with "Not an evaluation"; runs of an embedded
// set from before splits were recorded read as test.
func TestRunTableSaysWhichSplit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		meta      artifact.Metadata
		cell      string
		notAnEval bool
	}{
		{"test", artifact.Metadata{Dataset: "embedded:e1-mini", Split: "test"}, "test (the evaluation set)", false},
		{"old embedded run", artifact.Metadata{Dataset: "embedded:e1-mini"}, "test (the evaluation set)", false},
		{"train", artifact.Metadata{Dataset: "embedded:e1-train", Split: "train"}, "train (not an evaluation", true},
		{"dev", artifact.Metadata{Dataset: "embedded:e1-dev", Split: "dev"}, "dev (not an evaluation", true},
		{"unnamed file", artifact.Metadata{Dataset: "flows.jsonl"}, "— (not recorded", false},
		{"trainer rows", artifact.Metadata{Dataset: "embedded:e1-mini", Source: "trainer:verl"}, "— (not recorded", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			md := RunTable(&tc.meta)
			if !strings.Contains(md, "| split | "+tc.cell) {
				t.Errorf("split cell: want %q in\n%s", tc.cell, md)
			}
			if got := strings.HasPrefix(md, "> **Not an evaluation"); got != tc.notAnEval {
				t.Errorf("warning: got %v, want %v\n%s", got, tc.notAnEval, md)
			}
		})
	}
}
