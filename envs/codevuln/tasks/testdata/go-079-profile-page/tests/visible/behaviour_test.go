package profile

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestRender(t *testing.T) {
	var sb strings.Builder
	err := Render(&sb, Profile{ID: "u42", Name: "Ada Lovelace", Bio: "Analyst", Homepage: "https://ada.example", Tags: []string{"math", "engines"}})
	if err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	for _, want := range []string{`<h1 class="name">Ada Lovelace</h1>`, `<p class="bio">Analyst</p>`, `href="https://ada.example"`, "<li>math</li><li>engines</li>", `"u42"`} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %q:\n%s", want, out)
		}
	}
}

func TestHandler(t *testing.T) {
	h := Handler(func(id string) (Profile, bool) { return Profile{ID: id, Name: "N"}, id == "u1" })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/?id=u1", nil))
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), "<h1 class=\"name\">N</h1>") {
		t.Fatalf("GET u1 = %d %s", rec.Code, rec.Body.String())
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/?id=nobody", nil))
	if rec.Code != 404 {
		t.Fatalf("GET nobody = %d", rec.Code)
	}
}
