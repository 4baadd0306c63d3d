package phishing

import (
	"encoding/json"
	"testing"
)

// TestGroundingHTMLEntities: evidence is grounded against the text as
// decoded once per layer. An HTML body reading "AT&amp;amp;T" in source
// shows "AT&amp;T", so that is what a quote must say; "AT&T" was never in
// the message. Plain text is not HTML: its "&amp;" stays as written.
func TestGroundingHTMLEntities(t *testing.T) {
	const head = "From: \"PayPal\" <security@paypa1-secure.com>\r\nTo: bob@northwind.com\r\nSubject: Account notice\r\n"
	html := head + "Content-Type: text/html; charset=utf-8\r\n\r\n" +
		"<p>Dear AT&amp;amp;T customer: verify your account within 24 hours.</p>" +
		"<p><a href=\"https://paypa1-secure.com/login?u=1&amp;next=%2F\">Sign in</a></p>\r\n"
	plain := head + "Content-Type: text/plain; charset=utf-8\r\n\r\n" +
		"Dear AT&amp;T customer: verify your account within 24 hours. https://paypa1-secure.com/login?u=1&next=%2F\r\n"
	row := func(email string) string {
		b, err := json.Marshal(map[string]any{"id": "h", "email": email, "answer": LabelPhishing})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	cases := []struct {
		name, email, typ, value string
		grounded                bool
	}{
		{"html: quote as shown", html, "credential_request", "Dear AT&amp;T customer: verify your account", true},
		{"html: doubly decoded quote", html, "credential_request", "Dear AT&T customer: verify your account", false},
		{"html: href decoded once", html, "lookalike_domain", "https://paypa1-secure.com/login?u=1&next=%2F", true},
		{"html: phrase without entities", html, "urgency", "within 24 hours", true},
		{"plain: quote as written", plain, "credential_request", "Dear AT&amp;T customer: verify your account", true},
		{"plain: no HTML decoding", plain, "credential_request", "Dear AT&T customer: verify your account", false},
		{"plain: url", plain, "credential_url", "https://paypa1-secure.com/login?u=1&next=%2F", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			item, err := json.Marshal(map[string]string{"type": tc.typ, "value": tc.value})
			if err != nil {
				t.Fatal(err)
			}
			s := score(t, example(t, row(tc.email)), `{"label":"Phishing","confidence":0.9,"evidence":[`+string(item)+`]}`, RubricDefault)
			want := 0
			if tc.grounded {
				want = 1
			}
			if got := s.Parsed["evidence_grounded"]; got != want {
				t.Errorf("evidence_grounded = %v, want %v (parsed %v)", got, want, s.Parsed)
			}
		})
	}
}
