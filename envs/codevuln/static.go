package codevuln

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/svbench/svbench/envs/codevuln/taskset"
	"github.com/svbench/svbench/verify/sandbox"

	textclip "github.com/svbench/svbench/base/clip"
)

// Versions of svbench's own analysers; bump when a rule changes.
const (
	GoStaticVersion = "svbench-gostatic/1"
	PyStaticVersion = "svbench-pystatic/1"
)

// Finding is one static-analysis result.
type Finding struct {
	Tool     string `json:"tool"`
	RuleID   string `json:"rule_id"`
	CWE      string `json:"cwe,omitempty"`
	Severity string `json:"severity"` // low | medium | high
	File     string `json:"file"`
	Line     int    `json:"line"`
	Message  string `json:"message"`
}

// Key is the tool-qualified rule id.
func (f Finding) Key() string { return f.Tool + "/" + f.RuleID }

// StaticResult is the analysis of one source tree.
type StaticResult struct {
	Findings []Finding `json:"findings"`
	// Err says why an analyser could not run (the findings are then
	// incomplete and the static components are not trusted).
	Err string `json:"error,omitempty"`
}

//go:embed pystatic.py
var pyStaticScript string

// banditCWE maps bandit test ids to CWEs: bandit 1.6 (Debian bookworm) does
// not report CWEs itself.
var banditCWE = map[string]string{
	"B101": "CWE-703", "B102": "CWE-94", "B103": "CWE-732", "B104": "CWE-605", "B105": "CWE-798", "B106": "CWE-798",
	"B107": "CWE-798", "B108": "CWE-377", "B110": "CWE-703", "B112": "CWE-703", "B201": "CWE-94", "B301": "CWE-502",
	"B302": "CWE-502", "B303": "CWE-327", "B304": "CWE-327", "B305": "CWE-327", "B306": "CWE-377", "B307": "CWE-94",
	"B308": "CWE-79", "B310": "CWE-22", "B311": "CWE-330", "B312": "CWE-319", "B313": "CWE-611", "B314": "CWE-611",
	"B315": "CWE-611", "B316": "CWE-611", "B317": "CWE-611", "B318": "CWE-611", "B319": "CWE-611", "B320": "CWE-611",
	"B321": "CWE-319", "B322": "CWE-78", "B323": "CWE-295", "B324": "CWE-327", "B401": "CWE-319", "B402": "CWE-319",
	"B403": "CWE-502", "B404": "CWE-78", "B405": "CWE-611", "B406": "CWE-611", "B407": "CWE-611", "B408": "CWE-611",
	"B409": "CWE-611", "B410": "CWE-611", "B411": "CWE-611", "B412": "CWE-319", "B413": "CWE-327", "B501": "CWE-295",
	"B502": "CWE-327", "B503": "CWE-327", "B504": "CWE-327", "B505": "CWE-326", "B506": "CWE-502", "B507": "CWE-295",
	"B601": "CWE-78", "B602": "CWE-78", "B603": "CWE-78", "B604": "CWE-78", "B605": "CWE-78", "B606": "CWE-78",
	"B607": "CWE-78", "B608": "CWE-89", "B609": "CWE-78", "B610": "CWE-89", "B611": "CWE-89", "B701": "CWE-79",
	"B702": "CWE-79", "B703": "CWE-79",
}

// cweFamily folds CWEs a rule cannot tell apart, so "the task's CWE" matches
// findings of its close relatives (a weak PRNG is both 330 and 338, …).
func cweFamily(c string) string {
	switch c {
	case "CWE-338", "CWE-330":
		return "CWE-330"
	case "CWE-191", "CWE-190":
		return "CWE-190"
	case "CWE-776", "CWE-611":
		return "CWE-611"
	case "CWE-94", "CWE-95":
		return "CWE-94"
	case "CWE-326", "CWE-327", "CWE-328":
		return "CWE-327"
	}
	return c
}

// Analyse runs the language's analysers on files (memoised by content).
func (v *Verifier) Analyse(ctx context.Context, lang string, files Files) StaticResult {
	key := "static\x00" + lang + "\x00" + files.Hash()
	return v.memoize(ctx, key, func() any { return v.analyse(ctx, lang, files) }).(StaticResult)
}

func (v *Verifier) analyse(ctx context.Context, lang string, files Files) StaticResult {
	var r StaticResult
	switch lang {
	case taskset.Go:
		for _, name := range slices.Sorted(maps.Keys(files)) {
			if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
				r.Findings = append(r.Findings, AnalyseGo(name, files[name])...)
			}
		}
	case taskset.Python:
		r = v.analysePython(ctx, files)
	default:
		r.Err = "unknown language " + lang
	}
	sort.SliceStable(r.Findings, func(i, j int) bool {
		a, b := r.Findings[i], r.Findings[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Key() < b.Key()
	})
	return r
}

func (v *Verifier) analysePython(ctx context.Context, files Files) StaticResult {
	var r StaticResult
	if v.py == nil {
		r.Err = v.pyErr.Error()
		return r
	}
	py := map[string]string{}
	for name, b := range files {
		if strings.HasSuffix(name, ".py") {
			py[name] = string(b)
		}
	}
	if len(py) == 0 {
		return r
	}
	// Each run gets its own scratch copy: under root every run executes as
	// its own uid and owns its directory.
	scratch := func() (string, func(), error) {
		dir, cleanup, err := v.sb.NewScratch()
		if err != nil {
			return "", nil, err
		}
		if err := writeTree(dir, files); err != nil {
			cleanup()
			return "", nil, err
		}
		return dir, cleanup, nil
	}
	env := []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/tmp", "TMPDIR=/tmp", "PYTHONDONTWRITEBYTECODE=1"}
	lim := sandbox.Limits{CPU: 30 * time.Second, Wall: 40 * time.Second, AddressSpace: 1 << 30, Procs: 32, Output: 4 << 20}
	in, _ := json.Marshal(py)
	type out struct {
		fs  []Finding
		err string
	}
	own := make(chan out, 1)
	runOwn := func() out {
		dir, cleanup, err := scratch()
		if err != nil {
			return out{err: err.Error()}
		}
		// Removed before the result is sent, so analysePython never
		// returns with a scratch directory still in place.
		defer cleanup()
		res, err := v.sb.Run(ctx, sandbox.Spec{Argv: []string{v.py.Exe, "-I", "-B", "-c", pyStaticScript}, Dir: dir, Env: env,
			Stdin: in, Limits: lim, ReadOnlyBinds: v.py.Binds()})
		if err != nil || !res.OK() {
			return out{err: fmt.Sprintf("svbench python checks failed: %v %s %s", err, res.Killed, clip(string(res.Stderr), 300))}
		}
		var fs []Finding
		if err := json.Unmarshal(res.Stdout, &fs); err != nil {
			return out{err: "svbench python checks: " + err.Error()}
		}
		for i := range fs {
			fs[i].Tool = "svbench-py"
		}
		return out{fs: fs}
	}
	go func() { own <- runOwn() }()
	if v.py.Bandit != "" {
		names := slices.Sorted(maps.Keys(py))
		// --ignore-nosec: a verifier judges the file, not the file's
		// opinion of itself; "# nosec" added by a patch must not hide a
		// finding. -c /dev/null-like defaults: no config file is read.
		argv := append([]string{v.py.Exe, "-I", "-B", "-m", "bandit", "-f", "json", "-q", "--ignore-nosec", "--"}, names...)
		dir, cleanup, err := scratch()
		var res sandbox.Result
		if err == nil {
			res, err = v.sb.Run(ctx, sandbox.Spec{Argv: argv, Dir: dir, Env: env, Limits: lim, ReadOnlyBinds: v.py.Binds()})
			cleanup()
		}
		switch {
		case err != nil:
			r.Err = "bandit: " + err.Error()
		case res.Killed != "":
			r.Err = "bandit killed: " + res.Killed
		default:
			var rep struct {
				Results []struct {
					TestID   string `json:"test_id"`
					Severity string `json:"issue_severity"`
					Text     string `json:"issue_text"`
					Line     int    `json:"line_number"`
					File     string `json:"filename"`
				} `json:"results"`
			}
			if err := json.Unmarshal(res.Stdout, &rep); err != nil {
				r.Err = fmt.Sprintf("bandit output unreadable (exit %d): %v %s", res.ExitCode, err, clip(string(res.Stderr), 300))
				break
			}
			for _, x := range rep.Results {
				r.Findings = append(r.Findings, Finding{Tool: "bandit", RuleID: x.TestID, CWE: banditCWE[x.TestID],
					Severity: strings.ToLower(x.Severity), File: strings.TrimPrefix(x.File, "./"), Line: x.Line, Message: x.Text})
			}
		}
	}
	o := <-own
	if o.err != "" && r.Err == "" {
		r.Err = o.err
	}
	r.Findings = append(r.Findings, o.fs...)
	return r
}

func clip(s string, n int) string {
	return textclip.Bytes(s, n, textclip.Ellipsis)
}

// StaticDelta compares a candidate's findings with the original's and the
// reference fix's.
type StaticDelta struct {
	// Targets are rule keys that fire on the original for the task's CWE
	// and not on the reference fix: what a fix is expected to remove. No
	// targets means the analysers cannot tell this task's fix apart.
	Targets []string `json:"targets"`
	// Remaining lists targets still firing on the candidate.
	Remaining []string `json:"remaining"`
	// NewHigh lists high-severity rule keys firing more often on the
	// candidate than on both the original and the reference fix (an
	// analyser's false positive on the fix is not the model's fault).
	NewHigh  []string `json:"new_high"`
	Original int      `json:"original_findings"`
	Patched  int      `json:"patched_findings"`
}

func countByKey(fs []Finding, keep func(Finding) bool) map[string]int {
	m := map[string]int{}
	for _, f := range fs {
		if keep(f) {
			m[f.Key()]++
		}
	}
	return m
}

// Delta computes the static comparison for task cwe.
func Delta(cwe string, orig, fix, cand []Finding) StaticDelta {
	fam := cweFamily(cwe)
	isTask := func(f Finding) bool { return f.CWE != "" && cweFamily(f.CWE) == fam }
	o := countByKey(orig, isTask)
	fx := countByKey(fix, isTask)
	c := countByKey(cand, isTask)
	d := StaticDelta{Original: len(orig), Patched: len(cand)}
	for _, k := range slices.Sorted(maps.Keys(o)) {
		if o[k] > fx[k] {
			d.Targets = append(d.Targets, k)
			if c[k] > fx[k] {
				d.Remaining = append(d.Remaining, k)
			}
		}
	}
	high := func(f Finding) bool { return f.Severity == "high" || f.Severity == "critical" }
	oh, fh, ch := countByKey(orig, high), countByKey(fix, high), countByKey(cand, high)
	for _, k := range slices.Sorted(maps.Keys(ch)) {
		if ch[k] > max(oh[k], fh[k]) {
			d.NewHigh = append(d.NewHigh, k)
		}
	}
	return d
}
