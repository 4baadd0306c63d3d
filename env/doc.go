// Package env is the contract every svbench environment implements and every
// consumer (eval runner, offline scorer, reward server) relies on.
//
// The same code path scores a rollout whether svbench drove the model or a
// trainer did: an Environment turns a dataset row into an Example, opens an
// Episode that reacts to assistant turns (tool results, simulated users), and
// scores the finished Rollout with a named Rubric. Scoring is a pure function
// of (Example, Rollout) and must be safe for concurrent use.
package env
