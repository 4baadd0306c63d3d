package codevuln

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/svbench/svbench/env"
)

// TestImportCommandChoosesTheFormat: a file is read as CVEfixes pairs, a
// directory as a CWEval checkout; a wrong pairing or bound is a usage
// error naming the flag.
func TestImportCommandChoosesTheFormat(t *testing.T) {
	run := func(args ...string) (string, error) {
		fs := pflag.NewFlagSet("import", pflag.ContinueOnError)
		runner := importCommand().Flags(fs)
		if err := fs.Parse(args); err != nil {
			return "", err
		}
		var out, errOut bytes.Buffer
		err := runner(context.Background(), fs.Args(), env.DataIO{Out: &out, Err: &errOut})
		return out.String(), err
	}
	dir := t.TempDir()
	out, err := run("taskset/cvefixes/testdata/file_change.csv", "--out", filepath.Join(dir, "cvefixes"))
	if err != nil || !strings.Contains(out, "static-only tasks") {
		t.Fatalf("a file imports as CVEfixes pairs: %q %v", out, err)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "cvefixes")); len(ents) == 0 {
		t.Error("no task written")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"taskset/cvefixes/testdata/file_change.csv", "--format", "cweval", "--out", dir}, "reads a checkout directory"},
		{[]string{"taskset/cweval/testdata/checkout", "--format", "nope", "--out", dir}, "want cweval or cvefixes"},
		{[]string{"taskset/cweval/testdata/checkout", "-c", "0", "--out", dir}, "-c must be in 1..64"},
		{[]string{"taskset/cweval/testdata/checkout", "--test-timeout", "0", "--out", dir}, "--test-timeout"},
		{[]string{"taskset/cweval/testdata/checkout"}, "--out is required"},
	} {
		_, err := run(c.args...)
		var usage env.UsageError
		if !errors.As(err, &usage) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want a usage error saying %q", c.args, err, c.want)
		}
	}
}
