package web

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
)

const benchRows = 100_000

var (
	bigOnce sync.Once
	bigRoot string
	bigErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if bigRoot != "" {
		os.RemoveAll(bigRoot)
	}
	os.Exit(code)
}

// bigRun writes a 100k-row run (about 1 KB a row) once per test binary.
func bigRun(b *testing.B) (root, id, path string) {
	bigOnce.Do(func() {
		bigRoot, bigErr = os.MkdirTemp("", "svbench-view-bench")
		if bigErr != nil {
			return
		}
		dir := filepath.Join(bigRoot, "evals", "network-logs--big", "run")
		if bigErr = os.MkdirAll(dir, 0o755); bigErr != nil {
			return
		}
		meta := artifact.Metadata{RunID: "run", Environment: "network-logs", Model: "big", Status: artifact.StatusCompleted, Completed: benchRows}
		if bigErr = artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), &meta); bigErr != nil {
			return
		}
		f, err := os.Create(filepath.Join(dir, artifact.ResultsFile))
		if err != nil {
			bigErr = err
			return
		}
		defer f.Close()
		text := strings.Repeat("The connection to 10.0.0.7:445 repeats every 30 s. ", 8)
		for i := range benchRows {
			solved := i%3 != 0
			r := artifact.Result{Index: i / 4, Rollout: i % 4, ExampleID: fmt.Sprintf("ex-%d", i/4), Model: "big",
				Prompt:     []env.Message{{Role: env.RoleUser, Content: "Classify: " + text[:200]}},
				Completion: []env.Message{{Role: env.RoleAssistant, Content: text, Reasoning: text[:150]}},
				FinalText:  text, Reward: float64(i%97) / 97, Solved: &solved,
				Components: map[string]float64{"accuracy": float64(i % 2), "format": 1}, Time: time.Unix(0, 0).UTC()}
			line, _ := json.Marshal(r)
			if _, err := f.Write(append(line, '\n')); err != nil {
				bigErr = err
				return
			}
		}
	})
	if bigErr != nil {
		b.Fatal(bigErr)
	}
	id = "evals/network-logs--big/run"
	return bigRoot, id, filepath.Join(bigRoot, filepath.FromSlash(id), artifact.ResultsFile)
}

// BenchmarkTranscriptPage is the time to the full answer (so at least to
// the first byte) of a transcript page deep in a 100k-row run, with the
// offset index built (as after the first visit): filter, sort, and read 50
// rows by offset.
func BenchmarkTranscriptPage(b *testing.B) {
	root, id, _ := bigRun(b)
	s, err := New(root, Options{})
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name, q string
		cold    bool
	}{
		{"page=1500", "page=1500", false},
		{"wrong,lowest-reward,page=300", "filter=wrong&sort=reward-asc&page=300", false},
		// The first request of a filter and order computes the selection.
		{"wrong,lowest-reward,page=300,first-request", "filter=wrong&sort=reward-asc&page=300", true},
	}
	ix := s.index(runRef{rel: filepath.FromSlash(id)})
	for _, c := range cases {
		q := c.q
		b.Run(c.name, func(b *testing.B) {
			serve := func() {
				w := httptest.NewRecorder()
				s.ServeHTTP(w, httptest.NewRequest("GET", "/transcripts?id="+id+"&"+q, nil))
				if w.Code != 200 || !strings.Contains(w.Body.String(), "rollout-link") {
					b.Fatalf("status %d", w.Code)
				}
			}
			serve() // builds the index
			for b.Loop() {
				if c.cold {
					ix.mu.Lock()
					ix.sel = nil
					ix.mu.Unlock()
				}
				serve()
			}
		})
	}
}

// BenchmarkTranscriptPageNaive is the alternative: decode the whole file
// per request and slice out the page.
func BenchmarkTranscriptPageNaive(b *testing.B) {
	_, _, path := bigRun(b)
	for b.Loop() {
		rows, err := artifact.ReadResults(path)
		if err != nil || len(rows) != benchRows {
			b.Fatal(err)
		}
		page := rows[1500*pageSize : 1501*pageSize]
		_ = page
	}
}

// BenchmarkIndexBuild is the one-off cost of the first visit.
func BenchmarkIndexBuild(b *testing.B) {
	_, _, path := bigRun(b)
	for b.Loop() {
		ix := &fileIndex{name: path, open: func() (*os.File, error) { return os.Open(path) }, maxRow: DefaultMaxRowBytes}
		rows, err := ix.update()
		if err != nil || len(rows) != benchRows {
			b.Fatal(err)
		}
	}
}
