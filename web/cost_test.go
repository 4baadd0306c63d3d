package web

import (
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
)

// TestCostUnknownIsNotZero: a run whose model has no price shows an
// unknown cost on the runs table and its run page, never 0 USD.
func TestCostUnknownIsNotZero(t *testing.T) {
	fx := newFixture(t)
	dir := filepath.Join(fx.root, filepath.FromSlash(fx.live))
	meta, err := artifact.ReadMetadata(dir)
	if err != nil {
		t.Fatal(err)
	}
	meta.UsageByModel[0].Cost = nil
	meta.Cost = &artifact.Cost{Currency: "USD", PricesDate: "2026-11-01", PricesFile: "prices.toml", Unpriced: []string{"evil/model"}}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), meta); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, fx.root)
	for _, path := range []string{"/", "/run?id=" + url.QueryEscape(fx.live)} {
		_, page, _ := get(t, ts, path)
		if !strings.Contains(page, "unknown (no price for evil/model)") || strings.Contains(page, "0 USD") {
			t.Errorf("%s: cost not shown as unknown", path)
		}
	}
}
