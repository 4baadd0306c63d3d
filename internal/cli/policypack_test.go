package cli

import (
	"strings"
	"testing"
)

func TestApplyPolicyPacks(t *testing.T) {
	p, err := applyPolicyPacks(map[string]string{"tool_budget": "3"}, []string{"packs/acme"})
	if err != nil || p["mode"] != "policy" || !strings.HasSuffix(p["policy_packs"], "packs/acme") || !strings.HasPrefix(p["policy_packs"], "/") {
		t.Errorf("got %v, %v; want mode=policy and an absolute policy_packs", p, err)
	}
	if _, err := applyPolicyPacks(map[string]string{"mode": "standard"}, []string{"x"}); err == nil {
		t.Error("--policy-pack with mode=standard accepted")
	}
	if p, _ := applyPolicyPacks(nil, nil); p != nil {
		t.Errorf("no packs changed the parameters: %v", p)
	}
}
