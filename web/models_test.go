package web

import (
	"context"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/netlogs"
	"github.com/svbench/svbench/envs/phishing"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/report"
	"github.com/svbench/svbench/runner"
)

// TestLeaderboardModelTable: the dashboard's leaderboard shows one row per
// model across environments, each header with the reward range the run's
// rubric declared (recorded in metadata.json by the runner).
func TestLeaderboardModelTable(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	for _, r := range []struct{ envID, policy, model string }{
		{netlogs.ID, "features", "model-a"},
		{netlogs.ID, "heuristic", "model-b"},
		{phishing.ID, "indicators", "model-a"},
	} {
		e, err := env.Default.New(r.envID, env.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ds, closeDS, err := runner.OpenDataset(ctx, e, "", "", false)
		if err != nil {
			t.Fatal(err)
		}
		p, _ := e.(env.PolicyProvider).Policy(r.policy)
		out, err := runner.Run(ctx, runner.Config{Env: e, Dataset: ds, Client: llm.Builtin{Policy: p}, Model: r.model,
			N: 8, Rollouts: 1, Concurrency: 2, Seed: 7, OutDir: root})
		closeDS()
		if err != nil {
			t.Fatal(err)
		}
		meta, err := artifact.ReadMetadata(out.Dir)
		if err != nil || meta.RubricInfo == nil || meta.RubricInfo.Name != "default" || len(meta.RubricInfo.Components) == 0 {
			t.Fatalf("%s: metadata.json records no rubric_info: %+v %v", r.envID, meta, err)
		}
		rep, err := report.FromRun(out.Dir, "", report.Options{BootstrapReps: 50})
		if err != nil {
			t.Fatal(err)
		}
		if err := report.WriteDir(out.Dir, rep); err != nil {
			t.Fatal(err)
		}
	}
	ts := newTestServer(t, root)
	code, body, _ := get(t, ts, "/leaderboard")
	if code != 200 {
		t.Fatalf("GET /leaderboard: %d\n%s", code, body)
	}
	i := strings.Index(body, `id="models-by-env"`)
	if i < 0 {
		t.Fatalf("no models-by-env table:\n%s", body)
	}
	table := body[i:]
	table = table[:strings.Index(table, "</table>")]
	for _, want := range []string{netlogs.ID, phishing.ID, "reward ∈ [-0.5, 2.8]", "model-a", "model-b", "<td class=\"num\">—</td>"} {
		if !strings.Contains(table, want) {
			t.Errorf("models-by-env table lacks %q:\n%s", want, table)
		}
	}
	if n := strings.Count(table, "<tr>"); n != 3 {
		t.Errorf("models-by-env table has %d rows (header + 2 models):\n%s", n, table)
	}
}
