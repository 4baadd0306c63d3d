package server

import (
	"encoding/json"
	"testing"

	"github.com/svbench/svbench/env"
)

// TestEnvironmentsListRubrics: GET /v1/environments describes every
// environment's rubrics — components, weights, declared ranges and the
// total's range — as the served instance scores with them.
func TestEnvironmentsListRubrics(t *testing.T) {
	ls := startServer(t, Config{Logger: quietLog})
	_, body := ls.do(t, "GET", "/v1/environments", nil)
	b, err := json.Marshal(body["environments"])
	if err != nil {
		t.Fatal(err)
	}
	var envs []EnvironmentInfo
	if err := json.Unmarshal(b, &envs); err != nil {
		t.Fatal(err)
	}
	byID := map[string]EnvironmentInfo{}
	for _, e := range envs {
		byID[e.ID] = e
		if len(e.RubricInfo) != len(e.Rubrics) {
			t.Errorf("%s: rubric_info describes %d of rubrics %v", e.ID, len(e.RubricInfo), e.Rubrics)
		}
		for i, ri := range e.RubricInfo {
			if ri.Name != e.Rubrics[i] || len(ri.Components) == 0 || ri.TotalMin > ri.TotalMax {
				t.Errorf("%s: rubric_info[%d] = %+v", e.ID, i, ri)
			}
		}
	}
	e1, ok := byID["network-logs"]
	if !ok || len(e1.RubricInfo) == 0 {
		t.Fatalf("network-logs not listed with its rubrics: %+v", byID)
	}
	var def env.RubricInfo
	for _, ri := range e1.RubricInfo {
		if ri.Name == "default" {
			def = ri
		}
	}
	want := map[string][3]float64{"accuracy": {1, 0, 1}, "format": {0.1, 0, 1}, "calibration": {0.2, 0, 1}, "asymmetric_cost": {0.5, -1, 1}, "abstention": {1, 0, 1}}
	if len(def.Components) != len(want) {
		t.Fatalf("E1 default components %+v", def.Components)
	}
	for _, c := range def.Components {
		if w := want[c.Name]; w != [3]float64{c.Weight, c.Min, c.Max} {
			t.Errorf("E1 default %s: weight %v range [%v, %v], want %v", c.Name, c.Weight, c.Min, c.Max, w)
		}
	}
	if def.TotalMin != -0.5 || def.TotalMax != 2.8 {
		t.Errorf("E1 default total range [%v, %v], want [-0.5, 2.8]", def.TotalMin, def.TotalMax)
	}
}

// TestEnvironmentsRubricFollowsParams: the description is the served
// instance's: E2 in its policy condition has no tool_observation and no
// reference rubric.
func TestEnvironmentsRubricFollowsParams(t *testing.T) {
	ls := startServer(t, Config{Logger: quietLog, Envs: []string{"e2"}, EnvParams: map[string]map[string]string{"e2": {"mode": "policy"}}})
	_, body := ls.do(t, "GET", "/v1/environments", nil)
	b, _ := json.Marshal(body["environments"])
	var envs []EnvironmentInfo
	if err := json.Unmarshal(b, &envs); err != nil || len(envs) != 1 {
		t.Fatalf("%v %s", err, b)
	}
	ris := envs[0].RubricInfo
	if len(ris) != 1 || ris[0].Name != "default" {
		t.Fatalf("policy condition rubrics: %+v", ris)
	}
	if _, ok := ris[0].Component("tool_observation"); ok || len(ris[0].Components) != 2 {
		t.Errorf("policy condition components: %+v", ris[0].Components)
	}
}
