package llm

import "context"

type rolloutKey struct{}

// WithRollout marks ctx as belonging to rollout r of its example. Clients
// that key on the request (the response cache) read it so that -r 4 still
// samples four times: four identical requests are four draws, not one.
func WithRollout(ctx context.Context, r int) context.Context {
	return context.WithValue(ctx, rolloutKey{}, r)
}

// RolloutFrom returns the rollout index WithRollout stored, and whether one
// was stored.
func RolloutFrom(ctx context.Context) (int, bool) {
	r, ok := ctx.Value(rolloutKey{}).(int)
	return r, ok
}
