package web

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/analysis/compare"
	"github.com/svbench/svbench/artifact"
)

// TestCompareIsTheCLIs: the dashboard's compare is compare.Runs with the
// CLI's default options: the same p-values, and the same refusal of a pair
// the CLI refuses unless the page asks as --allow-mismatch does.
func TestCompareIsTheCLIs(t *testing.T) {
	fx := newFixture(t)
	ts := newTestServer(t, fx.root)
	a, err := compare.Load(filepath.Join(fx.root, fx.runA))
	if err != nil {
		t.Fatal(err)
	}
	b, err := compare.Load(filepath.Join(fx.root, fx.runB))
	if err != nil {
		t.Fatal(err)
	}
	cli, err := compare.Runs(a, b, compare.Options{Reps: compare.DefaultReps, Seed: compare.DefaultSeed})
	if err != nil {
		t.Fatal(err)
	}
	_, page, _ := get(t, ts, "/compare?id="+url.QueryEscape(fx.runA)+"&id="+url.QueryEscape(fx.runB))
	for _, q := range cli.Quantities {
		row := tableRow(page, "<tr><td>"+q.Name+"</td>")
		if want := fmt.Sprintf(`<td class="num">%.3g</td>`, q.P); !strings.Contains(row, want) {
			t.Errorf("%s: dashboard row %q lacks the CLI's p %s", q.Name, row, want)
		}
	}
	// Slices: the CLI's n, its Holm-adjusted p and its bold rule.
	if len(cli.Slices) == 0 {
		t.Fatal("the fixture has no slices")
	}
	for _, sl := range cli.Slices {
		row := tableRow(page, "<tr><td>"+sl.Field+"</td><td>"+sl.Value+"</td>")
		if !sl.Tested() {
			if !strings.Contains(row, "too few pairs") {
				t.Errorf("slice %s=%s (n %d) shown as tested: %q", sl.Field, sl.Value, sl.N, row)
			}
			continue
		}
		for _, q := range sl.Quantity {
			if q.Name != "reward" {
				continue
			}
			if strings.Contains(row, "<b>") != q.Bold() || !strings.HasSuffix(row, fmt.Sprintf(`<td class="num">%.3g</td>`, q.AdjustedP())) {
				t.Errorf("slice %s=%s: row %q; bold %v, Holm p %.3g", sl.Field, sl.Value, row, q.Bold(), q.AdjustedP())
			}
		}
	}

	// The same candidate sampled at another temperature with thinking on.
	hot := filepath.Join(fx.root, "evals", "hot")
	if err := os.MkdirAll(hot, 0o755); err != nil {
		t.Fatal(err)
	}
	res, err := os.ReadFile(filepath.Join(fx.root, fx.runB, artifact.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(hot, artifact.ResultsFile), res, 0o644); err != nil {
		t.Fatal(err)
	}
	meta, err := artifact.ReadMetadata(filepath.Join(fx.root, fx.runB))
	if err != nil {
		t.Fatal(err)
	}
	meta.Sampling = json.RawMessage(`{"temperature":0.6,"extra":{"chat_template_kwargs":{"enable_thinking":true}}}`)
	if err := artifact.WriteJSONAtomic(filepath.Join(hot, artifact.MetadataFile), meta); err != nil {
		t.Fatal(err)
	}
	path := "/compare?id=" + url.QueryEscape(fx.runA) + "&id=evals/hot"
	_, page, _ = get(t, ts, path)
	if !strings.Contains(page, "not comparable") || strings.Contains(page, "paired rollouts") {
		t.Errorf("a pair the CLI refuses was compared:\n%s", page)
	}
	_, page, _ = get(t, ts, path+"&allow_mismatch=1")
	if !strings.Contains(page, "paired rollouts") || !strings.Contains(page, "Not budget-matched: temperature") {
		t.Errorf("allow_mismatch did not compare and name the difference:\n%s", page)
	}
}

// tableRow is the table row of page that starts with prefix, or "".
func tableRow(page, prefix string) string {
	i := strings.Index(page, prefix)
	if i < 0 {
		return ""
	}
	j := strings.Index(page[i:], "</tr>")
	if j < 0 {
		return page[i:]
	}
	return page[i : i+j]
}
