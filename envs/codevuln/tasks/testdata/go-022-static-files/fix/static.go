package static

import (
	"errors"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotFound is returned for names that do not resolve to a readable file.
var ErrNotFound = errors.New("static: not found")

// Server serves files below Root.
type Server struct {
	Root     string
	MaxBytes int64
}

// New returns a Server for root.
func New(root string) *Server {
	return &Server{Root: root, MaxBytes: 1 << 20}
}

// Open reads the file called name (slash-separated, relative to Root).
func (s *Server) Open(name string) ([]byte, error) {
	full, ok := s.resolve(name)
	if !ok {
		return nil, ErrNotFound
	}
	info, err := os.Stat(full)
	if err != nil || info.IsDir() {
		return nil, ErrNotFound
	}
	if info.Size() > s.MaxBytes {
		return nil, errors.New("static: file too large")
	}
	return os.ReadFile(full)
}

// resolve maps name to a path inside Root. Backslashes are treated as
// separators too, so Windows-style names cannot smuggle "..\" past the check.
func (s *Server) resolve(name string) (string, bool) {
	name = strings.ReplaceAll(name, "\\", "/")
	if name == "" || strings.ContainsRune(name, 0) {
		return "", false
	}
	clean := filepath.Clean("/" + name)
	root, err := filepath.Abs(s.Root)
	if err != nil {
		return "", false
	}
	full := filepath.Join(root, filepath.FromSlash(clean))
	rel, err := filepath.Rel(root, full)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return "", false
	}
	// A symlink inside Root could still point outside it.
	real, err := filepath.EvalSymlinks(full)
	if err != nil {
		return "", false
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", false
	}
	if real != realRoot && !strings.HasPrefix(real, realRoot+string(filepath.Separator)) {
		return "", false
	}
	return real, true
}

// ServeHTTP handles GET /files/<name>; the name may be percent-encoded.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	raw := strings.TrimPrefix(r.URL.EscapedPath(), "/files/")
	name, err := url.PathUnescape(raw)
	if err != nil {
		http.Error(w, "bad path", http.StatusBadRequest)
		return
	}
	body, err := s.Open(name)
	if err != nil {
		http.Error(w, "not found", http.StatusNotFound)
		return
	}
	ctype := mime.TypeByExtension(filepath.Ext(name))
	if ctype == "" {
		ctype = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ctype)
	w.Write(body)
}
