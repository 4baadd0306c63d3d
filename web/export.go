package web

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/svbench/svbench/base/clip"
)

// ExportResult says what Export wrote.
type ExportResult struct {
	Pages int // HTML pages
	Files int // every file, pages, charts and assets included
	// Skipped counts links to pages only the live server makes (compare,
	// JSON, a sort order): they are left as text, not links.
	Skipped int
	// SkippedPages are a run's pages that could not be rendered (a results
	// file that leaves the root, a row that does not decode): each is
	// exported as a page saying why, and the rest of the export goes on.
	SkippedPages []SkippedPage
}

// SkippedPage is one page Export could not render.
type SkippedPage struct {
	Run    string // the run id the page belongs to
	URL    string
	Reason string
}

// exportable are the pages a static copy holds, with the query keys that
// name one page: a link with other keys (a sort order, a compare form's
// result) is not followed and keeps its server URL.
var exportable = map[string][]string{
	"/":            nil,
	"/run":         {"id"},
	"/transcripts": {"id", "filter", "page", "sort"},
	"/rollout":     {"id", "row"},
	"/chart":       {"id", "name"},
	"/leaderboard": nil,
}

// linkRe finds the local links of a page: href and src attributes whose
// value starts with "/". Pages are the server's own templates, so this is
// a reading of known markup, not an HTML parser.
var linkRe = regexp.MustCompile(`(href|src)="(/[^"]*)"`)

// Export writes a self-contained static copy of the dashboard into dir, as
// `inspect view bundle` does: the runs table, every run page with its
// charts, the transcript pages and every rollout, and the leaderboard,
// linked by relative paths so the folder can be opened from disk or
// published anywhere. The pages come from the server's own handlers, so
// they escape model output as the live dashboard does. dir must be empty
// or absent. Filters that ask the server (the filter forms, compare) do
// not work in the copy; the runs table's in-page filter does.
func (s *Server) Export(dir string) (ExportResult, error) {
	var res ExportResult
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return res, fmt.Errorf("export: %s is not empty; pick a new directory", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, fmt.Errorf("export: %w", err)
	}
	// seen is keyed by file name, not URL: two URLs of one page (the same
	// query keys in another order, an id escaped or not) are one file,
	// written and counted once.
	seen := map[string]bool{}
	queue := []string{"/", "/static/app.js", "/static/style.css"}
	for _, u := range queue {
		name, _ := exportName(u)
		seen[name] = true
	}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		body, ctype, err := s.fetch(u)
		if err != nil {
			if strings.HasPrefix(u, "/static/") {
				continue // an asset this build does not have
			}
			run := runOf(u)
			if run == "" {
				// The runs table or the leaderboard: nothing to export around.
				return res, fmt.Errorf("export %s: %w", u, err)
			}
			// One bad run must not cost the others their export: its page
			// says why, so the links to it still lead somewhere.
			res.SkippedPages = append(res.SkippedPages, SkippedPage{Run: run, URL: u, Reason: err.Error()})
			body, ctype = skippedPage(run, err), "text/html; charset=utf-8"
		}
		name, _ := exportName(u)
		if strings.HasPrefix(ctype, "text/html") {
			res.Pages++
			body = linkRe.ReplaceAllFunc(body, func(m []byte) []byte {
				sub := linkRe.FindSubmatch(m)
				target := html.UnescapeString(string(sub[2]))
				tname, ok := exportName(target)
				if !ok {
					// A page only the server makes (compare, JSON, a
					// sort order): a link to it would be dead from disk,
					// so it stops being a link and says why.
					res.Skipped++
					if string(sub[1]) == "href" {
						return []byte(`data-needs-server="` + html.EscapeString(target) + `" title="needs svbench view (not in a static copy)"`)
					}
					return m
				}
				if !seen[tname] {
					seen[tname] = true
					queue = append(queue, target)
				}
				rel := relPath(name, tname)
				return []byte(fmt.Sprintf(`%s="%s"`, sub[1], html.EscapeString(rel)))
			})
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return res, fmt.Errorf("export: %w", err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			return res, fmt.Errorf("export: %w", err)
		}
		res.Files++
	}
	return res, nil
}

// runOf is the run id a local URL names (its id query key), or "".
func runOf(u string) string {
	pu, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return pu.Query().Get("id")
}

// skippedPage stands in for a page of a run that could not be rendered.
func skippedPage(run string, err error) []byte {
	return []byte(fmt.Sprintf("<!doctype html>\n<meta charset=\"utf-8\">\n<title>not exported</title>\n<p>This page of run <code>%s</code> was not exported: %s</p>\n<p><a href=\"/\">all runs</a></p>\n",
		html.EscapeString(run), html.EscapeString(err.Error())))
}

// fetch renders one page through the server's handlers.
func (s *Server) fetch(u string) ([]byte, string, error) {
	req := httptest.NewRequest(http.MethodGet, "http://localhost"+u, nil)
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		return nil, "", fmt.Errorf("status %d: %s", rec.Code, errorExcerpt(rec.Body.Bytes()))
	}
	return rec.Body.Bytes(), rec.Header().Get("Content-Type"), nil
}

// clipForError quotes the start of a failed page's body in an export
// error, cut on a character boundary.
func errorExcerpt(b []byte) string {
	return strings.TrimSpace(clip.Bytes(string(b), 200, clip.Ellipsis))
}

// exportName maps a local URL to its file in the export, and reports
// whether the export holds it. Names keep what the URL says, readable,
// with a short hash of the query so that no two URLs share a file.
func exportName(u string) (string, bool) {
	pu, err := url.Parse(u)
	if err != nil {
		return "", false
	}
	if strings.HasPrefix(pu.Path, "/static/") && pu.RawQuery == "" && !strings.Contains(pu.Path, "..") {
		return strings.TrimPrefix(pu.Path, "/"), true
	}
	keys, ok := exportable[pu.Path]
	if !ok {
		return "", false
	}
	q := pu.Query()
	for k := range q {
		if !slices.Contains(keys, k) {
			return "", false
		}
	}
	if pu.Path == "/" {
		return "index.html", true
	}
	base := strings.TrimPrefix(pu.Path, "/")
	if len(q) == 0 {
		return base + ".html", true
	}
	var parts []string
	for _, k := range keys {
		if v := q.Get(k); v != "" {
			parts = append(parts, v)
		}
	}
	enc := q.Encode()
	h := sha256.Sum256([]byte(enc))
	ext := ".html"
	if pu.Path == "/chart" {
		ext = ".svg"
	}
	return base + "/" + safeFileName(strings.Join(parts, "_")) + "-" + hex.EncodeToString(h[:4]) + ext, true
}

// safeFileName keeps letters, digits, '.', '-' and '_', and cuts to a
// length every file system takes.
func safeFileName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == '.':
			b.WriteByte('.')
		default:
			b.WriteByte('_')
		}
	}
	out := strings.Trim(b.String(), ".")
	if len(out) > 120 {
		out = out[:120]
	}
	return out
}

// relPath is the link from the file from to the file to, both export
// names.
func relPath(from, to string) string {
	depth := strings.Count(path.Dir(from), "/")
	if path.Dir(from) != "." {
		depth++
	}
	return strings.Repeat("../", depth) + to
}
