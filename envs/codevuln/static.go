package codevuln

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
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
	return v.analyseMany(ctx, lang, []Files{files})[0]
}

func staticKey(lang string, files Files) string { return "static\x00" + lang + "\x00" + files.Hash() }

// analyseMany is Analyse for several trees of one language (a task's
// original, its reference fix and a candidate). The Python analysers start
// once for every tree not already memoised: their start-up (importing
// bandit) costs more than analysing a task's files.
func (v *Verifier) analyseMany(ctx context.Context, lang string, trees []Files) []StaticResult {
	keys := make([]string, len(trees))
	var todo []Files
	var todoKeys []string
	v.mu.Lock()
	for i, f := range trees {
		keys[i] = staticKey(lang, f)
		if _, ok := v.memo[keys[i]]; !ok && !slices.Contains(todoKeys, keys[i]) {
			todo = append(todo, f)
			todoKeys = append(todoKeys, keys[i])
		}
	}
	v.mu.Unlock()
	batch := sync.OnceValue(func() map[string]StaticResult {
		out := map[string]StaticResult{}
		if lang != taskset.Python || len(todo) < 2 {
			return out
		}
		for i, r := range v.analysePython(ctx, todo) {
			out[todoKeys[i]] = r
		}
		return out
	})
	res := make([]StaticResult, len(trees))
	for i, f := range trees {
		res[i] = v.memoize(ctx, keys[i], func() any {
			// A tree missing from the batch was computed elsewhere when
			// this call looked, and has been dropped from the memo since.
			if r, ok := batch()[keys[i]]; ok {
				return r
			}
			return v.analyse(ctx, lang, f)
		}).(StaticResult)
	}
	return res
}

func (v *Verifier) analyse(ctx context.Context, lang string, files Files) StaticResult {
	if lang == taskset.Python {
		return v.analysePython(ctx, []Files{files})[0]
	}
	var r StaticResult
	switch lang {
	case taskset.Go:
		for _, name := range slices.Sorted(maps.Keys(files)) {
			if strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
				r.Findings = append(r.Findings, AnalyseGo(name, files[name])...)
			}
		}
	case taskset.C, taskset.Cpp, taskset.JavaScript:
		// No analyser: the tests are the verdict (staticFixed falls back
		// to the security suite when there is no target finding).
	default:
		r.Err = "unknown language " + lang
	}
	sortFindings(r.Findings)
	return r
}

func sortFindings(fs []Finding) {
	sort.SliceStable(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Key() < b.Key()
	})
}

// pyTreeResult is pystatic.py's answer for one tree.
type pyTreeResult struct {
	Svbench    []Finding `json:"svbench"`
	SvbenchErr string    `json:"svbench_error"`
	Bandit     []Finding `json:"bandit"`
	BanditErr  string    `json:"bandit_error"`
}

// analysePython runs svbench's Python checks and bandit over trees in one
// sandboxed process. Neither imports nor runs the analysed code. When that
// process fails as a whole (killed for time or memory, or no readable
// answer), a batch is retried one tree at a time, so a hostile candidate
// cannot spoil the analyses of the original and the fix it was batched with.
func (v *Verifier) analysePython(ctx context.Context, trees []Files) []StaticResult {
	out := make([]StaticResult, len(trees))
	if v.py == nil {
		for i := range out {
			out[i].Err = v.pyErr.Error()
		}
		return out
	}
	type tree struct {
		Dir   string            `json:"dir"`
		Files map[string]string `json:"files"`
	}
	req := struct {
		Trees  []tree `json:"trees"`
		Bandit bool   `json:"bandit"`
	}{Bandit: v.py.Bandit != ""}
	dir, cleanup, err := v.sb.NewScratch()
	if err != nil {
		for i := range out {
			out[i].Err = err.Error()
		}
		return out
	}
	defer cleanup()
	var idx []int // out's index of each tree sent
	for i, files := range trees {
		py := map[string][]byte{}
		src := map[string]string{}
		for name, b := range files {
			if strings.HasSuffix(name, ".py") {
				py[name], src[name] = b, string(b)
			}
		}
		if len(py) == 0 {
			continue
		}
		sub := fmt.Sprintf("t%d", i)
		if err := writeTree(filepath.Join(dir, sub), py); err != nil {
			out[i].Err = err.Error()
			continue
		}
		idx = append(idx, i)
		req.Trees = append(req.Trees, tree{Dir: path.Join(sandbox.ScratchMount, sub), Files: src})
	}
	if len(idx) == 0 {
		return out
	}
	in, _ := json.Marshal(req)
	env := []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/tmp", "TMPDIR=/tmp", "PYTHONDONTWRITEBYTECODE=1"}
	lim := sandbox.Limits{CPU: 30 * time.Second, Wall: 40 * time.Second, AddressSpace: 1 << 30, Procs: 32, Output: v.staticOutput}
	res, err := v.sb.Run(ctx, sandbox.Spec{Argv: []string{v.py.Exe, "-I", "-B", "-c", pyStaticScript}, Dir: dir, Env: env,
		Stdin: in, Limits: lim, ReadOnlyBinds: v.py.Binds()})
	var got []pyTreeResult
	if err == nil && res.OK() {
		if jerr := json.Unmarshal(res.Stdout, &got); jerr != nil {
			err = jerr
		} else if len(got) != len(idx) {
			err = fmt.Errorf("%d results for %d trees", len(got), len(idx))
		}
	}
	if err != nil || !res.OK() || len(got) != len(idx) {
		if len(idx) > 1 && ctx.Err() == nil {
			for i, f := range trees {
				out[i] = v.analysePython(ctx, []Files{f})[0]
			}
			return out
		}
		for _, i := range idx {
			out[i].Err = fmt.Sprintf("python static analysis failed: %v %s %s", err, res.Killed, textclip.Bytes(string(res.Stderr), 300, textclip.Ellipsis))
		}
		return out
	}
	for k, g := range got {
		i := idx[k]
		for _, e := range []string{g.SvbenchErr, g.BanditErr} {
			if e != "" && out[i].Err == "" {
				out[i].Err = e
			}
		}
		for _, f := range g.Bandit {
			f.Tool, f.CWE = "bandit", banditCWE[f.RuleID]
			out[i].Findings = append(out[i].Findings, f)
		}
		for _, f := range g.Svbench {
			f.Tool = "svbench-py"
			out[i].Findings = append(out[i].Findings, f)
		}
		sortFindings(out[i].Findings)
	}
	return out
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
