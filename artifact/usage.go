package artifact

import "github.com/svbench/svbench/env"

// Model-call roles: who a call served. Environments with more parties (a
// simulated target, a safety judge) use these names so reports can add them
// up across environments.
const (
	RolePolicy = "policy" // the model under evaluation
	RoleJudge  = "judge"  // a model grading answers (llm_judge, hybrid, safety judges)
	RoleTarget = "target" // a model playing the other side (red-team targets)
)

// ModelUsage is the tokens one (role, model) pair consumed in a run, across
// every call it made, retried and failed rows included: what the endpoint
// billed, not only what the kept rows show.
type ModelUsage struct {
	Role  string `json:"role"`
	Model string `json:"model"`
	// Calls counts model calls answered by the endpoint; CachedCalls those
	// replayed from the response cache (free this time); Errors the calls
	// that failed.
	Calls       int64 `json:"calls"`
	CachedCalls int64 `json:"cached_calls,omitempty"`
	Errors      int64 `json:"errors,omitempty"`
	// CacheRejected counts the calls (already in Calls) whose cached entry
	// failed its checks and was asked again: a cache that keeps rejecting
	// entries was edited or corrupted.
	CacheRejected int64 `json:"cache_rejected,omitempty"`
	// Usage is what the endpoint reported for the calls it answered.
	Usage env.Usage `json:"usage"`
	// CachedUsage is what the replayed responses reported when they were
	// first sampled: tokens this run did not pay for.
	CachedUsage env.Usage `json:"cached_usage,omitempty"`
	// Cost is Usage priced with the run's --prices file; nil when no price
	// is known for the model.
	Cost *float64 `json:"cost,omitempty"`
}

// Cost is a run's priced usage.
type Cost struct {
	Currency string  `json:"currency"`
	Total    float64 `json:"total"`
	// PricesFile and PricesDate say where the prices came from and how old
	// they are: prices go stale, so a cost is only as good as its date.
	PricesFile string `json:"prices_file,omitempty"`
	PricesDate string `json:"prices_date,omitempty"`
	// Unpriced lists models with usage but no price: Total leaves them out.
	Unpriced []string `json:"unpriced,omitempty"`
}
