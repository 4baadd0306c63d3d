package codevuln

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/svbench/svbench/base/clip"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/codevuln/taskset"
	"github.com/svbench/svbench/envs/codevuln/taskset/cweval"
	"github.com/svbench/svbench/verify/sandbox"
)

type cwevalOptions struct {
	Concurrency int
	TestTimeout time.Duration
	// Verifier, when set, is used instead of one made for the import
	// (tests share theirs).
	Verifier *Verifier
}

// cwevalReport is import.json: what was read, checked, kept and skipped.
type cwevalReport struct {
	Checkout string            `json:"checkout"`
	Commit   string            `json:"commit,omitempty"`
	Seconds  float64           `json:"seconds"`
	Kept     int               `json:"kept"`
	Checks   []ImportCheck     `json:"checks"`
	Skipped  []cweval.Skip     `json:"skipped"`
	ByCWE    map[string]int    `json:"kept_by_cwe"`
	ByLang   map[string]int    `json:"kept_by_language"`
	Versions map[string]string `json:"verifiers"`
}

// importCWEval imports a CWEval checkout's Python, C and C++ tasks, checks each one in
// the sandbox and writes those that pass, with import.json and IMPORT.md
// saying what happened to every task and file.
func importCWEval(ctx context.Context, checkout, out string, opt cwevalOptions, w env.DataIO) error {
	start := time.Now()
	res, err := cweval.Import(os.DirFS(checkout))
	if err != nil {
		return err
	}
	if len(res.Tasks) == 0 {
		return fmt.Errorf("cweval: %s: no Python, C or C++ task could be imported (%d skipped)", checkout, len(res.Skipped))
	}
	v := opt.Verifier
	if v == nil {
		sb, err := sandbox.New(ctx, sandbox.Options{})
		if err != nil {
			return fmt.Errorf("importing CWEval runs its tests and needs E3's sandbox: %w", err)
		}
		if v, err = NewVerifier(ctx, sb, "", opt.TestTimeout); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	checks := make([]ImportCheck, len(res.Tasks))
	sem := make(chan struct{}, max(1, opt.Concurrency))
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	for i := range res.Tasks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			checks[i] = v.CheckImported(ctx, &res.Tasks[i])
			mu.Lock()
			done++
			status := "ok"
			if !checks[i].Kept() {
				status = checks[i].Problem
			}
			fmt.Fprintf(w.Err, "[%d/%d] %s: %s\n", done, len(res.Tasks), res.Tasks[i].ID, status)
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	rep := cwevalReport{Checkout: checkout, Commit: gitHead(checkout), Checks: checks, Skipped: res.Skipped,
		ByCWE: map[string]int{}, ByLang: map[string]int{}, Versions: v.Versions()}
	for i, c := range checks {
		if !c.Kept() {
			continue
		}
		if err := taskset.Write(out, res.Tasks[i]); err != nil {
			return err
		}
		rep.Kept++
		rep.ByCWE[res.Tasks[i].CWE]++
		rep.ByLang[res.Tasks[i].Language]++
	}
	rep.Seconds = time.Since(start).Seconds()
	if err := writeCWEvalReport(out, rep); err != nil {
		return err
	}
	fmt.Fprintf(w.Out, "wrote %d of %d CWEval tasks under %s (%s; %s) in %.0f s; %d failed the check, %d files skipped; see %s\n",
		rep.Kept, len(checks), out, countsLine(rep.ByLang), countsLine(rep.ByCWE), rep.Seconds, len(checks)-rep.Kept, len(res.Skipped),
		filepath.Join(out, "IMPORT.md"))
	return nil
}

// gitHead reads the checkout's commit without running git: HEAD, then the
// ref it names, loose or packed.
func gitHead(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, ".git", "HEAD"))
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(b))
	ref, ok := strings.CutPrefix(head, "ref: ")
	if !ok {
		return head
	}
	if b, err := os.ReadFile(filepath.Join(dir, ".git", filepath.FromSlash(ref))); err == nil {
		return strings.TrimSpace(string(b))
	}
	packed, _ := os.ReadFile(filepath.Join(dir, ".git", "packed-refs"))
	for _, l := range strings.Split(string(packed), "\n") {
		if sha, name, ok := strings.Cut(l, " "); ok && name == ref {
			return sha
		}
	}
	return ""
}

func writeCWEvalReport(out string, rep cwevalReport) error {
	j, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "import.json"), append(j, '\n'), 0o644); err != nil {
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# CWEval import\n\nCheckout: `%s`", rep.Checkout)
	if rep.Commit != "" {
		fmt.Fprintf(&b, " at commit `%s`", rep.Commit)
	}
	fmt.Fprintf(&b, ". %d of %d tasks kept (%.0f s).\n\n", rep.Kept, len(rep.Checks), rep.Seconds)
	if len(rep.ByLang) > 0 {
		fmt.Fprintf(&b, "Kept by language: %s. Kept by CWE: %s.\n\n", countsLine(rep.ByLang), countsLine(rep.ByCWE))
	}
	b.WriteString("A task is kept when its reference fix passes both suites and its unsafe code fails the security suite.\n\n")
	b.WriteString("| task | source | functionality tests | security tests | reference | unsafe: functionality | unsafe: security passed | kept |\n|---|---|---|---|---|---|---|---|\n")
	for _, c := range rep.Checks {
		ref := "passes"
		if !c.ReferenceVisible || !c.ReferenceHidden {
			ref = "**fails**"
		}
		kept := "yes"
		if !c.Kept() {
			kept = "no: " + c.Problem
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %s | %s | %.0f%% | %s |\n", c.ID, c.Source, c.Visible, c.Hidden, ref,
			passFail(c.OriginalVisible), 100*c.OriginalSecurity, kept)
	}
	for _, c := range rep.Checks {
		if c.ReferenceOutput != "" {
			fmt.Fprintf(&b, "\n## %s: the reference's test output\n\n```\n%s\n```\n", c.ID, clip.Suffix(strings.TrimSpace(c.ReferenceOutput), 3000))
		}
	}
	if len(rep.Skipped) > 0 {
		reasons := map[string][]string{}
		for _, s := range rep.Skipped {
			reasons[s.Reason] = append(reasons[s.Reason], s.Name)
		}
		fmt.Fprintf(&b, "\n## Skipped (%d)\n\n", len(rep.Skipped))
		for _, r := range slices.Sorted(maps.Keys(reasons)) {
			fmt.Fprintf(&b, "- %s: %d (%s)\n", r, len(reasons[r]), clip.Prefix(strings.Join(reasons[r], ", "), 400))
		}
	}
	return os.WriteFile(filepath.Join(out, "IMPORT.md"), []byte(b.String()), 0o644)
}

func passFail(ok bool) string {
	if ok {
		return "passes"
	}
	return "fails"
}
