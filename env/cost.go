package env

// ScoreCost is how long scoring one rollout takes, in orders of magnitude.
// A reward service shares its scoring workers between environments; one
// whose items hold a worker for seconds must not be able to take every
// worker from those whose items need microseconds, and the service can only
// tell the two apart if the environment says which it is.
type ScoreCost int

const (
	// CostLight is scoring in-process (parsers, OPA, linters as libraries):
	// micro- to milliseconds per item. Environments that declare nothing
	// are light.
	CostLight ScoreCost = iota
	// CostHeavy is scoring that runs programs (a sandbox executing tests, a
	// compiler) or waits on a remote model: seconds per item.
	CostHeavy
)

// String is the cost's name as metrics and logs show it.
func (c ScoreCost) String() string {
	if c == CostHeavy {
		return "heavy"
	}
	return "light"
}

// ScoreCoster is implemented by environments whose scoring is not light.
// An environment whose cost depends on its parameters (a judge model as
// the reward source) answers for the instance it is.
type ScoreCoster interface {
	ScoreCost() ScoreCost
}

// CostOf is e's declared scoring cost, CostLight when it declares none.
func CostOf(e Environment) ScoreCost {
	if c, ok := e.(ScoreCoster); ok {
		return c.ScoreCost()
	}
	return CostLight
}
