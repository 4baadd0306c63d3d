package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
)

// envState is one served environment with its dataset, loaded once and
// read-only afterwards, so handlers share it without locks.
type envState struct {
	id          string
	env         env.Environment
	info        env.Info
	rubrics     []env.RubricInfo
	tools       []map[string]any
	datasetPath string
	// lane is where the environment's items wait for a scoring worker.
	lane *lane

	ds     *env.Dataset
	byID   map[string]int
	splits map[string][]int
}

func newEnvState(id string, e env.Environment) *envState {
	info := e.Info()
	tools := make([]map[string]any, 0, len(info.Tools))
	for _, t := range info.Tools {
		tools = append(tools, t.OpenAIFunction())
	}
	return &envState{id: id, env: e, info: info, tools: tools, rubrics: describeRubrics(e, info)}
}

// describeRubrics describes each rubric the environment lists, as the
// served instance (its parameters: a reward source adding the judge, E2's
// policy mode) scores with it; a rubric the instance refuses is left out.
func describeRubrics(e env.Environment, info env.Info) []env.RubricInfo {
	var out []env.RubricInfo
	for _, name := range info.Rubrics {
		if ri, ok, err := env.DescribeRubric(e, name); ok && err == nil {
			out = append(out, ri)
		}
	}
	return out
}

func (st *envState) load(ctx context.Context) error {
	ds, err := st.env.Load(ctx, st.datasetPath)
	if err != nil {
		name := st.datasetPath
		if name == "" {
			name = "embedded mini set"
		}
		return fmt.Errorf("%s: load %s: %w", st.id, name, err)
	}
	st.byID = make(map[string]int, len(ds.Examples))
	st.splits = map[string][]int{}
	for i, ex := range ds.Examples {
		if prev, dup := st.byID[ex.ID]; dup {
			return fmt.Errorf("%s: dataset %s: rows %d and %d share example id %q; ids must be unique to be addressable", st.id, ds.Info.ID, prev+1, i+1, ex.ID)
		}
		st.byID[ex.ID] = i
		if sp, ok := ex.Meta["split"].(string); ok && sp != "" {
			st.splits[sp] = append(st.splits[sp], i)
		}
	}
	st.ds = ds
	return nil
}

// example finds a dataset example by id.
func (st *envState) example(id string) (env.Example, *APIError) {
	i, ok := st.byID[id]
	if !ok {
		return env.Example{}, apiErrorf(CodeUnknownExample, "environment %s has no example %q in dataset %s (list them with GET /v1/environments/%s/examples)", st.id, id, st.ds.Info.ID, st.id)
	}
	return st.ds.Examples[i], nil
}

// lookupEnv resolves any accepted name form to a served environment.
func (s *Server) lookupEnv(name string) (*envState, *APIError) {
	if name == "" {
		if s.def != "" {
			return s.envs[s.def], nil
		}
		return nil, apiErrorf(CodeUnknownEnv, "field \"env\" missing (served: %v)", s.order)
	}
	id, err := s.cfg.Registry.Resolve(name)
	if err != nil {
		return nil, apiErrorf(CodeUnknownEnv, "%v", err)
	}
	st, ok := s.envs[id]
	if !ok {
		return nil, apiErrorf(CodeUnknownEnv, "environment %s is not served here (served: %v)", id, s.order)
	}
	return st, nil
}

// EnvironmentInfo is one entry of GET /v1/environments.
type EnvironmentInfo struct {
	env.Info
	// OpenAITools renders Info.Tools as OpenAI `tools[]` entries, ready to
	// pass to a chat completion request.
	OpenAITools []map[string]any `json:"openai_tools"`
	Dataset     *env.DatasetInfo `json:"dataset,omitempty"`
	Splits      []string         `json:"splits,omitempty"`
	// RubricInfo describes each rubric of Info.Rubrics as this server
	// scores with it: components with weights and declared ranges, and the
	// total's range, so per-component (GDPO) normalisation needs no copy.
	RubricInfo []env.RubricInfo `json:"rubric_info,omitempty"`
}

func (s *Server) handleEnvironments(w http.ResponseWriter, r *http.Request) {
	out := make([]EnvironmentInfo, 0, len(s.order))
	ready := s.ready.Load()
	for _, id := range s.order {
		st := s.envs[id]
		ei := EnvironmentInfo{Info: st.info, OpenAITools: st.tools, RubricInfo: st.rubrics}
		if ready {
			di := st.ds.Info
			ei.Dataset = &di
			ei.Splits = slices.Sorted(maps.Keys(st.splits))
		}
		out = append(out, ei)
	}
	writeJSON(w, http.StatusOK, map[string]any{"environments": out, "default_env": s.def})
}

// ExampleOut is one prompt as a trainer consumes it.
type ExampleOut struct {
	ExampleID string           `json:"example_id"`
	Env       string           `json:"env"`
	Prompt    []env.Message    `json:"prompt"`
	Tools     []map[string]any `json:"tools,omitempty"`
	Answer    json.RawMessage  `json:"answer"`
	Meta      map[string]any   `json:"meta,omitempty"`
}

// ExamplesResponse is the body of GET /v1/environments/{env}/examples.
type ExamplesResponse struct {
	Env      string          `json:"env"`
	Version  string          `json:"version"`
	Dataset  env.DatasetInfo `json:"dataset"`
	Split    string          `json:"split,omitempty"`
	Seed     *uint64         `json:"seed,omitempty"`
	Total    int             `json:"total"`
	Offset   int             `json:"offset"`
	Examples []ExampleOut    `json:"examples"`
}

func (s *Server) handleExamples(w http.ResponseWriter, r *http.Request) {
	st, aerr := s.lookupEnv(r.PathValue("env"))
	if aerr != nil {
		writeError(w, r, http.StatusNotFound, aerr)
		return
	}
	q := r.URL.Query()
	intParam := func(name string, def, max int) (int, *APIError) {
		v := q.Get(name)
		if v == "" {
			return def, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, apiErrorf(CodeBadRequest, "query parameter %q must be a non-negative integer, got %q", name, v)
		}
		if n > max {
			return 0, apiErrorf(CodeBadRequest, "query parameter %q is %d; the maximum is %d (page with offset)", name, n, max)
		}
		return n, nil
	}
	offset, aerr := intParam("offset", 0, int(^uint(0)>>1))
	if aerr == nil {
		var limit int
		limit, aerr = intParam("limit", 100, s.cfg.MaxExamples)
		if aerr == nil {
			s.writeExamples(w, r, st, offset, limit)
			return
		}
	}
	writeError(w, r, http.StatusBadRequest, aerr)
}

func (s *Server) writeExamples(w http.ResponseWriter, r *http.Request, st *envState, offset, limit int) {
	q := r.URL.Query()
	idx := make([]int, 0, len(st.ds.Examples))
	split := q.Get("split")
	if split == "" || split == "all" {
		for i := range st.ds.Examples {
			idx = append(idx, i)
		}
	} else {
		rows, ok := st.splits[split]
		if !ok {
			known := slices.Sorted(maps.Keys(st.splits))
			writeError(w, r, http.StatusBadRequest, apiErrorf(CodeBadRequest, "dataset %s of %s has no split %q (splits: %v; omit split for all rows)", st.ds.Info.ID, st.id, split, known))
			return
		}
		idx = append(idx, rows...)
	}
	resp := ExamplesResponse{Env: st.id, Version: st.info.Version, Dataset: st.ds.Info, Split: split, Total: len(idx), Offset: offset}
	if v := q.Get("seed"); v != "" {
		seed, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			writeError(w, r, http.StatusBadRequest, apiErrorf(CodeBadRequest, "query parameter \"seed\" must be an unsigned integer, got %q", v))
			return
		}
		resp.Seed = &seed
		perm := dataset.Permutation(len(idx), seed)
		shuffled := make([]int, len(idx))
		for i, p := range perm {
			shuffled[i] = idx[p]
		}
		idx = shuffled
	}
	resp.Examples = []ExampleOut{}
	for i := offset; i < len(idx) && i-offset < limit; i++ {
		ex := st.ds.Examples[idx[i]]
		resp.Examples = append(resp.Examples, ExampleOut{
			ExampleID: ex.ID, Env: st.id, Prompt: ex.Prompt, Tools: st.tools, Answer: ex.Answer, Meta: ex.Meta,
		})
	}
	writeJSON(w, http.StatusOK, resp)
}
