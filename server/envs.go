package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"sync/atomic"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
)

// envState is one served environment with its dataset, loaded once and
// read-only afterwards, so handlers share it without locks.
type envState struct {
	id   string
	env  env.Environment
	info env.Info
	// limits are the episode limits a completion scored by /v1/score must
	// keep (env.Limits.Check).
	limits      env.Limits
	rubrics     []env.RubricInfo
	tools       []map[string]any
	datasetPath string
	// lane is where the environment's items wait for a scoring worker.
	lane *lane

	// ds holds every row served, of every split; splits says which rows
	// are which split, infos which dataset each split came from. split is
	// the one handed out when a request names none (Config.Split when
	// served, else every row).
	ds     *env.Dataset
	byID   map[string]int
	splits map[string][]int
	infos  map[string]env.DatasetInfo
	split  string
	// warnedTest makes the warning about serving the evaluation split to a
	// trainer once per environment.
	warnedTest atomic.Bool
}

func newEnvState(id string, e env.Environment) *envState {
	info := e.Info()
	tools := make([]map[string]any, 0, len(info.Tools))
	for _, t := range info.Tools {
		tools = append(tools, t.OpenAIFunction())
	}
	return &envState{id: id, env: e, info: info, limits: env.LimitsOf(info, 0), tools: tools, rubrics: describeRubrics(e, info)}
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

func (st *envState) load(ctx context.Context, want string) error {
	st.infos = map[string]env.DatasetInfo{}
	var parts []*env.Dataset
	if st.datasetPath != "" {
		ds, err := env.LoadDataset(ctx, st.env, st.datasetPath, "")
		if err != nil {
			return fmt.Errorf("%s: load %s: %w", st.id, st.datasetPath, err)
		}
		parts = append(parts, ds)
	} else {
		// Every split the environment ships, so a trainer can be served
		// train rows and still score its policy on test ones by id.
		for _, name := range env.SplitNames() {
			ds, err := env.LoadDataset(ctx, st.env, "", name)
			if errors.Is(err, env.ErrNoSplit) {
				continue
			}
			if err != nil {
				return fmt.Errorf("%s: load the embedded %s split: %w", st.id, name, err)
			}
			parts = append(parts, ds)
		}
	}
	all := &env.Dataset{Info: parts[0].Info}
	st.byID = map[string]int{}
	st.splits = map[string][]int{}
	for _, ds := range parts {
		for _, ex := range ds.Examples {
			i := len(all.Examples)
			if prev, dup := st.byID[ex.ID]; dup {
				return fmt.Errorf("%s: dataset %s: rows %d and %d share example id %q; ids must be unique to be addressable", st.id, ds.Info.ID, prev+1, i+1, ex.ID)
			}
			st.byID[ex.ID] = i
			// A row's own split (a file holding several) wins over the
			// split its file or embedded set is.
			sp := ds.Info.Split
			if m, ok := ex.Meta["split"].(string); ok && m != "" {
				sp = m
			}
			if sp != "" {
				st.splits[sp] = append(st.splits[sp], i)
				if _, ok := st.infos[sp]; !ok {
					st.infos[sp] = ds.Info
				}
			}
			all.Examples = append(all.Examples, ex)
		}
	}
	if len(parts) > 1 {
		all.Info = env.DatasetInfo{ID: "embedded:" + st.id, Rows: len(all.Examples)}
	}
	st.ds = all
	if _, ok := st.splits[want]; ok {
		st.split = want
	}
	return nil
}

// rowsOf answers the rows a request's split names ("" = the served
// default, "all" = every row), with the dataset they came from.
func (st *envState) rowsOf(split string) ([]int, env.DatasetInfo, string, *APIError) {
	if split == "" {
		split = st.split
	}
	if split == "" || split == "all" {
		idx := make([]int, len(st.ds.Examples))
		for i := range idx {
			idx[i] = i
		}
		return idx, st.ds.Info, "all", nil
	}
	rows, ok := st.splits[split]
	if !ok {
		known := slices.Sorted(maps.Keys(st.splits))
		return nil, env.DatasetInfo{}, "", apiErrorf(CodeBadRequest, "%s serves no %s split (splits: %v; split=all for every row)", st.id, split, known)
	}
	return rows, st.infos[split], split, nil
}

// example finds a dataset example by id.
func (st *envState) example(id string) (env.Example, *APIError) {
	i, ok := st.byID[id]
	if !ok {
		return env.Example{}, apiErrorf(CodeUnknownExample, "environment %s has no example %q in dataset %s (list them with GET /v1/environments/%s/examples)", st.id, id, st.ds.Info.ID, st.id)
	}
	return st.ds.Examples[i], nil
}

// servedTest warns, in the server log once per environment and in the
// answer every time, that evaluation rows went to a caller: scoring a
// policy on them is right, training on them makes its test score a
// training score.
func (s *Server) servedTest(st *envState, r *http.Request) string {
	msg := fmt.Sprintf("these are %s's evaluation rows (split test): train on split=train, or a policy's test score measures its own training data", st.id)
	if !st.warnedTest.Swap(true) {
		s.log.Warn("serving the evaluation split to a caller", "env", st.id, "path", r.URL.Path, "remote", r.RemoteAddr,
			"hint", "trainers should take split=train; test is for scoring a policy")
	}
	return msg
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
	// DefaultSplit is what examples and OpenEnv resets hand out when a
	// request names no split (serve --split; train unless changed).
	DefaultSplit string `json:"default_split,omitempty"`
	// Datasets is each split's dataset, with its revision.
	Datasets map[string]env.DatasetInfo `json:"datasets,omitempty"`
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
			if st.split != "" {
				di = st.infos[st.split]
			}
			ei.Dataset = &di
			ei.Splits = slices.Sorted(maps.Keys(st.splits))
			ei.DefaultSplit = st.split
			ei.Datasets = st.infos
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
	Env     string          `json:"env"`
	Version string          `json:"version"`
	Dataset env.DatasetInfo `json:"dataset"`
	Split   string          `json:"split,omitempty"`
	// Warning says when the rows are the evaluation split: a policy
	// trained on them cannot be evaluated on them.
	Warning  string       `json:"warning,omitempty"`
	Seed     *uint64      `json:"seed,omitempty"`
	Total    int          `json:"total"`
	Offset   int          `json:"offset"`
	Examples []ExampleOut `json:"examples"`
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
	idx, info, split, aerr := st.rowsOf(q.Get("split"))
	if aerr != nil {
		writeError(w, r, http.StatusBadRequest, aerr)
		return
	}
	resp := ExamplesResponse{Env: st.id, Version: st.info.Version, Dataset: info, Split: split, Total: len(idx), Offset: offset}
	if split == env.SplitTest {
		resp.Warning = s.servedTest(st, r)
	}
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
