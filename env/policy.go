package env

import "context"

// Policy is a built-in, in-process stand-in for a model: given the
// conversation so far and the offered tools it writes the next assistant
// message. It sees exactly what a model sees (never the answer), so a
// built-in baseline's score is comparable with a model's.
type Policy interface {
	Act(ctx context.Context, conversation []Message, tools []Tool) (Message, error)
}

// PolicyFunc adapts a function to Policy.
type PolicyFunc func(ctx context.Context, conversation []Message, tools []Tool) (Message, error)

// Act calls f.
func (f PolicyFunc) Act(ctx context.Context, conv []Message, tools []Tool) (Message, error) {
	return f(ctx, conv, tools)
}

// PolicyProvider is implemented by environments that ship baselines.
type PolicyProvider interface {
	Policy(name string) (Policy, bool)
}

// DemoConditioner is implemented by environments with more than one
// condition worth showing in `svbench demo`: each parameter set names one
// more condition whose built-in policies the demo runs after the default
// one (E2's policy condition, for instance).
type DemoConditioner interface {
	DemoConditions() []map[string]string
}
