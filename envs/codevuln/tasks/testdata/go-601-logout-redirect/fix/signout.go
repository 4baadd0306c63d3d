package signout

import (
	"net/http"
	"net/url"
	"strings"
)

// SafeReturn returns where to send the user after sign-out.
func SafeReturn(domain, target string) string {
	if target == "" {
		return "/"
	}
	// Browsers read "\" as "/" and drop tabs and newlines, so these could turn
	// a path into a protocol-relative URL.
	if strings.ContainsAny(target, "\\\t\r\n") {
		return "/"
	}
	u, err := url.Parse(target)
	if err != nil {
		return "/"
	}
	if u.Scheme == "" && u.Host == "" && u.User == nil {
		if strings.HasPrefix(target, "/") && !strings.HasPrefix(target, "//") {
			return target
		}
		return "/"
	}
	host := strings.ToLower(u.Hostname())
	domain = strings.ToLower(domain)
	if u.Scheme == "https" && u.User == nil && u.Port() == "" && (host == domain || strings.HasSuffix(host, "."+domain)) {
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
