package signout

import (
	"net/http"
	"strings"
)

// SafeReturn returns where to send the user after sign-out.
func SafeReturn(domain, target string) string {
	if target == "" {
		return "/"
	}
	if strings.HasPrefix(target, "/") {
		return target
	}
	if strings.HasPrefix(target, "https://") && strings.Contains(target, domain) {
		return target
	}
	return "/"
}

// Handler serves GET /signout.
func Handler(domain string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "sso", Value: "", Path: "/", MaxAge: -1, HttpOnly: true, Secure: true})
		http.Redirect(w, r, SafeReturn(domain, r.URL.Query().Get("return_to")), http.StatusFound)
	})
}
