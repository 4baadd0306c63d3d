package web

import (
	"net/http"
	"unicode/utf8"
)

func newRequest(method, url, host string) (*http.Request, error) {
	req, err := http.NewRequest(method, url, nil)
	if err == nil && host != "" {
		req.Host = host
	}
	return req, err
}

func utf8Valid(s string) bool { return utf8.ValidString(s) }
