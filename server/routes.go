package server

import (
	"net/http"
	"slices"
	"strings"
)

// Protocol names, as `svbench serve --help` groups the routes.
const (
	ProtocolSvbench  = "svbench"
	ProtocolOpenRLHF = "OpenRLHF"
	ProtocolOpenEnv  = "OpenEnv"
	ProtocolNemoGym  = "NeMo Gym"
	ProtocolProbes   = "probes"
)

// RouteDoc is one route as `svbench serve --help` lists it.
type RouteDoc struct {
	Protocol string
	Methods  []string
	Path     string
	Doc      string
	// Public routes need no token (probes).
	Public bool
}

// entry is one row of the route table: the protocol it belongs to, its
// path and what it is for, and how it is served. The mux, the token check
// (route.public), the NeMo Gym tool routes' reserved names and `serve
// --help` all read this one table, so a protocol added here is routed,
// guarded and documented together.
type entry struct {
	protocol string
	path     string
	doc      string
	route
}

func get(h http.HandlerFunc) map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{"GET": h}
}
func post(h http.HandlerFunc) map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{"POST": h}
}

// table is every fixed route, in the order help lists them. NeMo Gym's
// per-tool routes depend on the served environments and are added by
// nemoGymToolRoutes.
func (s *Server) table() []entry {
	rollout, ttl := s.cfg.RolloutTimeout, s.cfg.SessionTTL
	return []entry{
		{ProtocolSvbench, "/v1/environments", "ids, versions, rubrics (weights, ranges), tools, system prompts",
			route{methods: get(s.handleEnvironments)}},
		{ProtocolSvbench, "/v1/environments/{env}/examples", "prompts for a trainer (?split=&offset=&limit=&seed=)",
			route{needData: true, methods: get(s.handleExamples)}},
		{ProtocolSvbench, "/v1/score", `batched scoring {"items": [...]} → {"results": [...]}, every component`,
			route{needData: true, methods: post(s.handleScore)}},
		{ProtocolSvbench, "/v1/rollout", "play a whole episode against your inference endpoint",
			route{needData: true, timeout: rollout, methods: post(s.handleRollout)}},
		{ProtocolSvbench, "/v1/sessions", "open an episode a trainer drives turn by turn",
			route{needData: true, timeout: rollout, methods: post(s.handleSessionCreate)}},
		{ProtocolSvbench, "/v1/sessions/{id}/step", "one assistant message → tool results / next turn, done, reward",
			route{needData: true, timeout: rollout, methods: post(s.handleSessionStep)}},
		{ProtocolSvbench, "/v1/sessions/{id}", "read (transcript) or close a session",
			route{methods: map[string]http.HandlerFunc{"GET": s.handleSessionGet, "DELETE": s.handleSessionDelete}}},
		{ProtocolOpenRLHF, "/get_reward", "OpenRLHF's remote reward (token also as ?token=)",
			route{needData: true, urlToken: true, methods: post(s.handleGetReward)}},
		// A WebSocket lives as long as its session may.
		{ProtocolOpenEnv, "/ws", "one session per connection: reset, step, state, close",
			route{needData: true, timeout: ttl, methods: get(s.handleOpenEnvWS)}},
		{ProtocolOpenEnv, "/reset", "open a session (HTTP)", route{needData: true, timeout: rollout, methods: post(s.handleOpenEnvReset)}},
		{ProtocolOpenEnv, "/step", "one action in the session reset returned", route{needData: true, timeout: rollout, methods: post(s.handleOpenEnvStep)}},
		{ProtocolOpenEnv, "/state", "a session's state", route{methods: get(s.handleOpenEnvState)}},
		{ProtocolOpenEnv, "/schema", "action, observation and state schemas", route{methods: get(s.handleOpenEnvSchema)}},
		{ProtocolOpenEnv, "/metadata", "the environment's name and description", route{methods: get(s.handleOpenEnvMetadata)}},
		{ProtocolOpenEnv, "/health", "OpenEnv's health check", route{public: true, methods: get(s.handleOpenEnvHealth)}},
		{ProtocolNemoGym, "/seed_session", "start a session from a dataset row",
			route{needData: true, timeout: rollout, methods: post(s.handleNemoGymSeed)}},
		{ProtocolNemoGym, "/verify", "score a Responses API response: reward and components",
			route{needData: true, methods: post(s.handleNemoGymVerify)}},
		{ProtocolNemoGym, "/aggregate_metrics", "means of verify responses", route{methods: post(s.handleNemoGymAggregate)}},
		{ProtocolNemoGym, "/reverify_mode", `"stateless"`, route{methods: get(s.handleNemoGymReverifyMode)}},
		{ProtocolProbes, "/healthz", "200 while the process serves", route{public: true, methods: get(s.handleHealthz)}},
		{ProtocolProbes, "/readyz", "200 once every dataset is loaded", route{public: true, methods: get(s.handleReadyz)}},
		{ProtocolProbes, "/metrics", "Prometheus text", route{methods: get(s.handleMetrics)}},
	}
}

// nemoGymToolDoc is the help line of the per-tool routes.
var nemoGymToolDoc = RouteDoc{Protocol: ProtocolNemoGym, Methods: []string{"POST"}, Path: "/{tool}",
	Doc: "one route per tool of the served environments (also under /" + nemoGymRolloutPath + "/{id}/)"}

// Routes lists every route the server serves, in help order.
func Routes() []RouteDoc {
	var out []RouteDoc
	for _, e := range (&Server{}).table() {
		ms := make([]string, 0, len(e.methods))
		for m := range e.methods {
			ms = append(ms, m)
		}
		slices.Sort(ms)
		slices.Reverse(ms) // GET before DELETE, POST alone
		out = append(out, RouteDoc{Protocol: e.protocol, Methods: ms, Path: e.path, Doc: e.doc, Public: e.public})
		if e.path == "/reverify_mode" {
			out = append(out, nemoGymToolDoc)
		}
	}
	return out
}

// firstSegment is a path's first segment: "v1" of /v1/score.
func firstSegment(path string) string {
	seg, _, _ := strings.Cut(strings.TrimPrefix(path, "/"), "/")
	return seg
}
