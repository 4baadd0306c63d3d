package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/llm/llmtest"
)

// answerEcho answers the toy task correctly for even examples.
func answerEcho(req llmtest.ChatRequest) llmtest.Reply {
	last, _ := req.Messages[len(req.Messages)-1]["content"].(string)
	var word string
	var n int
	_, _ = fmt.Sscan(last, &word, &n)
	if n%2 == 0 {
		return llmtest.Reply{Content: "alpha"}
	}
	return llmtest.Reply{Content: "gamma"}
}

// newClient is a client for srv over loopback with fast retries. Its
// per-attempt timeout is only a hang guard: a slow answer on a loaded machine
// must not turn into a retry (TestEarlyStopAfterConsecutiveErrors counts
// requests). Tests that need a short timeout to fire use newPipeClient in a
// synctest bubble, where it fires on the fake clock.
func newClient(t testing.TB, srv *llmtest.Server, key string) *llm.OpenAI {
	t.Helper()
	return newClientConfig(t, llm.Config{BaseURL: srv.BaseURL(), APIKey: key, Timeout: 30 * time.Second})
}

func newClientConfig(t testing.TB, cfg llm.Config) *llm.OpenAI {
	t.Helper()
	cfg.MaxRetries, cfg.InitialBackoff, cfg.MaxBackoff, cfg.MaxInFlight = 6, time.Millisecond, 10*time.Millisecond, 64
	c, err := llm.NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func baseConfig(t testing.TB, client llm.Client, rows int) Config {
	e := toyEnv{rows: rows}
	return Config{Env: e, Dataset: InMemory(e.dataset()), Client: client, Model: "fake/model-1", BaseURL: "http://user:pw@127.0.0.1/v1?key=x",
		Rollouts: 1, Concurrency: 8, Seed: 7, MaxConsecutiveErrors: 3, OutDir: t.TempDir()}
}

func readRows(t *testing.T, dir string) []artifact.Result {
	t.Helper()
	rows, err := artifact.ReadResults(filepath.Join(dir, artifact.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func uniquePairs(rows []artifact.Result) int {
	m := map[artifact.Key]bool{}
	for _, r := range rows {
		m[r.Key()] = true
	}
	return len(m)
}

// TestRunSurvivesInjectedFaults: every third request fails in a rotating way
// (including a hang that only the client's 300 ms per-attempt timeout ends);
// retries recover them all. It runs in a synctest bubble so the timeout, the
// hang and the backoff are on the fake clock: a slow answer on a loaded
// machine cannot be mistaken for a hang.
func TestRunSurvivesInjectedFaults(t *testing.T) {
	faults := []llmtest.Fault{llmtest.RateLimited, llmtest.ServerError, llmtest.Hang, llmtest.MalformedJSON, llmtest.EmptyChoices, llmtest.ConnectionReset}
	srv := llmtest.New(llmtest.Options{HangFor: time.Second, Respond: answerEcho, Schedule: func(n int64) llmtest.Fault {
		if n%3 == 0 {
			return faults[(n/3)%int64(len(faults))]
		}
		return llmtest.OK
	}})
	defer srv.Close()
	synctest.Test(t, func(t *testing.T) {
		cfg := baseConfig(t, newPipeClient(t, srv, "k", 300*time.Millisecond), 60)
		cfg.Rollouts = 2
		out, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		rows := readRows(t, out.Dir)
		if len(rows) != 120 || uniquePairs(rows) != 120 {
			t.Fatalf("rows = %d unique = %d, want 120", len(rows), uniquePairs(rows))
		}
		for _, r := range rows {
			if r.Error != "" {
				t.Fatalf("row %d failed: %s", r.Index, r.Error)
			}
			want := 0.0
			if r.Index%2 == 0 {
				want = 1
			}
			if r.Reward != want {
				t.Fatalf("row %d reward %v want %v (final %q)", r.Index, r.Reward, want, r.FinalText)
			}
		}
		m := out.Metadata
		if m.Status != artifact.StatusCompleted || m.Completed != 120 || m.AvgReward != 0.5 {
			t.Fatalf("metadata = %+v", m)
		}
		if m.PassAtK["pass@1"] != 0.5 || m.PassAtK["pass@2"] != 0.5 {
			t.Fatalf("pass@k = %v", m.PassAtK)
		}
		if strings.Contains(m.BaseURL, "pw") || strings.Contains(m.BaseURL, "key=") {
			t.Fatalf("base url not redacted: %s", m.BaseURL)
		}
	})
}

func TestEarlyStopAfterConsecutiveErrors(t *testing.T) {
	srv := llmtest.New(llmtest.Options{Schedule: func(int64) llmtest.Fault { return llmtest.Unauthorized }})
	defer srv.Close()
	cfg := baseConfig(t, newClient(t, srv, "k"), 50)
	cfg.Concurrency = 1
	out, err := Run(context.Background(), cfg)
	if err == nil || !strings.Contains(err.Error(), "consecutive") {
		t.Fatalf("err = %v", err)
	}
	if out.Metadata.Status != artifact.StatusEarlyStop {
		t.Fatalf("status = %s", out.Metadata.Status)
	}
	if got := srv.Requests(); got != 3 {
		t.Fatalf("requests = %d, want 3", got)
	}
	// The failed rows stay in the results scored as no answer (the run
	// could end here), keeping their error so resume retries them.
	failed := readRows(t, out.Dir)
	if len(failed) != 3 {
		t.Fatalf("%d rows after the early stop, want 3", len(failed))
	}
	for _, r := range failed {
		if r.Error == "" || r.Solved == nil || *r.Solved || r.Reward != 0 || r.Components == nil || r.ScoreError != "" {
			t.Fatalf("failed row not scored as no answer: %+v", r)
		}
	}
	// Fix the endpoint and resume: the failed rows are redone, none doubled.
	srv.Update(func(o *llmtest.Options) { o.Schedule, o.Respond = nil, answerEcho })
	cfg.ResumeDir = out.Dir
	out, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	rows := readRows(t, out.Dir)
	if len(rows) != 50 || uniquePairs(rows) != 50 {
		t.Fatalf("after resume rows = %d unique = %d", len(rows), uniquePairs(rows))
	}
}

func TestInterruptThenResume(t *testing.T) {
	srv := llmtest.New(llmtest.Options{Respond: answerEcho, Latency: 5 * time.Millisecond})
	defer srv.Close()
	cfg := baseConfig(t, newClient(t, srv, "k"), 200)
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int64
	cfg.Progress = progressFunc(func() {
		if n.Add(1) == 40 {
			cancel()
		}
	})
	var mu sync.Mutex
	written := map[int]string{}
	cfg.Written = func(line int, row []byte) {
		mu.Lock()
		defer mu.Unlock()
		if _, dup := written[line]; dup {
			t.Errorf("line %d written twice", line)
		}
		written[line] = string(row)
	}
	// Written hands over each row as the file holds it, numbered from the
	// first this session wrote: a resumed session's lines follow the
	// earlier ones in the file.
	checkWritten := func(dir string, from int) {
		t.Helper()
		raw, err := os.ReadFile(filepath.Join(dir, artifact.ResultsFile))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
		if len(written) != len(lines)-from {
			t.Fatalf("%d rows handed to Written, %d written to the file after line %d", len(written), len(lines)-from, from)
		}
		for k, row := range written {
			if lines[from+k-1] != row {
				t.Fatalf("Written's row %d is not line %d of the file:\n%s\n%s", k, from+k, row, lines[from+k-1])
			}
		}
		clear(written)
	}
	out, err := Run(ctx, cfg)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v", err)
	}
	if out.Metadata.Status != artifact.StatusInterrupted {
		t.Fatalf("status %s", out.Metadata.Status)
	}
	partial := readRows(t, out.Dir)
	if len(partial) >= 200 || len(partial) < 40 {
		t.Fatalf("partial rows = %d", len(partial))
	}
	checkWritten(out.Dir, 0)
	cfg.ResumeDir, cfg.Progress = out.Dir, nil
	out, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	checkWritten(out.Dir, len(partial))
	rows := readRows(t, out.Dir)
	if len(rows) != 200 || uniquePairs(rows) != 200 {
		t.Fatalf("rows = %d unique = %d", len(rows), uniquePairs(rows))
	}
}

// TestDurationIsWallTimeAcrossCheckpointsAndResume: metadata's duration is
// the time the segments took, however many checkpoints ran (they once added
// up to about twice the run, and a resume's checkpoint dropped the earlier
// segments).
func TestDurationIsWallTimeAcrossCheckpointsAndResume(t *testing.T) {
	srv := llmtest.New(llmtest.Options{Respond: answerEcho, Latency: 10 * time.Millisecond})
	defer srv.Close()
	cfg := baseConfig(t, newClient(t, srv, "k"), 120)
	// One row at a time, so the rows (not set-up) make up the call's time
	// and a double count cannot hide under it.
	cfg.Concurrency = 1
	cfg.CheckpointEvery = time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int64
	cfg.Progress = progressFunc(func() {
		if n.Add(1) == 40 {
			cancel()
		}
	})
	t0 := time.Now()
	out, err := Run(ctx, cfg)
	first := time.Since(t0).Seconds()
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("err = %v", err)
	}
	d1 := out.Metadata.DurationS
	if d1 <= 0 || d1 > first {
		t.Fatalf("first segment: duration_s %.3f, the call took %.3f s", d1, first)
	}
	cfg.ResumeDir, cfg.Progress = out.Dir, nil
	t1 := time.Now()
	out, err = Run(context.Background(), cfg)
	second := time.Since(t1).Seconds()
	if err != nil {
		t.Fatal(err)
	}
	if d := out.Metadata.DurationS; d < d1 || d > d1+second {
		t.Errorf("after resume: duration_s %.3f, want between %.3f and %.3f", d, d1, d1+second)
	}
}

type progressFunc func()

func (p progressFunc) Start(int, int)    {}
func (p progressFunc) Add(float64, bool) { p() }
func (p progressFunc) Finish()           {}

// TestKilledRunResumes SIGKILLs a child process mid-run (a real kill: no
// deferred cleanup) and resumes it here. The endpoint answers the first
// `answered` requests and holds every later one until released, so the kill
// always lands mid-run however fast the machine is; a torn last line, which a
// kill during a write leaves, is then appended so resume always meets one.
func TestKilledRunResumes(t *testing.T) {
	if os.Getenv("SVBENCH_KILL_CHILD") != "" {
		t.Skip("child mode is driven by TestMain")
	}
	const total, answered = 400, 100
	release := make(chan struct{})
	var served atomic.Int64
	srv := llmtest.New(llmtest.Options{Respond: func(req llmtest.ChatRequest) llmtest.Reply {
		if served.Add(1) > answered {
			<-release
		}
		return answerEcho(req)
	}})
	defer srv.Close()
	var releaseOnce sync.Once
	releaseAll := func() { releaseOnce.Do(func() { close(release) }) }
	defer releaseAll() // before srv.Close, which waits for held handlers
	out := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SVBENCH_KILL_CHILD=1", "SVBENCH_KILL_URL="+srv.BaseURL(), "SVBENCH_KILL_OUT="+out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the child has written a row for every answered request
	// (one write per row; it then has nothing left to do but wait for the
	// held ones), then kill it hard. The bound is a hang guard.
	deadline := time.Now().Add(60 * time.Second)
	var resultsPath string
	for rows := 0; resultsPath == ""; {
		matches, _ := filepath.Glob(filepath.Join(out, "evals", "*", "*", artifact.ResultsFile))
		if len(matches) == 1 {
			if b, err := os.ReadFile(matches[0]); err == nil {
				if rows = bytes.Count(b, []byte("\n")); rows >= answered {
					resultsPath = matches[0]
				}
			}
		}
		if resultsPath == "" {
			if time.Now().After(deadline) {
				_ = cmd.Process.Kill()
				_ = cmd.Wait()
				t.Fatalf("child wrote %d rows of %d in 60 s (%d requests served); stderr: %s", rows, answered, served.Load(), stderr.String())
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	dir := filepath.Dir(resultsPath)
	before := readRows(t, dir)
	if len(before) != answered || uniquePairs(before) != answered {
		t.Fatalf("killed child left %d rows (%d unique), want the %d answered", len(before), uniquePairs(before), answered)
	}
	// The half-written row a kill mid-write leaves behind.
	raw, err := os.ReadFile(resultsPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n"))
	last := lines[len(lines)-1]
	f, err := os.OpenFile(resultsPath, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(last[:len(last)/2]); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	releaseAll()
	cfg := baseConfig(t, newClient(t, srv, "k"), total)
	cfg.ResumeDir = dir
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	rows := readRows(t, dir)
	if len(rows) != total || uniquePairs(rows) != total {
		t.Fatalf("killed after %d rows; after resume rows = %d unique = %d, want %d", len(before), len(rows), uniquePairs(rows), total)
	}
}

func TestMain(m *testing.M) {
	if os.Getenv("SVBENCH_KILL_CHILD") != "" {
		// Child: run slowly until killed.
		c, _ := llm.NewOpenAI(llm.Config{BaseURL: os.Getenv("SVBENCH_KILL_URL"), APIKey: "k"})
		e := toyEnv{rows: 400}
		_, _ = Run(context.Background(), Config{Env: e, Dataset: InMemory(e.dataset()), Client: c, Model: "fake/model-1",
			Rollouts: 1, Concurrency: 4, Seed: 7, OutDir: os.Getenv("SVBENCH_KILL_OUT")})
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestAPIKeyNeverReachesArtifacts(t *testing.T) {
	const key = "sk-svbench-test-SECRET-0123456789abcdef"
	srv := llmtest.New(llmtest.Options{KeepLog: true, Respond: answerEcho})
	defer srv.Close()
	cfg := baseConfig(t, newClient(t, srv, key), 20)
	cfg.Params = map[string]string{"note": "x"}
	out, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.AuthHeaders()[0]; got != "Bearer "+key {
		t.Fatalf("key was not sent: %q", got)
	}
	err = filepath.Walk(cfg.OutDir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(key)) || bytes.Contains(b, []byte("SECRET-0123")) {
			t.Errorf("API key found in %s", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = out
}

func TestShardsMergeToUnshardedRun(t *testing.T) {
	srv := llmtest.New(llmtest.Options{Respond: answerEcho})
	defer srv.Close()
	client := newClient(t, srv, "k")

	full := baseConfig(t, client, 37)
	full.N, full.Rollouts = 30, 2
	fullOut, err := Run(context.Background(), full)
	if err != nil {
		t.Fatal(err)
	}
	var shardDirs []string
	for i := range 3 {
		cfg := full
		cfg.Shard = Shard{Index: i, Count: 3}
		out, err := Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		shardDirs = append(shardDirs, out.Dir)
	}
	mergedDir := filepath.Join(t.TempDir(), "merged")
	merged, err := Merge(shardDirs, mergedDir)
	if err != nil {
		t.Fatal(err)
	}
	want := readRows(t, fullOut.Dir)
	got := readRows(t, mergedDir)
	if len(got) != len(want) {
		t.Fatalf("merged %d rows, unsharded %d", len(got), len(want))
	}
	byKey := map[artifact.Key]artifact.Result{}
	for _, r := range want {
		byKey[r.Key()] = r
	}
	for _, r := range got {
		w, ok := byKey[r.Key()]
		if !ok || w.Reward != r.Reward || w.FinalText != r.FinalText || w.ExampleID != r.ExampleID {
			t.Fatalf("pair %v differs: merged %+v vs unsharded %+v", r.Key(), r, w)
		}
	}
	if merged.AvgReward != fullOut.Metadata.AvgReward || merged.Completed != fullOut.Metadata.Completed {
		t.Fatalf("merged metadata %v/%d vs %v/%d", merged.AvgReward, merged.Completed, fullOut.Metadata.AvgReward, fullOut.Metadata.Completed)
	}

	// Refusals: a missing shard, and a shard from another configuration.
	if _, err := Merge(shardDirs[:2], filepath.Join(t.TempDir(), "m2")); err == nil || !strings.Contains(err.Error(), "missing shard") {
		t.Fatalf("missing shard: err = %v", err)
	}
	other := full
	other.Seed = 99
	other.Shard = Shard{Index: 2, Count: 3}
	odd, err := Run(context.Background(), other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Merge([]string{shardDirs[0], shardDirs[1], odd.Dir}, filepath.Join(t.TempDir(), "m3")); err == nil || !strings.Contains(err.Error(), "seed") {
		t.Fatalf("mismatched seed: err = %v", err)
	}
}

func TestClampNWithWarning(t *testing.T) {
	srv := llmtest.New(llmtest.Options{})
	defer srv.Close()
	cfg := baseConfig(t, newClient(t, srv, "k"), 10)
	cfg.N = 500
	out, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if out.Metadata.NumExamples != 10 || len(readRows(t, out.Dir)) != 10 {
		t.Fatalf("n = %d", out.Metadata.NumExamples)
	}
}

func TestParseShard(t *testing.T) {
	for in, ok := range map[string]bool{"": true, "0/1": true, "2/3": true, "3/3": false, "-1/2": false, "a/b": false, "1/0": false} {
		if _, err := ParseShard(in); (err == nil) != ok {
			t.Errorf("%q: err = %v", in, err)
		}
	}
}

// lazyVersions reports verifier versions only after an episode started, as
// environments that build their verifiers on first use do.
type lazyVersions struct {
	toyEnv
	started *atomic.Bool
}

func (l lazyVersions) Info() env.Info {
	in := l.toyEnv.Info()
	if l.started.Load() {
		in.Verifiers = map[string]string{"scanner": "v1.2.3"}
	}
	return in
}

func (l lazyVersions) Start(ctx context.Context, ex env.Example) (env.Episode, error) {
	l.started.Store(true)
	return l.toyEnv.Start(ctx, ex)
}

func TestMetadataRecordsLazilyKnownVerifierVersions(t *testing.T) {
	srv := llmtest.New(llmtest.Options{Respond: answerEcho})
	defer srv.Close()
	cfg := baseConfig(t, newClient(t, srv, "k"), 4)
	cfg.Env = lazyVersions{toyEnv: toyEnv{rows: 4}, started: &atomic.Bool{}}
	out, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	meta, err := artifact.ReadMetadata(out.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Verifiers["scanner"] != "v1.2.3" {
		t.Fatalf("verifiers = %v", meta.Verifiers)
	}
}

// TestAggregateCountsScoredErrorRows: metadata's averages (the --no-report
// run summary) count a failed row the runner scored as no answer, as every
// report does; an unscored error row stays out.
func TestAggregateCountsScoredErrorRows(t *testing.T) {
	yes, no := true, false
	a := newAggregate()
	for _, r := range []artifact.Result{
		{Index: 0, Reward: 1, Solved: &yes},
		{Index: 1, Reward: 0, Solved: &no, Error: "model call: 500"},
		{Index: 2, Error: "model call: 502 (older run, never scored)"},
	} {
		a.add(&r)
	}
	var m artifact.Metadata
	a.fill(&m)
	if m.AvgReward != 0.5 || m.Errors != 2 || m.Completed != 1 {
		t.Fatalf("avg_reward %v errors %d completed %d; want 0.5 over the answered and the scored error row", m.AvgReward, m.Errors, m.Completed)
	}
}
