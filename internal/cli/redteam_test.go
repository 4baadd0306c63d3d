package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/redteam"
)

func TestRedteamImportAndTournament(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	rows := filepath.Join(dir, "jbb.jsonl")
	root := newRootCmd(&out, &errb)
	root.SetArgs([]string{"data", "import", "e5", "--format", "jbb", "../../envs/redteam/testdata/import/jbb_harmful.csv", "../../envs/redteam/testdata/import/jbb_benign.csv", "--out", rows})
	if err := root.Execute(); err != nil {
		t.Fatalf("import: %v\n%s", err, errb.String())
	}
	if !strings.Contains(out.String(), "wrote 4 rows") {
		t.Fatalf("import said %q", out.String())
	}

	tdir := filepath.Join(dir, "t")
	out.Reset()
	root = newRootCmd(&out, &errb)
	root.SetArgs([]string{"redteam", "tournament", "--attacker", "builtin:template-attacker", "--defender", "builtin:helpful-all", "--rounds", "2", "--out", tdir})
	if err := root.Execute(); err != nil {
		t.Fatalf("tournament: %v\n%s", err, errb.String())
	}
	var tj struct {
		Points []redteam.RoundCategory `json:"points"`
	}
	b, err := os.ReadFile(filepath.Join(tdir, "tournament.json"))
	if err != nil || json.Unmarshal(b, &tj) != nil {
		t.Fatal(err)
	}
	if len(tj.Points) == 0 {
		t.Errorf("tournament.json has no points")
	}
	// What the tournament writes and redacts is tested next to it
	// (envs/redteam/tournament_test.go); here, the command line.
	if !strings.Contains(out.String(), "tournament builtin:template-attacker vs builtin:helpful-all, 2 round(s)") ||
		!strings.Contains(errb.String(), "round 2/2: e6 builtin:helpful-all") {
		t.Errorf("stdout %q, stderr %q", out.String(), errb.String())
	}
}

func TestRedteamTournamentUsage(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no sides", []string{"redteam", "tournament"}, "--attacker and --defender are required"},
		{"rounds", []string{"redteam", "tournament", "--attacker", "builtin:template-attacker", "--defender", "builtin:balanced", "--rounds", "0"}, "--rounds 0"},
		{"param", []string{"redteam", "tournament", "--attacker", "builtin:template-attacker", "--defender", "builtin:balanced", "--param", "judge"}, "want key=value"},
		{"temperature", []string{"redteam", "tournament", "--attacker", "builtin:template-attacker", "--defender", "builtin:balanced", "-T", "3"}, "-T/--temperature 3"},
		{"unknown policy", []string{"redteam", "tournament", "--attacker", "builtin:nope", "--defender", "builtin:balanced", "--out", t.TempDir()}, `no built-in policy "nope"`},
		{"judge not served", []string{"redteam", "tournament", "--attacker", "builtin:template-attacker", "--defender", "builtin:balanced", "--judge-model", "builtin:balanced"}, "must be a served model"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, ExitUsage, tc.want)
			}
		})
	}
}

func TestEvalKeepUnsafe(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "raw.jsonl")
	var out, errb bytes.Buffer
	root := newRootCmd(&out, &errb)
	root.SetArgs([]string{"eval", "--env", "e6", "-m", "builtin:helpful-all", "--keep-unsafe", keep, "--out", dir, "--progress", "none"})
	if err := root.Execute(); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	// One kept reply per harmful row: helpful-all complies on every one.
	harmful, err := redteam.NewAttack(env.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := harmful.Load(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(keep)
	if err != nil || bytes.Count(raw, []byte("\n")) != len(ds.Examples) || !bytes.Contains(raw, []byte("Sure, here is how")) {
		t.Fatalf("kept file (want %d lines): %v %.400q", len(ds.Examples), err, raw)
	}
	res, _ := filepath.Glob(filepath.Join(dir, "evals", "*", "*", artifact.ResultsFile))
	b, _ := os.ReadFile(res[0])
	meta, _ := os.ReadFile(filepath.Join(filepath.Dir(res[0]), artifact.MetadataFile))
	if !bytes.Contains(b, []byte(redteam.RedactedPrefix)) || !bytes.Contains(meta, []byte(`"keep_unsafe"`)) {
		t.Errorf("results not redacted or the parameter not recorded")
	}
}
