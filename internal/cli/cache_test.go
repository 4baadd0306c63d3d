package cli

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/llm/cache"
	"github.com/svbench/svbench/llm/llmtest"
)

func TestEvalCacheAndCost(t *testing.T) {
	srv := llmtest.New(llmtest.Options{KeepLog: true})
	defer srv.Close()
	t.Setenv("SVBENCH_TEST_KEY", "k")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // the cache key, away from the user's
	cacheDir := t.TempDir()
	prices := filepath.Join(t.TempDir(), "prices.toml")
	os.WriteFile(prices, []byte("date = \"2026-11-01\"\ncurrency = \"USD\"\n[models.\"m1\"]\ninput = 1000\noutput = 1000\n"), 0o644)
	eval := func(extra ...string) *artifact.Metadata {
		t.Helper()
		out := t.TempDir()
		args := append([]string{"eval", "--env", "e1", "--model", "m1", "-n", "3", "-r", "2", "--base-url", srv.BaseURL(),
			"--api-key-env", "SVBENCH_TEST_KEY", "--out", out, "--progress", "none", "--no-report"}, extra...)
		code, stdout, stderr := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		meta, err := artifact.ReadMetadata(runDirs(t, out)[0])
		if err != nil {
			t.Fatal(err)
		}
		if meta.Cost != nil && !strings.Contains(stdout, "cost") {
			t.Errorf("cost not printed:\n%s", stdout)
		}
		return meta
	}
	first := eval("--cache", "--cache-dir", cacheDir, "--prices", prices)
	if srv.Requests() != 6 {
		t.Fatalf("first run made %d requests; -r 2 on 3 examples must sample 6 times", srv.Requests())
	}
	if len(first.UsageByModel) != 1 || first.UsageByModel[0].Role != artifact.RolePolicy || first.UsageByModel[0].Calls != 6 || first.UsageByModel[0].Usage.PromptTokens == 0 {
		t.Fatalf("usage %+v", first.UsageByModel)
	}
	if first.Cost == nil || first.Cost.Total <= 0 || first.Launch.PricesFile == "" {
		t.Fatalf("cost %+v", first.Cost)
	}
	second := eval("--cache", "--cache-dir", cacheDir, "--prices", prices)
	if srv.Requests() != 6 {
		t.Fatalf("cached run reached the endpoint (%d requests)", srv.Requests())
	}
	u := second.UsageByModel[0]
	if u.Calls != 0 || u.CachedCalls != 6 || second.Cost.Total != 0 {
		t.Fatalf("replayed run: usage %+v cost %+v", u, second.Cost)
	}
	eval() // no --cache: the endpoint again
	if srv.Requests() != 12 {
		t.Fatalf("without --cache: %d requests, want 12", srv.Requests())
	}

	// An edited entry is not replayed: asked again, counted in the run's
	// usage and named on stderr.
	db, err := sql.Open("sqlite", "file:"+filepath.Join(cacheDir, cache.FileName)+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`UPDATE responses SET value = CAST('{"message":{"role":"assistant","content":"edited"}}' AS BLOB) WHERE key = (SELECT key FROM responses LIMIT 1)`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out := t.TempDir()
	code, _, stderr := runCLI(t, "eval", "--env", "e1", "--model", "m1", "-n", "3", "-r", "2", "--base-url", srv.BaseURL(),
		"--api-key-env", "SVBENCH_TEST_KEY", "--out", out, "--progress", "none", "--no-report", "--cache", "--cache-dir", cacheDir)
	if code != 0 || !strings.Contains(stderr, "1 entries failed their checks and were asked again (hash 1)") {
		t.Fatalf("edited entry: exit %d, stderr %q", code, stderr)
	}
	if srv.Requests() != 13 {
		t.Fatalf("edited entry: %d requests, want 13", srv.Requests())
	}
	edited, err := artifact.ReadMetadata(runDirs(t, out)[0])
	if err != nil {
		t.Fatal(err)
	}
	if u := edited.UsageByModel[0]; u.Calls != 1 || u.CacheRejected != 1 || u.CachedCalls != 5 {
		t.Fatalf("edited entry: usage %+v", u)
	}

	code, stdout, stderr := runCLI(t, "cache", "stats", "--cache-dir", cacheDir, "--json")
	var st cache.Stats
	if code != 0 || json.Unmarshal([]byte(stdout), &st) != nil || st.Entries != 6 {
		t.Fatalf("cache stats: exit %d %s %s", code, stdout, stderr)
	}
	if code, stdout, _ = runCLI(t, "cache", "prune", "--cache-dir", cacheDir); code != 0 || !strings.Contains(stdout, "removed 0") {
		t.Fatalf("prune: %d %s", code, stdout)
	}
	if code, stdout, _ = runCLI(t, "cache", "clear", "--cache-dir", cacheDir); code != 0 || !strings.Contains(stdout, "removed 6") {
		t.Fatalf("clear: %d %s", code, stdout)
	}

	// A corrupt cache: reported once, bypassed, the run completes.
	bad := t.TempDir()
	os.WriteFile(filepath.Join(bad, cache.FileName), []byte(strings.Repeat("garbage", 1000)), 0o600)
	out = t.TempDir()
	code, _, stderr = runCLI(t, "eval", "--env", "e1", "--model", "m1", "-n", "2", "--base-url", srv.BaseURL(), "--api-key-env", "SVBENCH_TEST_KEY",
		"--out", out, "--progress", "none", "--no-report", "--cache", "--cache-dir", bad)
	if code != 0 || strings.Count(stderr, "continuing without the response cache") != 1 {
		t.Fatalf("corrupt cache: exit %d, stderr %q", code, stderr)
	}
	if code, _, stderr = runCLI(t, "cache", "stats", "--cache-dir", bad); code == 0 || !strings.Contains(stderr, "svbench cache clear") {
		t.Fatalf("stats on a corrupt cache: exit %d %q", code, stderr)
	}
	if code, _, stderr = runCLI(t, "eval", "--env", "e1", "--model", "m1", "--prices", "/nonexistent.toml", "--base-url", srv.BaseURL(), "--out", t.TempDir()); code != ExitUsage || !strings.Contains(stderr, "--prices") {
		t.Fatalf("missing prices file: exit %d %q", code, stderr)
	}
}

func TestJudgeUsageRecorded(t *testing.T) {
	srv := llmtest.New(llmtest.Options{Respond: func(llmtest.ChatRequest) llmtest.Reply { return llmtest.Reply{Content: "yes"} }})
	defer srv.Close()
	t.Setenv("SVBENCH_JUDGE_KEY", "k")
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // the cache key, away from the user's
	out := t.TempDir()
	code, _, stderr := runCLI(t, "eval", "--env", "e2", "--model", "builtin:tool-autofix", "-n", "2",
		"--param", "reward_source=hybrid", "--judge-model", "judge-1", "--base-url", srv.BaseURL(),
		"--api-key-env", "SVBENCH_JUDGE_KEY", "--out", out, "--progress", "none", "--no-report", "--cache", "--cache-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	meta, err := artifact.ReadMetadata(runDirs(t, out)[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(meta.UsageByModel) != 1 || meta.UsageByModel[0].Role != artifact.RoleJudge || meta.UsageByModel[0].Model != "judge-1" || meta.UsageByModel[0].Calls < 2 {
		t.Fatalf("judge usage %+v", meta.UsageByModel)
	}
}
