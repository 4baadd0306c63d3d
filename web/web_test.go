package web

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
)

func TestPagesRenderWithSecurityHeaders(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx.root)
	pages := []struct{ path, want string }{
		{"/", "builtin:heuristic"},
		{"/?env=network-logs&status=completed", "builtin:features"},
		{"/api/runs", `"status":"running"`},
		{"/run?id=" + url.QueryEscape(fx.runA), "hist-reward"},
		{"/run?id=" + url.QueryEscape(fx.live), "0.0123 USD"},
		{"/transcripts?id=" + url.QueryEscape(fx.runA), "rollout-link"},
		{"/rollout?id=" + url.QueryEscape(fx.runA) + "&row=0", "Reward components"},
		{"/compare", "Pick two or more runs"},
		{"/compare?id=" + url.QueryEscape(fx.runA) + "&id=" + url.QueryEscape(fx.runB), "paired rollouts"},
		{"/compare?id=" + url.QueryEscape(fx.runA) + "&id=" + url.QueryEscape(fx.runB), "macro_f1"},
		{"/leaderboard", "builtin:heuristic"},
		{"/static/app.js", "use strict"},
	}
	for _, p := range pages {
		code, body, h := get(t, ts, p.path)
		if code != 200 {
			t.Errorf("GET %s: %d\n%s", p.path, code, body)
			continue
		}
		if !strings.Contains(body, p.want) {
			t.Errorf("GET %s: no %q in the page", p.path, p.want)
		}
		if !strings.Contains(h.Get("Content-Security-Policy"), "default-src 'self'") || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: security headers missing: %v", p.path, h)
		}
		if strings.Contains(body, "<script>") || strings.Contains(body, " style=") {
			t.Errorf("GET %s: inline script or style (the CSP forbids both)", p.path)
		}
	}
	// Every chart the run page names is served, as SVG, by the report's code.
	_, body, _ := get(t, ts, "/run?id="+url.QueryEscape(fx.runA))
	n := 0
	for _, part := range strings.Split(body, `src="/chart?`)[1:] {
		src := "/chart?" + strings.ReplaceAll(part[:strings.IndexByte(part, '"')], "&amp;", "&")
		code, svg, h := get(t, ts, src)
		if code != 200 || !strings.HasPrefix(strings.TrimSpace(svg), "<svg") || h.Get("Content-Type") != "image/svg+xml" {
			t.Errorf("chart %s: %d %s", src, code, h.Get("Content-Type"))
		}
		n++
	}
	if n < 4 {
		t.Errorf("run page shows %d charts; want the report's charts and the histograms", n)
	}
	if !strings.Contains(body, "ci") && !strings.Contains(body, "[0.") {
		t.Errorf("no interval on the run page")
	}
}

func TestHostileOutputIsEscapedAndClipped(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx.root)
	for _, path := range []string{
		"/rollout?id=" + url.QueryEscape(fx.live) + "&row=1",
		"/transcripts?id=" + url.QueryEscape(fx.live),
		"/rollout?id=" + url.QueryEscape(fx.live) + "&row=2",
	} {
		code, body, _ := get(t, ts, path)
		if code != 200 {
			t.Fatalf("%s: %d", path, code)
		}
		for _, bad := range []string{"<script>alert", "<img src=x", "</pre><script>"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s: model output reached the page unescaped (%q)", path, bad)
			}
		}
		if !strings.Contains(body, "&lt;script&gt;") {
			t.Errorf("%s: the hostile text is not shown escaped", path)
		}
	}
	_, body, _ := get(t, ts, "/rollout?id="+url.QueryEscape(fx.live)+"&row=1")
	for _, want := range []string{`class="reasoning"`, "show all 20", "call grep_logs", "answers call_1", "ran 1.5 ms · 3 finding(s)", "accuracy", "0.8000"} {
		if !strings.Contains(body, want) {
			t.Errorf("rollout page lacks %q", want)
		}
	}
}

// TestRolloutPageShowsTheConversationFirst: the conversation, with each
// tool call's run beside the call, comes before the reward components and
// the parsed-answer boxes (issue #24, dashboard).
func TestRolloutPageShowsTheConversationFirst(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx.root)
	_, body, _ := get(t, ts, "/rollout?id="+url.QueryEscape(fx.live)+"&row=1")
	order := []string{`id="conversation"`, "thinking &lt;script", "call grep_logs", "ran 1.5 ms", "answers call_1", `id="components"`, `id="parsed"`}
	last := -1
	for _, want := range order {
		i := strings.Index(body, want)
		if i < 0 {
			t.Fatalf("rollout page lacks %q", want)
		}
		if i < last {
			t.Errorf("%q comes before what precedes it in %v", want, order)
		}
		last = i
	}
	if strings.Contains(body, `id="toolcalls"`) {
		t.Errorf("tool calls listed apart although every one is in the conversation")
	}
}

func TestTranscriptFiltersAndPaging(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx.root)
	cases := []struct {
		filter, sort string
		matched      string
		first        string
	}{
		{"all", "file", ">4<", "row=0"},
		{"errors", "file", ">1<", "row=2"},
		{"disagree", "file", ">1<", "row=3"},
		{"wrong", "file", ">2<", "row=1"},
		{"all", "reward-desc", ">4<", "row=3"},
		{"all", "reward-asc", ">4<", "row=0"},
	}
	for _, c := range cases {
		_, body, _ := get(t, ts, "/transcripts?id="+url.QueryEscape(fx.live)+"&filter="+c.filter+"&sort="+c.sort)
		if !strings.Contains(body, `<span id="matched">`+strings.Trim(c.matched, "<>")+"</span>") {
			t.Errorf("%s/%s: want %s matches", c.filter, c.sort, c.matched)
		}
		i := strings.Index(body, "rollout-link")
		if i < 0 || !strings.Contains(body[i:i+120], c.first) {
			t.Errorf("%s/%s: first row is not %s", c.filter, c.sort, c.first)
		}
	}
	// Paging: 40 rows in pages of 50 is one page; a page past the end
	// clamps to the last.
	_, body, _ := get(t, ts, "/transcripts?id="+url.QueryEscape(fx.runA)+"&page=9")
	if !strings.Contains(body, "page 1 of 1") || strings.Contains(body, "next-page") {
		t.Error("paging past the end")
	}
}

func TestLiveTailIsReadIncrementally(t *testing.T) {
	fx := newFixture(t)
	s, err := New(fx.root, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ix := s.index(runRef{rel: filepath.FromSlash(fx.live)})
	rows, err := ix.update()
	if err != nil || len(rows) != 4 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	end := ix.end
	f, err := os.OpenFile(fx.livePath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	row4 := liveRow(t, 4)
	// A writer mid-row: the partial line is not a row yet.
	f.WriteString(liveRow(t, 5) + row4[:10])
	rows, _ = ix.update()
	if len(rows) != 5 || rows[4].off != end {
		t.Fatalf("after appending one row and a half: %d rows, tail offset %d (want 5, %d)", len(rows), rows[len(rows)-1].off, end)
	}
	f.WriteString(row4[10:])
	f.Close()
	rows, _ = ix.update()
	if len(rows) != 6 || rows[5].index != 4 {
		t.Fatalf("completed row not indexed: %d rows", len(rows))
	}
	// A resumed run rewrites the file (compaction, atomic rename): the
	// index starts over instead of reading garbage offsets.
	if err := os.WriteFile(fx.livePath+".tmp", []byte(liveRow(t, 9)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(fx.livePath+".tmp", fx.livePath); err != nil {
		t.Fatal(err)
	}
	rows, _ = ix.update()
	if len(rows) != 1 || rows[0].index != 9 {
		t.Fatalf("rewritten file: %d rows", len(rows))
	}
	// The runs API reports the live count.
	ts := newTestServer(t, fx.root)
	_, body, _ := get(t, ts, "/api/runs")
	if !strings.Contains(body, `"id":"`+fx.live+`","status":"running","rows":1`) {
		t.Errorf("api/runs: %s", body)
	}
}

func TestRunIDsCannotEscapeRoot(t *testing.T) {
	fx := newFixture(t)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "metadata.json"), []byte(`{"run_id":"secret"}`), 0o644)
	os.WriteFile(filepath.Join(outside, "results.jsonl"), []byte(liveRow(t, 0)), 0o644)
	if err := os.Symlink(outside, filepath.Join(fx.root, "evals", "link-out")); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(fx.root, "evals", "empty"), 0o755)
	ts := newTestServer(t, fx.root)
	rel, _ := filepath.Rel(fx.root, outside)
	bad := []string{
		"", ".", "..", "../", "../..", "/etc", "/" + fx.live, "evals/../../", "evals/../" + rel, filepath.ToSlash(rel),
		fx.live + "/..", fx.live + "/../live", "./" + fx.live, fx.live + "/", "evals//network-logs--evil/live",
		`evals\..\..`, "evals/link-out", "evals/empty", "evals", "C:/Windows", "evals/\x00", outside,
		"evals/network-logs--evil/live/results.jsonl",
	}
	for _, id := range bad {
		for _, page := range []string{"/run", "/transcripts", "/rollout", "/chart"} {
			code, body, _ := get(t, ts, page+"?row=0&name=hist-reward&id="+url.QueryEscape(id))
			if code != 404 {
				t.Errorf("%s id %q: %d, want 404", page, id, code)
			}
			if strings.Contains(body, "secret") {
				t.Errorf("%s id %q: leaked a file outside the root", page, id)
			}
		}
	}
	code, _, _ := get(t, ts, "/compare?id="+url.QueryEscape(fx.runA)+"&id="+url.QueryEscape("../"+rel))
	if code != 404 {
		t.Errorf("compare with an escaping id: %d", code)
	}
	// Path-level tricks never reach a handler that reads files.
	for _, p := range []string{"/static/../web_test.go", "/static/%2e%2e/server.go", "/run/../../etc/passwd"} {
		if code, body, _ := get(t, ts, p); code == 200 && strings.Contains(body, "package web") {
			t.Errorf("%s served source", p)
		}
	}
	for _, row := range []string{"-1", "4", "99999999999999999999", "x", ""} {
		if code, _, _ := get(t, ts, "/rollout?id="+url.QueryEscape(fx.live)+"&row="+row); code != 404 {
			t.Errorf("row %q: %d, want 404", row, code)
		}
	}
}

func TestForeignHostAndWritesRefused(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx.root)
	req, _ := newRequest("GET", ts.URL+"/", "evil.example:7777")
	resp, err := ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 403 {
		t.Errorf("foreign Host: %d, want 403 (DNS rebinding)", resp.StatusCode)
	}
	req, _ = newRequest("POST", ts.URL+"/", "")
	resp, err = ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 405 {
		t.Errorf("POST: %d, want 405", resp.StatusCode)
	}
}

func TestClipText(t *testing.T) {
	cases := []struct {
		in             string
		truncated, cut bool
	}{
		{"short", false, false},
		{strings.Repeat("é", shownAtOnce), true, false},
		{strings.Repeat("x", shownInFull+5), true, true},
	}
	for _, c := range cases {
		got := newClipped(c.in)
		if got.Truncated != c.truncated || got.Cut != c.cut || got.Size != len(c.in) {
			t.Errorf("clip(%d bytes) = %+v", len(c.in), got)
		}
		if !strings.HasPrefix(c.in, got.Short) || !strings.HasPrefix(c.in, got.Full) || len(got.Short) > shownAtOnce || len(got.Full) > shownInFull {
			t.Errorf("clip(%d bytes) cut badly", len(c.in))
		}
		if !utf8Valid(got.Short) {
			t.Errorf("clip split a rune")
		}
	}
}

// FuzzIndexLine: any line of a results file (user-supplied) is indexed
// without panicking, and a line that is not a JSON object is marked
// unreadable rather than shown as a row.
func FuzzIndexLine(f *testing.F) {
	f.Add([]byte(`{"index":1,"rollout":0,"reward":1,"solved":true}` + "\n"))
	f.Add([]byte("\xef\xbb\xbf {\"index\":2}\r\n"))
	f.Fuzz(func(t *testing.T, line []byte) {
		body := artifact.RowBytes(line)
		if len(body) == 0 {
			return
		}
		r := rowOf(body)
		if r.flags&flagUnreadable == 0 && r.flags&flagSolved != 0 && r.flags&flagUnsolved != 0 {
			t.Fatalf("solved and unsolved at once: %+v", r)
		}
		if r.flags&flagUnreadable == 0 && (body[0] != '{' || !json.Valid(body)) {
			t.Fatalf("%q indexed as a row", body)
		}
	})
}

// The cached selection of a filter follows the file: appended rows join it.
func TestTranscriptSelectionFollowsAppends(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx.root)
	page := "/transcripts?id=" + url.QueryEscape(fx.live) + "&filter=wrong&sort=reward-asc"
	if _, body, _ := get(t, ts, page); !strings.Contains(body, `<span id="matched">2</span>`) {
		t.Fatal("want 2 wrong answers before the append")
	}
	f, err := os.OpenFile(fx.livePath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(liveRow(t, 5) + liveRow(t, 7))
	f.Close()
	if _, body, _ := get(t, ts, page); !strings.Contains(body, `<span id="matched">4</span>`) {
		t.Fatal("appended wrong answers missing from the cached selection")
	}
	if _, body, _ := get(t, ts, "/transcripts?id="+url.QueryEscape(fx.live)+"&filter=bogus&sort=%3Cx%3E"); !strings.Contains(body, `<span id="matched">6</span>`) {
		t.Fatal("an unknown filter must show everything")
	}
}

// TestRunPageHasOneSourceOfIntervals: the run page's bullets come from a
// report built without resamples, so they must not print its degenerate
// "[x, x]" beside the real intervals of summary.json (issue #24, item 2).
func TestRunPageHasOneSourceOfIntervals(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx.root)
	_, body, _ := get(t, ts, "/run?id="+url.QueryEscape(fx.runA))
	withCI := regexp.MustCompile(`(-?\d+\.\d{4}) \[(-?\d+\.\d{4}), (-?\d+\.\d{4})\]`)
	for _, m := range withCI.FindAllStringSubmatch(body, -1) {
		if m[1] == m[2] && m[2] == m[3] {
			t.Errorf("run page shows a zero-width interval nobody measured: %q", m[0])
		}
	}
	table := body[strings.Index(body, `id="key-metrics"`):]
	table = table[:strings.Index(table, "</table>")]
	iv := regexp.MustCompile(`\[(\d+\.\d{4}), (\d+\.\d{4})\]`).FindStringSubmatch(table)
	if iv == nil || iv[1] == iv[2] {
		t.Errorf("headline table lost summary.json's intervals: %s", table)
	}
}

// TestLiveRunPageCountsRowsOnDisk: metadata.json of a running run is a
// checkpoint (here 0 rows); the run page counts results.jsonl, as the
// report under it does, and never says "0 rows" above "3 scored" (issue
// #24, item 4). The runs table names each run and shows "—", not 0.0000,
// for a run with no completed row.
func TestLiveRunPageCountsRowsOnDisk(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx.root)
	_, body, _ := get(t, ts, "/run?id="+url.QueryEscape(fx.live))
	if !strings.Contains(body, `<span class="live-rows">4</span> rows`) {
		i := strings.Index(body, "live-rows")
		t.Errorf("run page row count is not the 4 rows on disk: %s", body[i:min(len(body), i+80)])
	}
	_, body, _ = get(t, ts, "/")
	if !strings.Contains(body, "<th>run</th>") || !strings.Contains(body, `<td class="run-id"><a href="/run?id=`+url.QueryEscape(fx.live)+`">live</a></td>`) {
		t.Errorf("runs table has no run-id column")
	}
	row := body[strings.Index(body, `data-live-id="`+fx.live+`"`):]
	row = row[:strings.Index(row, "</tr>")]
	if !strings.Contains(row, `<td class="num live-reward">—</td>`) {
		t.Errorf("a run with no completed row shows a mean reward: %s", row)
	}
}

// TestCIText: the leaderboard shows "—" for an entry without an interval
// (every E3 and E6 entry), never the [0.0000, 0.0000] a missing map entry
// reads as.
func TestCIText(t *testing.T) {
	ci := map[string][2]float64{"accuracy": {0.25, 0.75}, "zero": {}}
	for _, tc := range []struct {
		ci   map[string][2]float64
		name string
		want string
	}{
		{ci, "accuracy", "[0.2500, 0.7500]"},
		{ci, "pass_at_1", "\u2014"},
		{ci, "zero", "\u2014"},
		{nil, "accuracy", "\u2014"},
	} {
		if got := ciText(tc.ci, tc.name); got != tc.want {
			t.Errorf("ciText(%v, %q) = %q, want %q", tc.ci, tc.name, got, tc.want)
		}
	}
}
