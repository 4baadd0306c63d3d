// Package web is svbench's local dashboard (`svbench view`): the runs under
// an output root, each run's metrics and charts, every transcript, paired
// comparisons and the leaderboard. Pages are rendered on the server with
// html/template (model output is always escaped, never trusted as HTML);
// the few scripts and styles are embedded, so it works offline and loads
// nothing from the network.
package web

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"

	"github.com/svbench/svbench/artifact"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Options configure a Server.
type Options struct {
	// Addr is the address the server listens on; Host headers naming
	// another host are refused when it is a loopback address (a web page
	// elsewhere must not read transcripts through DNS rebinding).
	Addr string
	Log  *slog.Logger
	// MaxRowBytes bounds one results row the dashboard reads
	// (DefaultMaxRowBytes when 0). A longer row is listed as too large,
	// left out of charts and never held in memory whole.
	MaxRowBytes int64
}

// Server serves the dashboard for the runs under one root.
type Server struct {
	root     string // as given, for display
	realRoot string // symlinks resolved, for containment checks
	// files is the only way run files are read: it follows symlinks that
	// stay under the root and refuses those that leave it (results.jsonl
	// → /etc/passwd is not served).
	files    *os.Root
	opts     Options
	pages    map[string]*template.Template
	mux      *http.ServeMux
	idx      indexes
	reports  reportCache
	loopback bool
}

// New builds a server for root.
func New(root string, opts Options) (*Server, error) {
	st, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("--root: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("--root %s: not a directory", root)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return nil, err
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.MaxRowBytes <= 0 {
		opts.MaxRowBytes = DefaultMaxRowBytes
	}
	files, err := os.OpenRoot(real)
	if err != nil {
		return nil, fmt.Errorf("--root: %w", err)
	}
	s := &Server{root: root, realRoot: real, files: files, opts: opts, mux: http.NewServeMux()}
	if host, _, err := net.SplitHostPort(opts.Addr); err == nil {
		ip := net.ParseIP(host)
		s.loopback = host == "localhost" || (ip != nil && ip.IsLoopback())
	}
	if err := s.parseTemplates(); err != nil {
		files.Close()
		return nil, err
	}
	static, _ := fs.Sub(staticFS, "static")
	s.mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(static)))
	s.mux.HandleFunc("GET /{$}", s.handleRuns)
	s.mux.HandleFunc("GET /api/runs", s.handleAPIRuns)
	s.mux.HandleFunc("GET /run", s.handleRun)
	s.mux.HandleFunc("GET /chart", s.handleChart)
	s.mux.HandleFunc("GET /transcripts", s.handleTranscripts)
	s.mux.HandleFunc("GET /rollout", s.handleRollout)
	s.mux.HandleFunc("GET /compare", s.handleCompare)
	s.mux.HandleFunc("GET /leaderboard", s.handleLeaderboard)
	return s, nil
}

// Close releases the root directory. Requests served afterwards fail.
func (s *Server) Close() error { return s.files.Close() }

// csp allows only this origin's scripts, styles and images: no inline
// script, no inline style, no plugins, no framing.
const csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// ServeHTTP adds the security headers to every answer.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	if s.loopback && !loopbackHost(r.Host) {
		http.Error(w, "svbench view answers only requests addressed to localhost", http.StatusForbidden)
		return
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "read-only dashboard", http.StatusMethodNotAllowed)
		return
	}
	s.mux.ServeHTTP(w, r)
}

func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// errBadRun is any run id that is not a run under the root.
var errBadRun = errors.New("no such run under --root")

// runRef is a run directory: its absolute path (for the packages that
// take paths) and its path under the root (for reading through files).
type runRef struct {
	dir, rel string
}

// file is a run file's name under the root.
func (r runRef) file(name string) string { return filepath.Join(r.rel, name) }

// runDir maps a run id (its directory relative to the root, with forward
// slashes) to the directory. Ids that are absolute, unclean, climb out with
// "..", reach outside through a symlink, or name a directory without run
// files are refused: an id is never a way to read another file.
func (s *Server) runDir(id string) (runRef, error) {
	if id == "" || len(id) > 4096 || strings.ContainsAny(id, "\\\x00:") || strings.HasPrefix(id, "/") {
		return runRef{}, errBadRun
	}
	if path.Clean(id) != id || id == "." {
		return runRef{}, errBadRun
	}
	for _, seg := range strings.Split(id, "/") {
		if seg == ".." || seg == "." || seg == "" {
			return runRef{}, errBadRun
		}
	}
	dir := filepath.Join(s.realRoot, filepath.FromSlash(id))
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return runRef{}, errBadRun
	}
	rel, err := filepath.Rel(s.realRoot, real)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return runRef{}, errBadRun
	}
	r := runRef{dir: real, rel: rel}
	for _, name := range []string{artifact.MetadataFile, artifact.ResultsFile} {
		if st, err := s.files.Stat(r.file(name)); err == nil && st.Mode().IsRegular() {
			return r, nil
		}
	}
	return runRef{}, errBadRun
}

// reportCache keeps built reports per results file state.
type reportCache struct {
	mu sync.Mutex
	m  map[string]*runReport
}
