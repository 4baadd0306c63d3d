package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/netlogs"
)

// secret marks every byte that lives outside the served root.
const secret = "SECRET-OUTSIDE-THE-ROOT"

// writeRun writes a run directory holding metadata and the given rows.
func writeRun(t *testing.T, dir string, rows ...string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	meta := artifact.Metadata{RunID: filepath.Base(dir), Environment: netlogs.ID, Model: "m/" + filepath.Base(dir), Dataset: "embedded:e1",
		Status: artifact.StatusCompleted, Started: time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC), Rollouts: 1, NumExamples: len(rows)}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), &meta); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, artifact.ResultsFile), []byte(strings.Join(rows, "")), 0o644); err != nil {
		t.Fatal(err)
	}
}

func symlink(t *testing.T, target, link string) {
	t.Helper()
	os.Remove(link)
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// A run file that is a symlink leaving the root is never read, on any page;
// one that stays under the root is followed.
func TestSymlinksLeavingTheRootAreRefused(t *testing.T) {
	fx := newFixture(t)
	outside := t.TempDir()
	writeRun(t, outside, strings.ReplaceAll(liveRow(t, 0), "Benign", secret))
	summary := `{"key_metrics":[{"name":"` + secret + `","value":1,"higher_is_better":true}]}`
	for name, body := range map[string]string{artifact.SummaryFile: summary, artifact.ManifestFile: `{"run_id":"` + secret + `"}`} {
		if err := os.WriteFile(filepath.Join(outside, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := filepath.Join(fx.root, "links")
	// results.jsonl → outside, and → /etc/passwd.
	for _, c := range []struct{ run, target string }{
		{"results-out", filepath.Join(outside, artifact.ResultsFile)},
		{"passwd", "/etc/passwd"},
	} {
		writeRun(t, filepath.Join(links, c.run), liveRow(t, 0))
		symlink(t, c.target, filepath.Join(links, c.run, artifact.ResultsFile))
	}
	// metadata.json, summary.json and the manifest → outside.
	writeRun(t, filepath.Join(links, "meta-out"), liveRow(t, 0))
	symlink(t, filepath.Join(outside, artifact.MetadataFile), filepath.Join(links, "meta-out", artifact.MetadataFile))
	writeRun(t, filepath.Join(links, "summary-out"), liveRow(t, 0), liveRow(t, 3))
	symlink(t, filepath.Join(outside, artifact.SummaryFile), filepath.Join(links, "summary-out", artifact.SummaryFile))
	symlink(t, filepath.Join(outside, artifact.ManifestFile), filepath.Join(links, "summary-out", artifact.ManifestFile))
	// A symlink that stays under the root is an ordinary file.
	writeRun(t, filepath.Join(links, "inside"))
	symlink(t, filepath.Join("..", "..", filepath.FromSlash(fx.live), artifact.ResultsFile), filepath.Join(links, "inside", artifact.ResultsFile))

	ts := newTestServer(t, fx.root)
	noSecret := func(path string) (int, string) {
		t.Helper()
		code, body, _ := get(t, ts, path)
		if strings.Contains(body, secret) || strings.Contains(body, "root:x:0") {
			t.Errorf("GET %s served a file outside the root:\n%.400s", path, body)
		}
		return code, body
	}
	for _, run := range []string{"links/results-out", "links/passwd"} {
		id := url.QueryEscape(run)
		if code, _ := noSecret("/transcripts?id=" + id); code != 404 {
			t.Errorf("transcripts of %s: %d, want 404", run, code)
		}
		if code, _ := noSecret("/rollout?row=0&id=" + id); code != 404 {
			t.Errorf("rollout of %s: %d, want 404", run, code)
		}
		if code, body := noSecret("/run?id=" + id); code != 200 || !strings.Contains(body, "escapes") {
			t.Errorf("run page of %s: %d, want 200 naming the refused link", run, code)
		}
		if code, _ := noSecret("/compare?id=" + url.QueryEscape(fx.runA) + "&id=" + id); code != 422 {
			t.Errorf("compare with %s: %d, want 422", run, code)
		}
	}
	if code, _ := noSecret("/run?id=links/summary-out"); code != 200 {
		t.Errorf("run page with an escaping summary and manifest: %d", code)
	}
	if code, _ := noSecret("/compare?id=" + url.QueryEscape(fx.runA) + "&id=links/summary-out"); code != 422 {
		t.Errorf("compare with an escaping summary: %d, want 422", code)
	}
	if code, _ := noSecret("/run?id=links/meta-out"); code != 200 {
		// results.jsonl is a regular file: the run is served, without the
		// metadata it cannot read.
		t.Errorf("run with an escaping metadata.json: %d", code)
	}
	code, body := noSecret("/")
	if code != 200 || !strings.Contains(body, "links/meta-out") || !strings.Contains(body, "escapes") {
		t.Errorf("runs table does not say why links/meta-out is skipped: %d", code)
	}
	if code, body := noSecret("/leaderboard"); code != 200 || !strings.Contains(body, "links/summary-out") {
		t.Errorf("leaderboard does not list the refused run as skipped: %d", code)
	}
	noSecret("/api/runs")

	if code, body := noSecret("/transcripts?id=links/inside"); code != 200 || !strings.Contains(body, `id="matched">4<`) {
		t.Errorf("a symlink under the root is not followed: %d", code)
	}
}

// bigRow is a results row whose final answer is n bytes.
func bigRow(t *testing.T, n int) []byte {
	t.Helper()
	r := artifact.Result{RunID: "big", Index: 1, ExampleID: "ex-1", Model: "m", Reward: 1,
		Completion: []env.Message{{Role: env.RoleAssistant, Content: "x"}}, FinalText: "x"}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	// Grow final_text in place: the test builds the row without a second
	// copy of it.
	i := bytes.Index(b, []byte(`"final_text":"x"`)) + len(`"final_text":"`)
	row := make([]byte, 0, len(b)+n)
	row = append(row, b[:i]...)
	row = append(row, bytes.Repeat([]byte("A"), n)...)
	row = append(row, b[i+1:]...)
	return append(row, '\n')
}

// A row over the bound is listed as too large on every page, the rest of
// the run stays usable, and the row is never read whole: serving the pages
// allocates far less than the row's size.
func TestHugeRowIsMarkedNotLoaded(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "big")
	writeRun(t, dir, liveRow(t, 0))
	huge := bigRow(t, 48<<20)
	f, err := os.OpenFile(filepath.Join(dir, artifact.ResultsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(huge); err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(liveRow(t, 2) + liveRow(t, 3)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	size := len(huge)
	huge = nil
	marker := fmt.Sprintf("row too large (%d bytes)", size)

	s, err := New(root, Options{Addr: "127.0.0.1:0", MaxRowBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	serve := func(path string) (int, string) {
		w := httptest.NewRecorder()
		r := httptest.NewRequest("GET", path, nil)
		r.Host = "127.0.0.1"
		s.ServeHTTP(w, r)
		return w.Code, w.Body.String()
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	pages := []struct {
		path string
		code int
		want []string
	}{
		{"/transcripts?id=big", 200, []string{marker, `data-too-large="` + fmt.Sprint(size) + `"`, "ex-0", "ex-3", `id="matched">4<`}},
		{"/transcripts?id=big&filter=errors", 200, []string{marker}},
		{"/transcripts?id=big&sort=reward-desc", 200, []string{marker, "ex-3"}},
		{"/run?id=big", 200, []string{`id="too-large"`, marker, "line 2", "hist-reward"}},
		{"/rollout?id=big&row=1", 422, []string{marker}},
		{"/rollout?id=big&row=2", 200, []string{"ex-2", "Reward components"}},
		{"/compare?id=big&id=big", 422, []string{marker, "svbench compare"}},
		{"/", 200, []string{"m/big"}},
	}
	for _, p := range pages {
		code, body := serve(p.path)
		if code != p.code {
			t.Errorf("GET %s: %d, want %d\n%.300s", p.path, code, p.code, body)
		}
		for _, w := range p.want {
			if !strings.Contains(body, w) {
				t.Errorf("GET %s: no %q in the page", p.path, w)
			}
		}
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(size/4) {
		t.Errorf("serving the pages allocated %d bytes for a %d-byte row: it was read whole", alloc, size)
	}
}
