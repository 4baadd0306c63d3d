package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/svbench/svbench/artifact"
)

// TestEnvironmentFlagsComeFromRegistrations: the environments' own flags
// (E2's --policy and --policy-pack, E5's --target-model, E6's
// --attacker-model, E5/E6's --keep-unsafe) are declared by their
// registrations, recorded as parameters, and refused for an environment
// that has no such flag.
func TestEnvironmentFlagsComeFromRegistrations(t *testing.T) {
	out := t.TempDir()
	keep := filepath.Join(t.TempDir(), "unsafe.jsonl")
	code, _, stderr := runCLI(t, "eval", "--env", "e5", "-m", "builtin:template-attacker", "--target-model", "builtin:refuse-all",
		"--keep-unsafe", keep, "-n", "2", "--out", out, "--progress", "none", "--no-report")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	dirs := runDirs(t, out)
	if len(dirs) != 1 {
		t.Fatalf("runs: %v", dirs)
	}
	meta, err := artifact.ReadMetadata(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if meta.Params["target_model"] != "builtin:refuse-all" || meta.Params["keep_unsafe"] != keep {
		t.Errorf("params %v: want target_model and an absolute keep_unsafe recorded", meta.Params)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--env", "e1", "--policy-pack", "packs/acme"}, "--policy-pack is a flag of config-verification, not of network-logs"},
		{[]string{"--env", "e5", "--attacker-model", "builtin:template-attacker"}, "--attacker-model is a flag of redteam-defense, not of redteam-attack"},
		{[]string{"--env", "e2", "--policy-pack", "packs/acme", "--param", "mode=standard"}, "mode=policy, but mode=standard"},
		{[]string{"--env", "e5", "--target-model", "a", "--target-model", "b"}, "given 2 times"},
		{[]string{"--env", "e2", "--policy", filepath.Join(t.TempDir(), "missing")}, "missing"},
	} {
		args := append([]string{"eval", "-m", "builtin:refuse-all", "-n", "1", "--out", t.TempDir(), "--progress", "none"}, c.args...)
		code, _, stderr := runCLI(t, args...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want a usage error mentioning %q", c.args, code, stderr, c.want)
		}
	}
}

// TestServeAppliesEnvironmentFlags: serve offers the same flags for the
// environments it serves, and refuses one none of them declares.
func TestServeAppliesEnvironmentFlags(t *testing.T) {
	var p envParamFlags
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	p.register(fs, false)
	if fs.Lookup("target-model") != nil {
		t.Error("serve builds no target models, yet offers --target-model")
	}
	if err := fs.Parse([]string{"--policy-pack", "/packs/acme"}); err != nil {
		t.Fatal(err)
	}
	got, err := servedParamFlags(&p, []string{"e1,e2"}, nil, map[string]map[string]string{"e2": {"tool_budget": "3"}})
	if err != nil {
		t.Fatal(err)
	}
	e2 := got["config-verification"]
	if e2["policy_packs"] != "/packs/acme" || e2["mode"] != "policy" || e2["tool_budget"] != "3" || got["network-logs"] != nil {
		t.Errorf("served params %v: want E2's policy condition only", got)
	}
	if _, err := servedParamFlags(&p, []string{"e1"}, nil, nil); err == nil || !strings.Contains(err.Error(), "none of them is served") {
		t.Errorf("--policy-pack without E2 served: %v", err)
	}
	if _, err := servedParamFlags(&p, []string{"e2"}, map[string]string{"mode": "standard"}, nil); err == nil || !strings.Contains(err.Error(), "mode=standard") {
		t.Errorf("--policy-pack against a shared mode=standard: %v", err)
	}
}

// TestProbeTakesThePositionalEnvironmentAndItsFlags: `svbench probe e2
// --policy-pack DIR` probes the pack as eval would evaluate it.
func TestProbeTakesThePositionalEnvironmentAndItsFlags(t *testing.T) {
	out := t.TempDir()
	if code, _, stderr := runCLI(t, "probe", "e7", "--no-search", "--out", out); code != 0 {
		t.Fatalf("probe e7: exit %d: %s", code, stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"e2", "--policy-pack", filepath.Join(t.TempDir(), "nope")}, "nope: not a directory"},
		{[]string{"e1", "--policy-pack", "packs/acme"}, "--policy-pack is a flag of config-verification, not of network-logs"},
		{[]string{"e2", "--env", "e1"}, "given twice"},
	} {
		code, _, stderr := runCLI(t, append(append([]string{"probe"}, c.args...), "--no-search", "--out", t.TempDir())...)
		if code != 2 || !strings.Contains(stderr, c.want) {
			t.Errorf("probe %v: exit %d, stderr %q; want a usage error mentioning %q", c.args, code, stderr, c.want)
		}
	}
}
