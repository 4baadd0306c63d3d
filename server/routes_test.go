package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestRouteTableIsWhatIsServed sends each route `serve --help` lists
// (server.Routes) to a server with a token, without the token: a public
// route answers, every other one asks for the token. A listed route the
// mux does not serve would answer 404 "no such endpoint" instead, and a
// route that forgot its auth would answer without a token.
func TestRouteTableIsWhatIsServed(t *testing.T) {
	cfg := toyConfig()
	cfg.Token = "secret"
	ls := startServer(t, cfg)
	seen := map[string]bool{}
	for _, r := range Routes() {
		if r.Path == nemoGymToolDoc.Path {
			continue // depends on the served environments' tools
		}
		if seen[r.Path] {
			t.Errorf("%s listed twice", r.Path)
		}
		seen[r.Path] = true
		path := strings.NewReplacer("{env}", "toy", "{id}", "s1").Replace(r.Path)
		for _, m := range r.Methods {
			resp, body := ls.send(t, m, path, nil, nil)
			switch {
			case r.Public && resp.StatusCode == http.StatusUnauthorized:
				t.Errorf("%s %s is public but asked for a token", m, r.Path)
			case !r.Public && resp.StatusCode != http.StatusUnauthorized:
				t.Errorf("%s %s without a token: %d %s, want 401", m, r.Path, resp.StatusCode, body)
			}
		}
	}
	for _, p := range []string{"/v1/score", "/get_reward", "/ws", "/seed_session", "/healthz"} {
		if !seen[p] {
			t.Errorf("Routes() lacks %s", p)
		}
	}
	if resp, _ := ls.send(t, "GET", "/no/such/route", nil, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unrouted path: %d, want 404", resp.StatusCode)
	}
}
