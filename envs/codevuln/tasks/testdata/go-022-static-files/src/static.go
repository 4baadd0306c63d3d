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
	full := filepath.Join(s.Root, name)
	info, err := os.Stat(full)
	if err != nil || info.IsDir() {
		return nil, ErrNotFound
	}
	if info.Size() > s.MaxBytes {
		return nil, errors.New("static: file too large")
	}
	return os.ReadFile(full)
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
