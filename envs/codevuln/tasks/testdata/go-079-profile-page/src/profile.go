package profile

import (
	"io"
	"net/http"
	"strings"
	"text/template"
)

// Profile is what a member publishes about themselves.
type Profile struct {
	ID       string
	Name     string
	Bio      string
	Homepage string
	Tags     []string
}

var page = template.Must(template.New("profile").Funcs(template.FuncMap{
	"join": strings.Join,
}).Parse(`<!doctype html>
<html><head><title>{{.Name}} - Members</title></head>
<body>
<h1 class="name">{{.Name}}</h1>
<p class="bio">{{.Bio}}</p>
{{if .Homepage}}<a class="home" href="{{.Homepage}}" rel="nofollow">{{.Homepage}}</a>{{end}}
<ul class="tags">{{range .Tags}}<li>{{.}}</li>{{end}}</ul>
<script>var profileId = "{{.ID}}";</script>
</body></html>
`))

// Render writes the profile page for p.
func Render(w io.Writer, p Profile) error {
	return page.Execute(w, p)
}

// Handler serves GET /?id=<member id>.
func Handler(lookup func(id string) (Profile, bool)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := lookup(r.URL.Query().Get("id"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err := Render(w, p); err != nil {
			http.Error(w, "render failed", http.StatusInternalServerError)
		}
	})
}
