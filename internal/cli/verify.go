package cli

import (
	"encoding/json"
	"fmt"
	"github.com/svbench/svbench/env"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/svbench/svbench/base/clip"
	"github.com/svbench/svbench/verify"
	"github.com/svbench/svbench/verify/suite"
)

// verifyResult is one lint context's output in `svbench verify --format json`.
type verifyResult struct {
	File     string           `json:"file"`
	Findings []verify.Finding `json:"findings"`
}

// maxVerifyFileBytes bounds what the CLI reads from disk per file; the
// verifiers apply their own (smaller) limits and say which one was hit.
const maxVerifyFileBytes = 64 << 20

func newVerifyCmd() *cobra.Command {
	var (
		tool, format, contextMode, checks string
		allChecks                         bool
		policyDirs                        []string
	)
	cmd := &cobra.Command{
		Use:   "verify [flags] PATH...",
		Short: "Run the in-process verifiers (kube-linter, trivy, OPA) on manifests and Terraform",
		Long: `Run svbench's verifiers on Kubernetes YAML (.yaml, .yml) and Terraform (.tf)
files or directories (walked recursively).

By default (--context auto) a directory argument is linted as one context, as
kube-linter lints a folder, so cross-object checks (a ServiceAccount defined in a
sibling file, a Service's selector) see every object; a file argument is linted
on its own, which is what an environment sees for that file. --context file or
dir forces one behaviour.

--checks picks kube-linter's checks: default runs kube-linter's own default set,
as the kube-linter CLI does without a config file; e2 adds the RBAC checks E2
scores with (` + strings.Join(suite.ScoringKubeChecks, ", ") + `), so a file
verify --checks e2 calls clean is one E2 pays as clean; all runs every built-in
check that needs no network (--all-checks is the same).

--policy DIR adds Rego policies: package svbench.kubernetes (input: one object)
or svbench.terraform (input: the converted configuration), rule
deny contains {"id", "severity", "msg"}.

Exit status: 0 when nothing is found, 1 when there are findings, 2 on usage
errors, 3 when verification itself failed (unreadable file, verifier error).`,
		Example: `  svbench verify deploy.yaml
  svbench verify --tool kube-linter --context dir --format table k8s/
  svbench verify --tool kube-linter --checks e2 rbac.yaml
  svbench verify --tool opa --policy ./policies infra/main.tf`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("verify: give at least one file or directory")
			}
			if !containsString(suite.Tools, tool) {
				return usagef("verify: --tool %q: want one of %s", tool, strings.Join(suite.Tools, ", "))
			}
			if format != "json" && format != "table" {
				return usagef("verify: --format %q: want json or table", format)
			}
			if contextMode != "file" && contextMode != "dir" && contextMode != "auto" {
				return usagef("verify: --context %q: want auto, file or dir", contextMode)
			}
			if allChecks {
				if cmd.Flags().Changed("checks") && checks != checksAll {
					return usagef("verify: --all-checks and --checks %s disagree; give one of them", checks)
				}
				checks = checksAll
			}
			groups, err := verifyContexts(args, contextMode)
			if err != nil {
				return checkFailed(err)
			}
			if err := toolApplies(tool, groups); err != nil {
				return err
			}
			// E2's configuration (suite.ScoringOptions), so verify and
			// the reward agree on a broken file; kube-linter's checks are
			// the tool's own defaults unless --checks names E2's set.
			opts := suite.ScoringOptions(policyDirs)
			switch checks {
			case checksDefault:
				opts.KubeLinter.Include = nil
			case checksE2:
			case checksAll:
				opts.KubeLinter.AllChecks = true
			default:
				return usagef("verify: --checks %q: want %s, %s or %s", checks, checksDefault, checksE2, checksAll)
			}
			s, err := suite.New(cmd.Context(), opts)
			if err != nil {
				return checkFailed(err)
			}
			var results []verifyResult
			total := 0
			for _, g := range groups {
				fs, err := s.Verify(cmd.Context(), tool, g.files)
				if err != nil {
					return checkFailed(fmt.Errorf("%s: %w", g.name, err))
				}
				if fs == nil {
					fs = []verify.Finding{}
				}
				total += len(fs)
				results = append(results, verifyResult{File: g.name, Findings: fs})
			}
			out := cmd.OutOrStdout()
			if format == "json" {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(results); err != nil {
					return err
				}
			} else if err := printFindingsTable(out, results); err != nil {
				return err
			}
			if total > 0 {
				return exitError{code: ExitFindings}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&tool, "tool", suite.ToolAll, "verifier to run: kube-linter, trivy, opa or all")
	f.StringVar(&format, "format", "json", "output format: json or table")
	f.StringVar(&contextMode, "context", "auto", "lint context: auto (directories together, files alone), file (each file alone) or dir (each directory together)")
	f.StringVar(&checks, "checks", checksDefault, "kube-linter checks: default (kube-linter's own defaults), e2 (the defaults plus E2's RBAC checks) or all (every offline built-in check)")
	f.BoolVar(&allChecks, "all-checks", false, "enable every offline kube-linter built-in check, not only the defaults (--checks all)")
	f.StringArrayVar(&policyDirs, "policy", nil, "directory of extra Rego policies (repeatable)")
	return cmd
}

// The kube-linter check sets --checks names.
const (
	checksDefault = "default"
	checksE2      = "e2"
	checksAll     = "all"
)

type lintGroup struct {
	name  string // the file, or the directory for --context dir
	files []verify.File
}

// verifyContexts groups the arguments by the --context mode.
func verifyContexts(args []string, mode string) ([]lintGroup, error) {
	if mode != "auto" {
		return collectContexts(args, mode == "dir")
	}
	var files, dirs []string
	for _, a := range args {
		if st, err := os.Stat(a); err == nil && st.IsDir() {
			dirs = append(dirs, a)
		} else {
			files = append(files, a)
		}
	}
	var groups []lintGroup
	for _, part := range []struct {
		args  []string
		byDir bool
	}{{files, false}, {dirs, true}} {
		if len(part.args) == 0 {
			continue
		}
		g, err := collectContexts(part.args, part.byDir)
		if err != nil {
			return nil, err
		}
		groups = append(groups, g...)
	}
	return groups, nil
}

// toolApplies refuses a tool none of the files is for (trivy on YAML),
// which would otherwise print an empty table and exit 0 as if clean.
func toolApplies(tool string, groups []lintGroup) error {
	want := map[string]suite.Kind{suite.ToolKubeLinter: suite.KindKubernetes, suite.ToolTrivy: suite.KindTerraform}
	k, ok := want[tool]
	if !ok {
		return nil
	}
	for _, g := range groups {
		for _, f := range g.files {
			if suite.KindOf(f.Path) == k {
				return nil
			}
		}
	}
	what := map[suite.Kind]string{suite.KindKubernetes: "Kubernetes YAML (.yaml, .yml)", suite.KindTerraform: "Terraform (.tf)"}[k]
	return usagef("verify: --tool %s checks %s files and none of the given files is one; use --tool opa or all, or give %s files", tool, what, what)
}

// checkFailed marks a failure of verification itself (exit 3), distinct
// from findings (exit 1); usage errors keep exit 2.
func checkFailed(err error) error {
	if env.IsUsage(err) {
		return err
	}
	return codedError{err: err, code: ExitCheckFailed}
}

// collectContexts reads the named files and walks the directories for YAML
// and Terraform files. A file named explicitly must have one of those
// extensions: an unknown type is a usage error, so a typo does not pass as
// "no findings".
func collectContexts(args []string, byDir bool) ([]lintGroup, error) {
	var paths []string
	seen := map[string]bool{}
	for _, a := range args {
		info, err := os.Stat(a)
		if err != nil {
			return nil, usagef("verify: %v", err)
		}
		if !info.IsDir() {
			if suite.KindOf(a) == suite.KindUnknown {
				return nil, usagef("verify: %s: not a .yaml, .yml or .tf file", a)
			}
			if !seen[a] {
				seen[a] = true
				paths = append(paths, a)
			}
			continue
		}
		err = filepath.WalkDir(a, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if name := d.Name(); p != a && (strings.HasPrefix(name, ".") || name == "node_modules") {
					return filepath.SkipDir
				}
				return nil
			}
			if suite.KindOf(p) != suite.KindUnknown && !seen[p] {
				seen[p] = true
				paths = append(paths, p)
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("verify: walking %s: %w", a, err)
		}
	}
	if len(paths) == 0 {
		return nil, usagef("verify: no .yaml, .yml or .tf files under %s", strings.Join(args, ", "))
	}
	groups := map[string]*lintGroup{}
	var order []string
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			return nil, err
		}
		if info.Size() > maxVerifyFileBytes {
			return nil, fmt.Errorf("verify: %s: %d bytes is too large to verify", p, info.Size())
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("verify: %w", err)
		}
		key := p
		if byDir {
			key = filepath.Dir(p)
		}
		g, ok := groups[key]
		if !ok {
			g = &lintGroup{name: key}
			groups[key] = g
			order = append(order, key)
		}
		g.files = append(g.files, verify.File{Path: p, Content: b})
	}
	slices.Sort(order)
	out := make([]lintGroup, 0, len(order))
	for _, k := range order {
		out = append(out, *groups[k])
	}
	return out, nil
}

func printFindingsTable(w interface{ Write([]byte) (int, error) }, results []verifyResult) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tLINE\tSEVERITY\tID\tOBJECT\tMESSAGE")
	for _, r := range results {
		for _, f := range r.Findings {
			obj := f.Resource
			if f.Object.Kind != "" {
				obj = f.Object.Kind + "/" + f.Object.Name
			}
			msg := clip.Within(strings.ReplaceAll(f.Message, "\n", " "), 120, "...")
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", f.File, f.Line, f.Severity, f.ID(), obj, msg)
		}
	}
	return tw.Flush()
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
