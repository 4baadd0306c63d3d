package ingest

import (
	"strings"

	"github.com/svbench/svbench/env"
)

// ClientName reads a reward function name svbench's Python client gives
// its functions (clients/python/svbench: trl.py and verifiers.py name them
// svbench_<env>_<component>, and svbench_<env>_reward for the total, with
// the environment as the user wrote it, "-" and "/" made "_"). TRL names
// its completions columns and verifiers its metrics after the functions,
// so these names come back in the rows. It returns the canonical
// environment id and the component ("reward" for the total); false when
// name is not of that form or names no registered environment.
//
// Component names hold underscores too (asymmetric_cost), so the split
// is where the longest environment prefix resolves.
func ClientName(name string) (envID, component string, ok bool) {
	rest, found := strings.CutPrefix(name, "svbench_")
	if !found {
		return "", "", false
	}
	for i := len(rest) - 1; i > 0; i-- {
		if rest[i] != '_' || i == len(rest)-1 {
			continue
		}
		if id, rok := resolveMangled(rest[:i]); rok {
			return id, rest[i+1:], true
		}
	}
	return "", "", false
}

// resolveMangled resolves an environment name after the client replaced
// "-" and "/" with "_": "e1", "network_logs", "sv_env_network_logs",
// "intertwine_sv_env_network_logs".
func resolveMangled(s string) (string, bool) {
	cands := []string{s}
	if i := strings.Index(s, "sv_env_"); i >= 0 {
		cands = append(cands, s[i+len("sv_env_"):])
	}
	for _, c := range cands {
		if id, err := env.Default.Resolve(strings.ReplaceAll(c, "_", "-")); err == nil {
			return id, true
		}
	}
	return "", false
}
