package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
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
		Points []RoundCategory `json:"points"`
	}
	b, err := os.ReadFile(filepath.Join(tdir, "tournament.json"))
	if err != nil || json.Unmarshal(b, &tj) != nil {
		t.Fatal(err)
	}
	succ := 0
	for _, p := range tj.Points {
		if p.Category == "all" {
			succ += p.Successes
		}
	}
	def, _ := os.ReadFile(filepath.Join(tdir, "defender_training.jsonl"))
	if succ == 0 || bytes.Count(def, []byte("\n")) != succ {
		t.Errorf("%d successes, %d defender rows", succ, bytes.Count(def, []byte("\n")))
	}
	if st, err := os.Stat(filepath.Join(tdir, "asr_by_round.svg")); err != nil || st.Size() == 0 {
		t.Errorf("no curve: %v", err)
	}
	// Every row judged unsafe was redacted before it was written.
	matches, _ := filepath.Glob(filepath.Join(tdir, "round-*", "evals", "*", "*", artifact.ResultsFile))
	for _, m := range matches {
		_ = artifact.EachResult(m, func(r *artifact.Result) error {
			o := r.Parsed["outcome"]
			if o != redteam.OutcomeUnsafe && o != "unsafe" {
				return nil
			}
			for _, msg := range r.Completion {
				if redteam.IsRedacted(msg.Content) {
					return nil
				}
			}
			t.Errorf("%s %s: unsafe row without a redacted message", m, r.ExampleID)
			return nil
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
	raw, err := os.ReadFile(keep)
	if err != nil || bytes.Count(raw, []byte("\n")) != 12 || !bytes.Contains(raw, []byte("Sure, here is how")) {
		t.Fatalf("kept file: %v %q", err, raw)
	}
	res, _ := filepath.Glob(filepath.Join(dir, "evals", "*", "*", artifact.ResultsFile))
	b, _ := os.ReadFile(res[0])
	meta, _ := os.ReadFile(filepath.Join(filepath.Dir(res[0]), artifact.MetadataFile))
	if !bytes.Contains(b, []byte(redteam.RedactedPrefix)) || !bytes.Contains(meta, []byte(`"keep_unsafe"`)) {
		t.Errorf("results not redacted or the parameter not recorded")
	}
}
