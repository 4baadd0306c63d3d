// Package cvefixes imports CVEfixes-style before/after file pairs (the
// CVEfixes dataset's file_change table joined with its CWE classification,
// exported as CSV or JSONL) as static-only E3 tasks. Such pairs come without
// tests, so the tasks are flagged mode "static-only" and must be scored and
// reported apart from tested tasks.
//
// Columns (CSV header or JSONL keys; names are case-insensitive):
// code_before, code_after, programming_language, cve_id, cwe_id, filename
// are required; severity (or cvss3_base_severity), hash and file_change_id
// are used when present; other columns are ignored.
package cvefixes

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"regexp"
	"strings"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/envs/codevuln/taskset"
)

// Options bound and filter an import. Zero values mean the defaults.
type Options struct {
	// Languages to keep (taskset.Python, taskset.Go); default both.
	Languages []string
	// MaxFileBytes bounds code_before and code_after each (default 64 KiB).
	MaxFileBytes int
	// MaxRecordBytes bounds one JSONL line or CSV record (default 1 MiB).
	MaxRecordBytes int
	// MaxTasks stops the import after this many tasks (default 10000).
	MaxTasks int
}

func (o Options) withDefaults() Options {
	if len(o.Languages) == 0 {
		o.Languages = []string{taskset.Python, taskset.Go}
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 64 << 10
	}
	if o.MaxRecordBytes <= 0 {
		o.MaxRecordBytes = 1 << 20
	}
	if o.MaxTasks <= 0 {
		o.MaxTasks = 10000
	}
	return o
}

// Skip records a row that was read but not imported, and why.
type Skip struct {
	Line   int
	Reason string
}

// Result of an import.
type Result struct {
	Tasks   []taskset.Task
	Skipped []Skip
}

// Required columns.
var required = []string{"code_before", "code_after", "programming_language", "cve_id", "cwe_id", "filename"}

// ImportFile imports path; the format follows the extension (.csv, .jsonl or
// .json) and otherwise the first non-blank byte ('{' means JSONL).
func ImportFile(path string, opt Options) (Result, error) {
	f, err := os.Open(path)
	if err != nil {
		return Result{}, fmt.Errorf("cvefixes: %w", err)
	}
	defer f.Close()
	format := ""
	switch {
	case strings.HasSuffix(strings.ToLower(path), ".csv"):
		format = "csv"
	case strings.HasSuffix(strings.ToLower(path), ".jsonl"), strings.HasSuffix(strings.ToLower(path), ".json"):
		format = "jsonl"
	}
	res, err := Read(f, format, opt)
	if err != nil {
		return res, fmt.Errorf("%s: %w", path, err)
	}
	return res, nil
}

// Read imports from r. format is "csv", "jsonl" or "" to detect it.
// Malformed input is an error naming the line and column; well-formed rows
// that cannot become tasks (other languages, no specific CWE, oversized code,
// no change) are listed in Result.Skipped.
func Read(r io.Reader, format string, opt Options) (Result, error) {
	opt = opt.withDefaults()
	br := bufio.NewReaderSize(r, 64<<10)
	if format == "" {
		peek, _ := br.Peek(512)
		if t := bytes.TrimLeft(dataset.TrimBOM(peek), " \t\r\n"); len(t) > 0 && t[0] == '{' {
			format = "jsonl"
		} else {
			format = "csv"
		}
	}
	imp := &importer{opt: opt, ids: map[string]int{}}
	var err error
	switch format {
	case "csv":
		err = imp.readCSV(br)
	case "jsonl":
		err = imp.readJSONL(br)
	default:
		return Result{}, fmt.Errorf("cvefixes: unknown format %q (want csv or jsonl)", format)
	}
	return imp.res, err
}

type importer struct {
	opt Options
	res Result
	ids map[string]int
}

var errEnough = errors.New("enough tasks")

func (imp *importer) readJSONL(br *bufio.Reader) error {
	for line := 1; ; line++ {
		raw, long, err := dataset.ReadLine(br, imp.opt.MaxRecordBytes)
		if long {
			imp.skip(line, fmt.Sprintf("record longer than %d bytes", imp.opt.MaxRecordBytes))
		} else if body := bytes.TrimSpace(dataset.TrimBOM(raw)); len(body) > 0 {
			rec, perr := parseJSONRecord(body)
			if perr != nil {
				return fmt.Errorf("cvefixes: line %d, %w", line, perr)
			}
			if aerr := imp.add(line, rec); errors.Is(aerr, errEnough) {
				return nil
			} else if aerr != nil {
				return aerr
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cvefixes: line %d: %w", line, err)
		}
	}
}

// parseJSONRecord decodes one JSONL object; string fields only matter, other
// values are ignored, null counts as empty. Errors carry the column.
func parseJSONRecord(body []byte) (map[string]string, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(body, &obj); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("column %d: invalid JSON: %v", se.Offset, err)
		}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fmt.Errorf("column %d: want a JSON object per line", te.Offset)
		}
		return nil, fmt.Errorf("column 1: %v", err)
	}
	rec := map[string]string{}
	for k, v := range obj {
		key := strings.ToLower(strings.TrimSpace(k))
		var s string
		switch {
		case string(v) == "null":
			rec[key] = ""
		case json.Unmarshal(v, &s) == nil:
			rec[key] = s
		default:
			// Numbers and other scalars (e.g. file_change_id) as their text.
			rec[key] = strings.Trim(string(v), `"`)
		}
	}
	return rec, nil
}

func (imp *importer) readCSV(br *bufio.Reader) error {
	// Drop a BOM so the first header name matches.
	if b, err := br.Peek(3); err == nil && bytes.Equal(b, []byte("\xef\xbb\xbf")) {
		br.Discard(3)
	}
	cr := csv.NewReader(br)
	cr.ReuseRecord = false
	header, err := cr.Read()
	if err != nil {
		return fmt.Errorf("cvefixes: header: %w", csvErr(err))
	}
	cols := map[string]int{}
	for i, h := range header {
		cols[strings.ToLower(strings.TrimSpace(h))] = i
	}
	var missing []string
	for _, r := range required {
		if _, ok := cols[r]; !ok {
			missing = append(missing, r)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("cvefixes: line 1: CSV header lacks column(s) %s (have %s)", strings.Join(missing, ", "), strings.Join(header, ", "))
	}
	prevOffset := cr.InputOffset()
	for {
		fields, err := cr.Read()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("cvefixes: %w", csvErr(err))
		}
		line, _ := cr.FieldPos(0)
		size := cr.InputOffset() - prevOffset
		prevOffset = cr.InputOffset()
		if size > int64(imp.opt.MaxRecordBytes) {
			imp.skip(line, fmt.Sprintf("record longer than %d bytes", imp.opt.MaxRecordBytes))
			continue
		}
		rec := map[string]string{}
		for name, i := range cols {
			if i < len(fields) {
				rec[name] = fields[i]
			}
		}
		if aerr := imp.add(line, rec); errors.Is(aerr, errEnough) {
			return nil
		} else if aerr != nil {
			return aerr
		}
	}
}

func csvErr(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return fmt.Errorf("line %d, column %d: %v", pe.Line, pe.Column, pe.Err)
	}
	return err
}

func (imp *importer) skip(line int, reason string) {
	imp.res.Skipped = append(imp.res.Skipped, Skip{Line: line, Reason: reason})
}

var (
	cveRe     = regexp.MustCompile(`^CVE-[0-9]{4}-[0-9]{4,7}$`)
	cweNumRe  = regexp.MustCompile(`^(?:CWE-)?([1-9][0-9]{0,4})$`)
	pyDefRe   = regexp.MustCompile(`(?m)^[ \t]*(?:async[ \t]+)?def[ \t]+([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(([^)]*)\)`)
	goFuncRe  = regexp.MustCompile(`(?m)^func[ \t]+(\([^)]*\)[ \t]*)?([A-Za-z_][A-Za-z0-9_]*)[ \t]*\(([^)]*)\)`)
	goPkgRe   = regexp.MustCompile(`(?m)^package[ \t]+[A-Za-z_][A-Za-z0-9_]*`)
	langNames = map[string]string{"python": taskset.Python, "py": taskset.Python, "go": taskset.Go, "golang": taskset.Go}
)

// add turns one record into a task or a skip; it returns an error only for
// problems that make the whole import invalid.
func (imp *importer) add(line int, rec map[string]string) error {
	for _, r := range required {
		if _, ok := rec[r]; !ok {
			return fmt.Errorf("cvefixes: line %d: record lacks field %q", line, r)
		}
	}
	lang := langNames[strings.ToLower(strings.TrimSpace(rec["programming_language"]))]
	filename := strings.TrimSpace(rec["filename"])
	if lang == "" {
		switch path.Ext(filename) {
		case ".py":
			if rec["programming_language"] == "" {
				lang = taskset.Python
			}
		case ".go":
			if rec["programming_language"] == "" {
				lang = taskset.Go
			}
		}
	}
	keep := false
	for _, l := range imp.opt.Languages {
		keep = keep || l == lang
	}
	if !keep {
		imp.skip(line, fmt.Sprintf("language %q not imported", rec["programming_language"]))
		return nil
	}
	ext := map[string]string{taskset.Python: ".py", taskset.Go: ".go"}[lang]
	if path.Ext(filename) != ext || strings.HasSuffix(filename, "_test.go") {
		imp.skip(line, fmt.Sprintf("filename %q is not a %s source file", filename, lang))
		return nil
	}
	name := path.Base(strings.ReplaceAll(filename, "\\", "/"))
	if !safeName(name) {
		imp.skip(line, fmt.Sprintf("filename %q has characters outside [A-Za-z0-9._-]", filename))
		return nil
	}
	cve := strings.ToUpper(strings.TrimSpace(rec["cve_id"]))
	if !cveRe.MatchString(cve) {
		imp.skip(line, fmt.Sprintf("cve_id %q is not a CVE id", rec["cve_id"]))
		return nil
	}
	m := cweNumRe.FindStringSubmatch(strings.ToUpper(strings.TrimSpace(rec["cwe_id"])))
	if m == nil {
		imp.skip(line, fmt.Sprintf("cwe_id %q names no specific CWE", rec["cwe_id"]))
		return nil
	}
	cwe := "CWE-" + m[1]
	before, after := normalise(rec["code_before"]), normalise(rec["code_after"])
	switch {
	case before == "" || after == "":
		imp.skip(line, "code_before or code_after is empty (file added or deleted)")
		return nil
	case len(before) > imp.opt.MaxFileBytes || len(after) > imp.opt.MaxFileBytes:
		imp.skip(line, fmt.Sprintf("code larger than %d bytes", imp.opt.MaxFileBytes))
		return nil
	case before == after:
		imp.skip(line, "code_before equals code_after")
		return nil
	case lang == taskset.Go && !goPkgRe.MatchString(before):
		imp.skip(line, "Go file without a package clause")
		return nil
	}
	api := changedAPI(lang, before, after)
	if len(api) == 0 {
		imp.skip(line, "no function definitions found in code_before")
		return nil
	}
	num := m[1]
	if len(num) < 3 {
		num = strings.Repeat("0", 3-len(num)) + num
	}
	prefix := map[string]string{taskset.Python: "py", taskset.Go: "go"}[lang]
	base := fmt.Sprintf("%s-%s-%s", prefix, num, strings.ToLower(cve))
	imp.ids[base]++
	id := fmt.Sprintf("%s-%d", base, imp.ids[base])
	source := "cvefixes:" + cve
	if h := strings.TrimSpace(rec["hash"]); h != "" {
		source += " commit=" + h
	}
	if fc := strings.TrimSpace(rec["file_change_id"]); fc != "" {
		source += " file_change=" + fc
	}
	cweName := taskset.CWENames[cwe]
	if cweName == "" {
		cweName = cwe
	} else {
		cweName = fmt.Sprintf("%s (%s)", cweName, cwe)
	}
	t := taskset.Task{
		ID:       id,
		Title:    fmt.Sprintf("%s in %s", cve, name),
		Language: lang,
		CWE:      cwe,
		Severity: severity(rec),
		Description: fmt.Sprintf("%s is a file of an open-source project. Advisory %s reports that it is vulnerable to %s. "+
			"Repair the vulnerability while keeping the file's behaviour and the signatures of its functions. "+
			"This task has no tests: it is scored by static analysis only.", name, cve, cweName),
		Files:      []string{name},
		API:        api,
		Difficulty: difficulty(before, after),
		Mode:       taskset.ModeStaticOnly,
		Source:     source,
		Src:        map[string][]byte{name: []byte(before)},
		Fix:        map[string][]byte{name: []byte(after)},
	}
	if err := taskset.Validate(&t); err != nil {
		imp.skip(line, err.Error())
		return nil
	}
	imp.res.Tasks = append(imp.res.Tasks, t)
	if len(imp.res.Tasks) >= imp.opt.MaxTasks {
		return errEnough
	}
	return nil
}

func safeName(s string) bool {
	if s == "" || s == "." || s == ".." {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// normalise turns CRLF into LF: CVEfixes rows mix both, and a line-ending
// change alone is not a fix.
func normalise(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }

// changedAPI lists the signatures of functions whose definition text differs
// between before and after (all functions when none differs textually),
// capped so one huge file does not produce hundreds of entries.
func changedAPI(lang, before, after string) []string {
	type fn struct{ name, sig string }
	var fns []fn
	switch lang {
	case taskset.Python:
		for _, m := range pyDefRe.FindAllStringSubmatch(before, -1) {
			fns = append(fns, fn{m[1], fmt.Sprintf("%s(%s)", m[1], collapse(m[2]))})
		}
	case taskset.Go:
		for _, m := range goFuncRe.FindAllStringSubmatch(before, -1) {
			fns = append(fns, fn{m[2], collapse(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(m[0]), "{")))})
		}
	}
	bodies := func(src string) map[string]string {
		out := map[string]string{}
		var locs [][]int
		if lang == taskset.Python {
			locs = pyDefRe.FindAllStringSubmatchIndex(src, -1)
		} else {
			locs = goFuncRe.FindAllStringSubmatchIndex(src, -1)
		}
		for i, l := range locs {
			end := len(src)
			if i+1 < len(locs) {
				end = locs[i+1][0]
			}
			nameIdx := 2
			if lang == taskset.Go {
				nameIdx = 4
			}
			out[src[l[nameIdx]:l[nameIdx+1]]] += src[l[0]:end]
		}
		return out
	}
	b, a := bodies(before), bodies(after)
	seen := map[string]bool{}
	var changed, all []string
	for _, f := range fns {
		if seen[f.sig] {
			continue
		}
		seen[f.sig] = true
		all = append(all, f.sig)
		if b[f.name] != a[f.name] {
			changed = append(changed, f.sig)
		}
	}
	out := changed
	if len(out) == 0 {
		out = all
	}
	if len(out) > 20 {
		out = out[:20]
	}
	return out
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

func severity(rec map[string]string) string {
	s := strings.ToLower(strings.TrimSpace(rec["severity"]))
	if s == "" {
		s = strings.ToLower(strings.TrimSpace(rec["cvss3_base_severity"]))
	}
	switch s {
	case "low", "medium", "high", "critical":
		return s
	case "moderate":
		return "medium"
	case "important":
		return "high"
	}
	return "medium"
}

// difficulty grades by how many lines the real fix changed.
func difficulty(before, after string) string {
	bl, al := strings.Split(before, "\n"), strings.Split(after, "\n")
	counts := map[string]int{}
	for _, l := range bl {
		counts[l]++
	}
	changed := 0
	for _, l := range al {
		if counts[l] > 0 {
			counts[l]--
		} else {
			changed++
		}
	}
	for _, c := range counts {
		changed += c
	}
	switch {
	case changed <= 6:
		return "easy"
	case changed <= 30:
		return "medium"
	}
	return "hard"
}
