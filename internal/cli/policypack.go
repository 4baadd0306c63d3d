package cli

import (
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// policyPackFlag adds --policy-pack, E2's own organisation policies.
func policyPackFlag(fs *pflag.FlagSet, dirs *[]string) {
	fs.StringArrayVar(dirs, "policy-pack", nil, "directory of your own E2 policy pack (policy.md, pack.json, *.rego; repeatable); implies --param mode=policy")
}

// applyPolicyPacks records --policy-pack directories as E2's policy_packs
// parameter (absolute, so a resumed run finds them) and selects the policy
// condition; an explicit mode=standard alongside them is a contradiction.
func applyPolicyPacks(params map[string]string, dirs []string) (map[string]string, error) {
	if len(dirs) == 0 {
		return params, nil
	}
	if params == nil {
		params = map[string]string{}
	}
	if m, ok := params["mode"]; ok && m != "policy" {
		return nil, usagef("--policy-pack needs the policy condition, but --param mode=%s was given", m)
	}
	params["mode"] = "policy"
	params["policy_packs"] = strings.Join(absPaths(dirs), string(os.PathListSeparator))
	return params, nil
}
