package web

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run with the trainer's per-step metrics beside its rows shows the
// training curves on its page. The file here is a bare list of step objects
// (a form the real hosted export, {"metrics": [...]}, does not use).
func TestRunPageShowsTrainerCurves(t *testing.T) {
	fx := newFixture(t)
	steps := `[{"step": 0, "reward/e/mean": 0.1, "reward/e/min": 0, "reward/e/max": 0.2, "metrics/e/reward_accuracy": 0.1, "eval/e/avg@1": 0.3, "decode_len/e/mean": 100},
 {"step": 1, "reward/e/mean": 0.5, "reward/e/min": 0.1, "reward/e/max": 0.9, "metrics/e/reward_accuracy": 0.5, "decode_len/e/mean": 80},
 {"step": 2, "reward/e/mean": 0.9, "reward/e/min": 0.8, "reward/e/max": 1, "metrics/e/reward_accuracy": 0.9, "decode_len/e/mean": 60},
 {"step": 3, "eval/e/avg@1": 0.8}]`
	if err := os.WriteFile(filepath.Join(fx.root, filepath.FromSlash(fx.runA), "metrics_raw.json"), []byte(steps), 0o644); err != nil {
		t.Fatal(err)
	}
	ts := newTestServer(t, fx.root)
	code, body, _ := get(t, ts, "/run?id="+url.QueryEscape(fx.runA))
	if code != 200 {
		t.Fatalf("run page: %d", code)
	}
	for _, want := range []string{"training_reward", "training_components", "training_decode_len"} {
		if !strings.Contains(body, want) {
			t.Errorf("run page lacks chart %s", want)
		}
	}
}
