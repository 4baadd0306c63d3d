package reporttest

import (
	"encoding/json"
	"testing"
)

// TestSchemaRefuses makes sure the schema check has teeth: a valid
// reference summary passes and each broken variant fails.
func TestSchemaRefuses(t *testing.T) {
	sch := compileSchema(t)
	const valid = `{"environment": "sv-env-network-logs", "version": "0.1.0", "run_id": "r", "timestamp": "2025-01-01T00:00:00Z",
		"model": "m", "n_examples": 1, "metrics": {
		"detection": {"tpr": 0, "fpr": 0, "fnr": 1, "precision": 0, "f1": 0, "accuracy": 0},
		"calibration": {"ece": 0, "brier": 0},
		"cost": {"fn_cost_weight": 10, "fp_cost_weight": 1, "total_cost": 0, "cost_weighted_accuracy": 1},
		"abstention": {"abstain_rate": 1, "accuracy_non_abstained": 0, "aurc": 0}}}`
	tests := []struct {
		name  string
		patch func(m map[string]any)
		ok    bool
	}{
		{"valid", func(map[string]any) {}, true},
		{"no examples", func(m map[string]any) { m["n_examples"] = 0 }, false},
		{"unknown environment", func(m map[string]any) { m["environment"] = "network-logs" }, false},
		{"timestamp not RFC 3339", func(m map[string]any) { m["timestamp"] = "yesterday" }, false},
		{"version not semver", func(m map[string]any) { m["version"] = "v1" }, false},
		{"undefined written as null", func(m map[string]any) {
			m["metrics"].(map[string]any)["detection"].(map[string]any)["precision"] = nil
		}, false},
		{"no run_id", func(m map[string]any) { delete(m, "run_id") }, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var m map[string]any
			if err := json.Unmarshal([]byte(valid), &m); err != nil {
				t.Fatal(err)
			}
			tc.patch(m)
			if err := validate(sch, m); (err == nil) != tc.ok {
				t.Errorf("validate: %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
