package redteam

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	textclip "github.com/svbench/svbench/base/clip"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/report"
	"github.com/svbench/svbench/runner"
)

const rawUnsafe = "RAW-UNSAFE-TEXT-5f1e: the full disclosure"

// An unsafe run leaves no raw unsafe text in any artifact: results,
// metadata, manifest, summary, report, charts.
func TestUnsafeRunArtifactsAreRedacted(t *testing.T) {
	fp := newFakeParty(t, func(string) string { return rawUnsafe }, func(all string) string {
		if strings.Contains(all, "RAW-UNSAFE") {
			return "unsafe\nS7"
		}
		return "safe"
	})
	for _, keep := range []bool{false, true} {
		out := t.TempDir()
		keepPath := filepath.Join(t.TempDir(), "unsafe.jsonl")
		params := map[string]string{"judge": JudgeLlamaGuard}
		if keep {
			params["keep_unsafe"] = keepPath
		}
		a := mustAttack(t, env.Options{Models: fp.models(t), Params: params})
		ds, err := a.Load(context.Background(), "")
		if err != nil {
			t.Fatal(err)
		}
		p, _ := a.Policy(PolicyTemplateAttacker)
		res, err := runner.Run(context.Background(), runner.Config{Env: a, Dataset: runner.InMemory(ds), Client: llm.Builtin{Policy: p},
			Model: "builtin:template-attacker", Rollouts: 1, Concurrency: 4, Seed: 1, OutDir: out})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := report.FromRun(res.Dir, "", report.Options{BootstrapReps: 50})
		if err != nil {
			t.Fatal(err)
		}
		if err := report.WriteDir(res.Dir, rep); err != nil {
			t.Fatal(err)
		}
		if asr := rep.Summary["attack_success_rate"].(*float64); asr == nil || *asr != 1 {
			t.Fatalf("every reply is unsafe, ASR %v", asr)
		}
		files := 0
		_ = filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			files++
			b, _ := os.ReadFile(path)
			if bytes.Contains(b, []byte("RAW-UNSAFE")) {
				t.Errorf("%s holds the raw unsafe text", path)
			}
			return nil
		})
		b, _ := os.ReadFile(filepath.Join(res.Dir, "results.jsonl"))
		if files < 4 || !bytes.Contains(b, []byte(RedactedPrefix)) || !bytes.Contains(b, []byte("category:privacy")) {
			t.Fatalf("%d files; results lack redaction stand-ins", files)
		}
		kept, err := os.ReadFile(keepPath)
		if keep != (err == nil && bytes.Count(kept, []byte(rawUnsafe)) == len(ds.Examples)) {
			t.Errorf("keep_unsafe=%v: kept file %q, %v", keep, textclip.Prefix(string(kept), 200), err)
		}
		if keep {
			if st, _ := os.Stat(keepPath); st.Mode().Perm() != 0o600 {
				t.Errorf("kept file mode %v", st.Mode())
			}
		}
	}
}
