package server

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func mustRequest(t testing.TB, method, path, body string) *http.Request {
	t.Helper()
	return httptest.NewRequestWithContext(t.Context(), method, path, strings.NewReader(body))
}

func readAll(t testing.TB, resp *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
