package codevuln

import (
	"context"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/envs/codevuln/taskset"
	"github.com/svbench/svbench/report"
)

// TestStaticOnlyTasksScoredApart loads a static-only task directory (as the
// CVEfixes importer writes them), scores it and checks the report keeps it
// out of the tested block.
func TestStaticOnlyTasksScoredApart(t *testing.T) {
	e := testEnv(t)
	src := e.task("py-089-user-lookup")
	if src == nil {
		t.Skip("task missing")
	}
	st := *src
	st.ID, st.Mode, st.Source = "py-089-static-only-probe", taskset.ModeStaticOnly, "test"
	st.Visible, st.Hidden = nil, nil
	dir := t.TempDir()
	if err := taskset.Write(dir, st); err != nil {
		t.Fatal(err)
	}
	ds, err := e.Load(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Examples) != 1 || ds.Examples[0].Meta["mode"] != taskset.ModeStaticOnly {
		t.Fatalf("loaded %+v", ds.Examples)
	}
	ex := ds.Examples[0]
	loaded := e.task(st.ID)
	ref := score(t, e, ex, refAnswer(loaded), "")
	noop := score(t, e, ex, answerMsg("", false, "").Content, "")
	if _, has := ref.Components[CompSecurity]; has || !ref.Solved || ref.Total < 0.99 {
		t.Errorf("static-only reference fix: %v solved %v %v", ref.Total, ref.Solved, ref.Components)
	}
	if noop.Total != 0 || noop.Solved {
		t.Errorf("static-only no-op: %v", noop.Total)
	}
	solved := ref.Solved
	rows := []artifact.Result{{Index: 0, Reward: ref.Total, Components: ref.Components, Parsed: ref.Parsed, Solved: &solved}}
	rep, err := report.Build(ID, rows, nil, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Summary["tested"].(ReportBlock).Rows != 0 || rep.Summary["static_only"].(ReportBlock).Rows != 1 || !rep.Key[0].Undefined {
		t.Errorf("static-only row mixed into tested metrics: %v", rep.Summary)
	}
}
