package server

import (
	"net/http"
	"strings"
)

func (s *Server) handleHealthz(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"status": "ok"})
}

func (s *Server) handleReadyz(w http.ResponseWriter, r *http.Request) {
	if s.ready.Load() {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "environments": s.order})
		return
	}
	msg := "datasets are loading"
	if m := s.loadMsg.Load(); m != nil {
		msg = "dataset load failed: " + *m
	}
	writeError(w, r, http.StatusServiceUnavailable, apiErrorf(CodeNotReady, "%s", msg))
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	extra := func(b *strings.Builder) {
		s.adm.writeMetrics(b)
		s.sessions.writeMetrics(b)
	}
	if err := s.metrics.write(w, extra); err != nil {
		s.log.Warn("write metrics", "err", err)
	}
}
