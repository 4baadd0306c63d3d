package web

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/svbench/svbench/base/clip"
	"github.com/svbench/svbench/llm/usage"
	"github.com/svbench/svbench/report"
)

// Display bounds: model output is hostile and may be huge.
const (
	shownAtOnce = 4 << 10 // shown at once
	shownInFull = 1 << 20 // behind "show all"; the rest only in results.jsonl
	pageSize    = 50
)

func (s *Server) parseTemplates() error {
	funcs := template.FuncMap{
		"clip":    newClipped,
		"preview": func(s string) string { return previewText(s, 240) },
		"f4":      func(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) },
		"pct":     func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) },
		"date":    func(t time.Time) string { return fmtTime(t) },
		"json":    prettyJSON,
		"cost":    usage.FormatCost,
		"runcost": report.CostText,
		"add":     func(a, b int) int { return a + b },
		"runLink": func(id string) string { return "/run?id=" + urlq(id) },
		"join":    strings.Join,
		"deref":   func(p *float64) float64 { return *p },
		"optf4":   optF4,
		"ci":      ciText,
		"ptrOK":   func(p *float64) bool { return p != nil },
		"truth":   func(p *bool) bool { return p != nil && *p },
	}
	s.pages = map[string]*template.Template{}
	names, err := fs.Glob(templateFS, "templates/*.html")
	if err != nil {
		return err
	}
	for _, n := range names {
		base := strings.TrimSuffix(filepath.Base(n), ".html")
		if base == "base" {
			continue
		}
		t, err := template.New(base).Funcs(funcs).ParseFS(templateFS, "templates/base.html", n)
		if err != nil {
			return fmt.Errorf("web template %s: %w", n, err)
		}
		s.pages[base] = t
	}
	return nil
}

// render writes a page into a buffer first, so a template error becomes a
// clean 500 and never half a page.
func (s *Server) render(w http.ResponseWriter, page string, title string, data any) {
	var b bytes.Buffer
	err := s.pages[page].ExecuteTemplate(&b, "base", map[string]any{"Title": title, "Page": page, "D": data})
	if err != nil {
		s.opts.Log.Error("render", "page", page, "err", err)
		http.Error(w, "internal error rendering "+page, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(b.Bytes())
}

func (s *Server) fail(w http.ResponseWriter, code int, msg string) {
	w.WriteHeader(code)
	s.render(w, "error", "error", map[string]any{"Code": code, "Message": msg})
}

// Clipped is a long text split for display.
type Clipped struct {
	Short     string
	Full      string
	Truncated bool // Short is not all of it
	Cut       bool // even Full is not all of it
	Size      int
}

// newClipped is s as a page shows it: a short part at once, more on demand.
func newClipped(s string) Clipped {
	c := Clipped{Short: s, Full: s, Size: len(s)}
	if len(s) > shownAtOnce {
		c.Short, c.Truncated = clip.Prefix(s, shownAtOnce), true
	}
	if len(s) > shownInFull {
		c.Full, c.Cut = clip.Prefix(s, shownInFull), true
	}
	return c
}

func previewText(s string, n int) string {
	return clip.Bytes(strings.Join(strings.Fields(s), " "), n, clip.Ellipsis)
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// prettyJSON shows a value for reading: strings as themselves, anything
// else as indented JSON. HTML is not escaped here: html/template escapes
// the result once, and \u003c would hide what the model wrote.
func prettyJSON(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func optF4(p *float64) string {
	if p == nil {
		return "—"
	}
	return strconv.FormatFloat(*p, 'f', 4, 64)
}

// ---- runs table --------------------------------------------------------

func urlq(s string) string { return template.URLQueryEscaper(s) }

// ciText is an entry's interval for metric name, "—" when it has none: a
// missing map entry reads as [0, 0], which is an interval the run never
// had (the leaderboard's markdown uses the same rule).
func ciText(ci map[string][2]float64, name string) string {
	v, ok := ci[name]
	if !ok || v == [2]float64{} {
		return "\u2014"
	}
	return "[" + strconv.FormatFloat(v[0], 'f', 4, 64) + ", " + strconv.FormatFloat(v[1], 'f', 4, 64) + "]"
}
