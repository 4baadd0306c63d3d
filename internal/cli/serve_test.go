package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
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
