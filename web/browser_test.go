package web

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// findBrowser returns a Chromium to drive, or "" when none is installed
// (CI installs Debian's chromium; see .ci/run).
func findBrowser() string {
	if p := os.Getenv("SVBENCH_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestBrowser drives the real pages in headless Chromium: the runs table
// and its filter, live progress of a running run, a run page's charts, the
// transcript filter and one transcript with hostile output, compare and the
// leaderboard. Screenshots go to the test's temp dir (kept with -v logs).
func TestBrowser(t *testing.T) {
	bin := findBrowser()
	if bin == "" {
		t.Skip("no Chromium found (install Debian's chromium, or set SVBENCH_CHROMIUM): browser tests skipped")
	}
	fx := newFixture(t)
	ts := newTestServer(t, fx.root)
	shots := t.TempDir()
	if d := os.Getenv("SVBENCH_SCREENSHOTS"); d != "" {
		shots = d
	}

	// The profile is removed after the cleanup below has seen every
	// browser process exit (cleanups run last-registered first).
	profile := t.TempDir()
	var browserCmd *exec.Cmd
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile), chromedp.WindowSize(1280, 900),
		// Called on this goroutine by the first chromedp.Run, before the
		// browser starts.
		chromedp.ModifyCmdFunc(func(cmd *exec.Cmd) {
			ownProcessGroup(cmd)
			browserCmd = cmd
		}),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()  // closes the browser gracefully and waits for its main process
		cancelA() // kills it if it did not close, and waits for it
		if browserCmd != nil && browserCmd.Process != nil {
			if err := stopProcessGroup(browserCmd.Process.Pid, 30*time.Second); err != nil {
				t.Errorf("browser processes: %v", err)
			}
		}
		// Whatever left the group: nothing may still write the profile
		// when its TempDir cleanup removes it.
		if err := stopUsersOf(profile, 30*time.Second); err != nil {
			t.Errorf("processes using the browser profile: %v", err)
		}
	})
	ctx, cancelT := context.WithTimeout(ctx, 50*time.Second)
	defer cancelT()

	// Model output must never open a dialog (an executed alert()).
	dialogs := make(chan string, 4)
	chromedp.ListenTarget(ctx, func(ev any) {
		if d, ok := ev.(*page.EventJavascriptDialogOpening); ok {
			dialogs <- d.Message
			go chromedp.Run(ctx, page.HandleJavaScriptDialog(false))
		}
	})

	shot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var buf []byte
			if err := chromedp.FullScreenshot(&buf, 100).Do(ctx); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(shots, name+".png"), buf, 0o644)
		})
	}
	run := func(step string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}

	// navClick clicks something that navigates and waits for the next
	// page. A query racing the navigation fails with "target navigated";
	// it is retried, a few times at most.
	navClick := func(step, click, wait string) {
		t.Helper()
		run(step, chromedp.Click(click, chromedp.ByQuery))
		var err error
		for range 4 {
			if err = chromedp.Run(ctx, chromedp.WaitVisible(wait, chromedp.ByQuery)); err == nil || ctx.Err() != nil {
				break
			}
		}
		if err != nil {
			t.Fatalf("%s: waiting for %s: %v", step, wait, err)
		}
	}

	// Runs table, filtered in the page by the script.
	var total, shown int
	run("runs table",
		chromedp.Navigate(ts.URL+"/"),
		chromedp.WaitVisible("#runs tbody tr", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("#runs tbody tr").length`, &total),
		chromedp.Evaluate(`(function(){var s=document.querySelector("select[name=model]");s.value="builtin:features";s.dispatchEvent(new Event("change",{bubbles:true}));return document.querySelectorAll("#runs tbody tr:not(.hidden)").length})()`, &shown),
		shot("runs-filtered"),
	)
	if total != 3 || shown != 1 {
		t.Fatalf("runs table: %d rows, %d after filtering by model; want 3 and 1", total, shown)
	}
	// Each run is named by its id, in a column of its own.
	var runCol []string
	run("run-id column", chromedp.Evaluate(`(function(){var h=Array.from(document.querySelectorAll("#runs thead th")).map(e=>e.textContent);var i=h.indexOf("run");return Array.from(document.querySelectorAll("#runs tbody tr")).map(r=>i<0?"":r.children[i].textContent)})()`, &runCol))
	if !slices.Contains(runCol, "live") || !slices.Contains(runCol, "run-0") {
		t.Errorf("runs table's run column: %q, want the run ids", runCol)
	}
	// The same filter through the form (no script needed).
	var served int
	navClick("runs filter submitted", `form.filters button[type=submit]`, `#runs[data-model-filter="builtin:features"]`)
	run("runs filtered by the server", chromedp.Evaluate(`document.querySelectorAll("#runs tbody tr").length`, &served))
	if served != 1 {
		t.Fatalf("server-side filter: %d rows, want 1", served)
	}

	// Live progress: rows appended to a running run show up without a reload.
	run("live page", chromedp.Navigate(ts.URL+"/"), chromedp.WaitVisible("#runs", chromedp.ByQuery))
	f, err := os.OpenFile(fx.livePath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(liveRow(t, 4) + liveRow(t, 5))
	f.Close()
	run("live update",
		chromedp.Poll(`document.querySelector('[data-live-id="`+fx.live+`"] .live-rows').textContent === "6"`, nil, chromedp.WithPollingTimeout(15*time.Second)),
		shot("runs-live"),
	)

	// A run page draws every chart.
	var charts, drawn int
	run("run page",
		chromedp.Navigate(ts.URL+"/run?id="+url.QueryEscape(fx.runA)),
		chromedp.WaitVisible(".charts img", chromedp.ByQuery),
		chromedp.Poll(`Array.from(document.querySelectorAll(".charts img")).every(i => i.complete)`, nil, chromedp.WithPollingTimeout(10*time.Second)),
		chromedp.Evaluate(`document.querySelectorAll(".charts img").length`, &charts),
		chromedp.Evaluate(`Array.from(document.querySelectorAll(".charts img")).filter(i => i.naturalWidth > 0).length`, &drawn),
		shot("run"),
	)
	if charts < 4 || drawn != charts {
		t.Fatalf("run page: %d of %d charts drawn", drawn, charts)
	}

	// Transcripts: filter to wrong answers, open one, then the hostile one.
	var matched string
	run("transcripts",
		chromedp.Navigate(ts.URL+"/transcripts?id="+url.QueryEscape(fx.live)),
		chromedp.WaitVisible("#transcripts", chromedp.ByQuery),
		chromedp.SetValue(`select[name=filter]`, "wrong", chromedp.ByQuery),
	)
	navClick("transcript filter", "#apply", `#transcripts[data-filter="wrong"]`)
	run("wrong answers", chromedp.Text("#matched", &matched, chromedp.ByQuery), shot("transcripts-wrong"))
	navClick("open a transcript", "a.rollout-link", "#score")
	if matched != "3" {
		t.Errorf("wrong-answer filter matched %q rows, want 3 (rows 1, 3 and 5)", matched)
	}
	var reasoningOpen bool
	var content string
	var tops []float64
	run("hostile rollout",
		chromedp.Navigate(ts.URL+"/rollout?id="+url.QueryEscape(fx.live)+"&row=1"),
		chromedp.WaitVisible("#components", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelector("details.reasoning").open`, &reasoningOpen),
		chromedp.Text(".msg-assistant pre.content", &content, chromedp.ByQuery),
		chromedp.Click("details.more > summary", chromedp.ByQuery),
		chromedp.Evaluate(`["#conversation", ".toolrun", "#components", "#parsed-fields"].map(q => document.querySelector(q).getBoundingClientRect().top)`, &tops),
		shot("rollout"),
	)
	if !reasoningOpen {
		t.Error("reasoning is hidden; it is shown where it happened")
	}
	if len(tops) != 4 || !slices.IsSorted(tops) {
		t.Errorf("rollout page order (conversation, a tool call's run, components, parsed answer) at heights %v", tops)
	}
	if !strings.HasPrefix(content, hostile) {
		t.Errorf("hostile output not shown as text: %.80q", content)
	}

	var quantities, lbRows int
	run("compare and leaderboard",
		chromedp.Navigate(ts.URL+"/compare?id="+url.QueryEscape(fx.runA)+"&id="+url.QueryEscape(fx.runB)),
		chromedp.WaitVisible("table.quantities", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("table.quantities tbody tr").length`, &quantities),
		shot("compare"),
		chromedp.Navigate(ts.URL+"/leaderboard"),
		chromedp.WaitVisible("#leaderboard", chromedp.ByQuery),
		chromedp.Evaluate(`document.querySelectorAll("#leaderboard tbody tr").length`, &lbRows),
		shot("leaderboard"),
	)
	if quantities == 0 || lbRows == 0 {
		t.Errorf("compare shows %d quantities, leaderboard %d rows", quantities, lbRows)
	}
	select {
	case msg := <-dialogs:
		t.Fatalf("a page opened a dialog %q: model output ran as script", msg)
	default:
	}
	t.Logf("screenshots in %s", shots)
}
