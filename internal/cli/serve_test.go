package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/svbench/svbench/server"
)

func TestServeParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
	}{
		{"8MiB", 8 << 20}, {"512KB", 512000}, {"1048576", 1 << 20}, {"2 GiB", 2 << 30}, {"64k", 64 << 10}, {"10B", 10},
	} {
		got, err := serveParseSize("--max-body", tc.in)
		if err != nil || got != tc.want {
			t.Errorf("%q: %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "0", "-1MiB", "8XB", "1.5MiB", "99999999999GiB"} {
		if _, err := serveParseSize("--max-body", bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestServeBadFlags(t *testing.T) {
	t.Setenv("SVBENCH_EMPTY_TOKEN", "")
	for _, args := range [][]string{
		{"serve", "--max-body", "lots"},
		{"serve", "--envs", "e99"},
		{"serve", "--token-env", "SVBENCH_EMPTY_TOKEN"},
		{"serve", "--timeout", "0s"},
		{"serve", "--dataset", "e1"},
		{"serve", "--log-format", "xml"},
		{"serve", "--rollout-allow", "http://x/v1"},
		{"serve", "--envs", "e1", "--env-workers", "e1"},
		{"serve", "--envs", "e1", "--env-workers", "e1=0"},
		{"serve", "--envs", "e1", "--env-workers", "e99=2"},
		{"serve", "--envs", "e1", "--env-workers", "e2=2"},
		{"serve", "--envs", "e1", "--param", "e3:test_timeout=60"},
		{"serve", "--envs", "e1", "--param", ":test_timeout=60"},
		{"serve", "--envs", "e1", "--param", "e1:reward_source"},
	} {
		var out, errb bytes.Buffer
		if code := Execute(context.Background(), args, &out, &errb); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d (%s)", args, code, ExitUsage, errb.String())
		}
		if !strings.Contains(errb.String(), "svbench:") {
			t.Errorf("%v: no error message: %q", args, errb.String())
		}
	}
}

func TestServeParams(t *testing.T) {
	all, own, err := serveParams([]string{"reward_source=executable", "e3:test_timeout=60", "e3:sandbox=bwrap", "e2:policy_dir=a:b=c"})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all["reward_source"] != "executable" {
		t.Errorf("shared params %v", all)
	}
	if len(own) != 2 || own["e3"]["test_timeout"] != "60" || own["e3"]["sandbox"] != "bwrap" || own["e2"]["policy_dir"] != "a:b=c" {
		t.Errorf("per-environment params %v", own)
	}
}

// TestServeHelpListsEveryRoute: `svbench serve --help` lists every route
// the server's table routes, the OpenEnv and NeMo Gym ones included.
func TestServeHelpListsEveryRoute(t *testing.T) {
	code, stdout, stderr := runCLI(t, "serve", "--help")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, r := range server.Routes() {
		if !strings.Contains(stdout, r.Path) {
			t.Errorf("serve --help lacks %s (%s)", r.Path, r.Protocol)
		}
	}
}
