package env

// Exploit is a reward-hacking strategy an environment ships so that
// `svbench probe` (and its own tests) can show that the rubric does not pay
// it. It is a Policy like any built-in baseline: it sees only what a model
// sees (never the answer), so whatever it earns a trained policy could earn
// too.
type Exploit struct {
	// Name is unique within the environment ("keyword-bag").
	Name string
	// Family groups strategies that attack the same weakness ("simulator
	// word game", "suppression", "label shortcut"); the README's probe
	// tables are keyed by it.
	Family string
	// Description says in one sentence what the strategy does.
	Description string
	Policy      Policy
	// Params, when set, are environment parameters the strategy needs (a
	// tool condition, a reward source); the honest baseline runs under the
	// same parameters.
	Params map[string]string
}

// Prober is implemented by environments that ship exploit strategies.
type Prober interface {
	// Exploits lists the registered strategies.
	Exploits() []Exploit
	// HonestPolicy names the built-in policy that does the task honestly;
	// the probe's bound is its mean reward on the same rows.
	HonestPolicy() string
}
