package mail

import (
	"encoding/base64"
	"fmt"
	"strings"
	"testing"
)

func has(a *Analysis, typ, value string) bool {
	for _, in := range a.Indicators {
		if in.Type == typ && (value == "" || strings.EqualFold(in.Value, value)) {
			return true
		}
	}
	return false
}

func TestIndicators(t *testing.T) {
	cases := []struct {
		name string
		raw  string
		want [][2]string // type, value ("" = any)
		not  []string    // types that must be absent
	}{
		{
			name: "display name spoof, lookalike sender, shortener, urgency",
			raw: "From: \"PayPal Service\" <security@paypa1-support.com>\r\nTo: bob@acme.com\r\nSubject: Urgent: account will be suspended\r\n" +
				"Reply-To: collect@mail.ru\r\nReturn-Path: <bounce@mail.ru>\r\n" +
				"Authentication-Results: mx.acme.com; spf=fail smtp.mailfrom=mail.ru; dkim=none; dmarc=fail\r\n\r\n" +
				"Please verify your account within 24 hours: http://bit.ly/abc123\r\n",
			want: [][2]string{
				{TypeDisplayNameSpoof, "PayPal Service"}, {TypeSenderLookalike, "security@paypa1-support.com"},
				{TypeReplyToMismatch, "collect@mail.ru"}, {TypeReturnPathMismatch, "bounce@mail.ru"},
				{TypeAuthFailure, "spf=fail"}, {TypeAuthFailure, "dmarc=fail"}, {TypeShortener, "http://bit.ly/abc123"},
				{TypeCredentialRequest, "verify your account"}, {TypeUrgency, "Urgent"}, {TypeUrgency, "within 24 hours"},
			},
		},
		{
			name: "html link text mismatch, punycode, ip, login form, script dropped",
			raw: "From: Bank <info@bank.example>\nContent-Type: text/html; charset=utf-8\n\n" +
				`<html><script>var x="verify your account";</script><p>Go to <a href="http://198.51.100.7/login.php">https://www.paypal.com/</a></p>` +
				`<a href="https://xn--pypal-4ve.com/signin">here</a><form action="https://evil.example/collect"><input type="password" name="pw"></form></html>`,
			want: [][2]string{
				{TypeLinkMismatch, "http://198.51.100.7/login.php"}, {TypeIPURL, "http://198.51.100.7/login.php"},
				{TypeLookalikeDomain, "https://xn--pypal-4ve.com/signin"}, {TypeCredentialForm, "https://evil.example/collect"},
			},
			not: []string{TypeCredentialRequest},
		},
		{
			name: "double extension and risky attachment",
			raw: "From: a@b.example\nContent-Type: multipart/mixed; boundary=XX\n\n--XX\nContent-Type: text/plain\n\nsee attached\n" +
				"--XX\nContent-Type: application/octet-stream; name=\"invoice.pdf.exe\"\nContent-Transfer-Encoding: base64\n\nTVqQAAMAAAAEAAAA\n" +
				"--XX\nContent-Disposition: attachment; filename=\"run.js\"\n\nalert(1)\n--XX--\n",
			want: [][2]string{{TypeDoubleExtension, "invoice.pdf.exe"}, {TypeRiskyAttachment, "run.js"}},
		},
		{
			name: "legitimate password reset on the real domain",
			raw: "From: GitHub <noreply@github.com>\nTo: dev@acme.com\nAuthentication-Results: mx; spf=pass; dkim=pass; dmarc=pass\nSubject: Reset your password\n\n" +
				"We received a request to reset your password. Use https://github.com/password_reset/abc if it was you.\n",
			not: []string{TypeCredentialURL, TypeDisplayNameSpoof, TypeLookalikeDomain, TypeAuthFailure, TypeSenderLookalike},
		},
		{
			name: "spanish and german content, quoted-printable",
			raw: "From: Soporte <soporte@correos-envios.es>\nContent-Type: text/plain; charset=iso-8859-1\nContent-Transfer-Encoding: quoted-printable\n\n" +
				"Verifique su cuenta de inmediato o ser=E1 suspendida. Bitte umgehend die Bankverbindung =FCberweisung pr=FCfen.\n",
			want: [][2]string{{TypeCredentialRequest, "Verifique su cuenta"}, {TypeUrgency, "de inmediato"},
				{TypePaymentRequest, "Bankverbindung"}, {TypePaymentRequest, "überweisung"}, {TypeSenderLookalike, ""}},
		},
		{
			name: "BEC from free mail with role display name and gift cards",
			raw:  "From: \"CEO Maria Lopez\" <maria.lopez.ceo@gmail.com>\nTo: ap@acme.com\nSubject: quick favour\n\nI need you to buy gift cards today and send me the codes.\n",
			want: [][2]string{{TypeDisplayNameSpoof, "CEO Maria Lopez"}, {TypeGiftCard, "gift cards"}},
		},
		{
			name: "recipient's domain imitated",
			raw:  "From: IT <it@acme-corp.com>\nTo: bob@acme.com\n\nhello\n",
			want: [][2]string{{TypeSenderLookalike, "it@acme-corp.com"}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := Analyze(tc.raw)
			for _, w := range tc.want {
				if !has(a, w[0], w[1]) {
					t.Errorf("missing %s %q; got %+v (notes %v)", w[0], w[1], a.Indicators, a.Msg.Notes)
				}
			}
			for _, n := range tc.not {
				if has(a, n, "") {
					t.Errorf("unexpected %s in %+v", n, a.Indicators)
				}
			}
		})
	}
}

func TestLookalike(t *testing.T) {
	for _, tc := range []struct {
		host string
		want bool
	}{
		{"paypal.com", false}, {"www.paypal.com", false}, {"paypai.com", true}, {"amaz0n-account.com", true},
		{"rnicrosoft.com", true}, {"paypal.com.secure-login.ru", true}, {"paypal.tk", true},
		{"pаypal.com", true}, {"example.org", false}, {"github.io", false}, {"stackoverflow.com", false},
		{"amazonses.com", false}, {"docusign.net", false}, {"secure-paypal.net", true},
	} {
		_, got := CheckLookalike(tc.host)
		if got != tc.want {
			t.Errorf("CheckLookalike(%q) = %v, want %v", tc.host, got, tc.want)
		}
	}
}

// TestBadInput checks that hostile messages end in bounded work and a note,
// never a panic or an unbounded allocation.
func TestBadInput(t *testing.T) {
	big := strings.Repeat("QUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFBQUFB\r\n", 25<<20/74)
	nested := func(depth int) string {
		var b strings.Builder
		b.WriteString("From: a@b.example\nContent-Type: multipart/mixed; boundary=b0\n\n")
		for i := 0; i < depth; i++ {
			fmt.Fprintf(&b, "--b%d\nContent-Type: multipart/mixed; boundary=b%d\n\n", i, i+1)
		}
		fmt.Fprintf(&b, "--b%d\nContent-Type: text/plain\n\nurgent\n", depth)
		for i := depth; i >= 0; i-- {
			fmt.Fprintf(&b, "--b%d--\n", i)
		}
		return b.String()
	}
	cases := []struct {
		name     string
		raw      string
		note     string // substring of a note that must be present
		maxText  int
		attachGE int64
	}{
		{"malformed boundary", "From: a@b.example\nContent-Type: multipart/mixed; boundary=XYZ\n\n--ABC\nContent-Type: text/plain\n\nhi\n--ABC--\n", "boundary", 0, 0},
		{"no boundary", "From: a@b.example\nContent-Type: multipart/mixed\n\nhello\n", "without boundary", 0, 0},
		{"missing headers", "just some text with no header block at all", "no readable header", 0, 0},
		{"no from", "Subject: hi\n\nbody\n", "no From", 0, 0},
		{"25 MB attachment", "From: a@b.example\nContent-Type: multipart/mixed; boundary=Z\n\n--Z\nContent-Type: text/plain\n\nsee file\n--Z\nContent-Type: application/pdf; name=big.pdf\nContent-Transfer-Encoding: base64\n\n" + big + "--Z--\n", "", 0, 18 << 20},
		{"deep nesting", nested(50), "depth", 0, 0},
		{"invalid charset", "From: a@b.example\nContent-Type: text/plain; charset=x-klingon\n\nhello \xff\xfe\n", "unknown charset", 0, 0},
		{"non-utf8 undeclared", "From: a@b.example\n\nGr\xfc\xdfe aus M\xfcnchen\n", "windows-1252", 0, 0},
		{"html script and inline image", "From: a@b.example\nContent-Type: text/html\n\n<script>" + strings.Repeat("x", 100000) + "</script><img src=\"data:image/png;base64," + strings.Repeat("A", 1<<20) + "\">Hello", "inline data", 100, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := Analyze(tc.raw)
			if tc.note != "" && !strings.Contains(strings.Join(a.Msg.Notes, "|"), tc.note) {
				t.Errorf("notes %q lack %q", a.Msg.Notes, tc.note)
			}
			if tc.maxText > 0 && len(a.Msg.Text) > tc.maxText {
				t.Errorf("text kept %d bytes (script/image not dropped?)", len(a.Msg.Text))
			}
			if tc.attachGE > 0 {
				if len(a.Msg.Attachments) != 1 || a.Msg.Attachments[0].Size < tc.attachGE {
					t.Errorf("attachments %+v, want one of ≥ %d bytes", a.Msg.Attachments, tc.attachGE)
				}
			}
			if !strings.Contains(a.Msg.Text, "\uFFFD") && tc.name == "invalid charset" {
				t.Errorf("invalid bytes should become U+FFFD, text %q", a.Msg.Text)
			}
		})
	}
}

func TestBase64Body(t *testing.T) {
	body := base64.StdEncoding.EncodeToString([]byte("Bitte bestätigen Sie Ihr Konto sofort."))
	raw := "From: x@y.example\nContent-Type: text/plain; charset=utf-8\nContent-Transfer-Encoding: base64\n\n" + body[:20] + "\n" + body[20:] + "\n"
	a := Analyze(raw)
	if !has(a, TypeCredentialRequest, "bestätigen Sie Ihr Konto") || !has(a, TypeUrgency, "sofort") {
		t.Fatalf("base64 body not decoded: %q %+v", a.Msg.Text, a.Indicators)
	}
}

func TestDeterministic(t *testing.T) {
	raw := "From: \"Amazon\" <a@amaz0n.co>\nSubject: Urgent\n\nverify your account at http://amaz0n.co/login and http://bit.ly/x\n"
	first := fmt.Sprint(Analyze(raw).Indicators)
	for i := 0; i < 20; i++ {
		if got := fmt.Sprint(Analyze(raw).Indicators); got != first {
			t.Fatalf("run %d differs:\n%s\n%s", i, got, first)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add("From: a@b.example\nSubject: hi\n\nbody http://x.example/login\n")
	f.Add("From: \"PayPal\" <x@paypa1.com>\nContent-Type: multipart/alternative; boundary=B\n\n--B\nContent-Type: text/html; charset=koi8-r\nContent-Transfer-Encoding: quoted-printable\n\n<a href=3D\"http://1.2.3.4/\">www.paypal.com</a>\n--B--\n")
	f.Add("Content-Type: message/rfc822\n\nFrom: y@z\n\nx")
	f.Add("no headers")
	f.Add("From: a@b.example\nContent-Type: text/html\n\n<p>AT&amp;amp;T &#x26; &amp</p><a href=\"http://x.example/?a=1&amp;amp;b\">AT&amp;T</a>")
	f.Fuzz(func(t *testing.T, raw string) {
		lim := DefaultLimits()
		lim.MaxBytes = 1 << 16
		a := Extract(ParseLimits(raw, lim))
		if len(a.Msg.Text) > lim.MaxTextBytes || len(a.Msg.Links) > lim.MaxLinks || len(a.Msg.Notes) > maxNotes {
			t.Fatalf("limits exceeded: text %d links %d notes %d", len(a.Msg.Text), len(a.Msg.Links), len(a.Msg.Notes))
		}
		for _, in := range a.Indicators {
			if !IsType(in.Type) || in.Value == "" {
				t.Fatalf("bad indicator %+v", in)
			}
		}
	})
}

func TestFindURLs(t *testing.T) {
	text := "Go to https://a.example/x?y=1, or www.b.example/path. Also irs-refunds.website/claim and " +
		"HTTP://C.EXAMPLE. Not file.pdf or a/b or user@d.example/x; (http://e.example/(p))"
	got := strings.Join(findURLs(text), " | ")
	want := "https://a.example/x?y=1 | www.b.example/path | irs-refunds.website/claim | HTTP://C.EXAMPLE | http://e.example/(p)"
	if got != want {
		t.Errorf("findURLs:\n got %s\nwant %s", got, want)
	}
}

// TestHTMLEntitiesDecodedOnce: each layer decodes once. The transfer
// encoding is undone by the MIME layer, character references by the HTML
// tokenizer (text and attribute values alike); plain text keeps an "&amp;"
// as written. "AT&amp;amp;T" in HTML source therefore reads "AT&amp;T".
func TestHTMLEntitiesDecodedOnce(t *testing.T) {
	const hdr = "From: a@b.example\r\n"
	cases := []struct {
		name      string
		raw       string
		text      []string // substrings of Msg.Text
		notText   []string
		hrefs     []string // Links[i].Href, in order
		linkTexts []string // Links[i].Text, in order
	}{
		{
			name:    "html text",
			raw:     hdr + "Content-Type: text/html; charset=utf-8\r\n\r\n<p>Dear AT&amp;amp;T customer &amp; friend, 3 &lt; 4 &#38;&#x26;</p>",
			text:    []string{"Dear AT&amp;T customer & friend, 3 < 4 &&"},
			notText: []string{"AT&T"},
		},
		{
			name:      "html anchor text and href",
			raw:       hdr + "Content-Type: text/html\r\n\r\n<a href=\"https://evil.example/x?a=1&amp;amp;b=2&amp;c=3\">AT&amp;amp;T sign-in</a>",
			text:      []string{"AT&amp;T sign-in"},
			hrefs:     []string{"https://evil.example/x?a=1&amp;b=2&c=3"},
			linkTexts: []string{"AT&amp;T sign-in"},
		},
		{
			name:    "quoted-printable html",
			raw:     hdr + "Content-Type: text/html; charset=iso-8859-1\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n<p style=3D\"x\">AT&amp;amp;T =E9t=E9 &amp;lt;</p>",
			text:    []string{"AT&amp;T été &lt;"},
			notText: []string{"AT&T", "été <"},
		},
		{
			name:    "plain text is not HTML",
			raw:     hdr + "Content-Type: text/plain\r\n\r\nDear AT&amp;T customer, 3 &lt; 4 https://a.example/x?a=1&amp;b=2",
			text:    []string{"Dear AT&amp;T customer, 3 &lt; 4"},
			notText: []string{"AT&T", "3 < 4"},
			hrefs:   []string{"https://a.example/x?a=1&amp;b=2"},
		},
		{
			name: "multipart alternative",
			raw: hdr + "Content-Type: multipart/alternative; boundary=B\r\n\r\n--B\r\nContent-Type: text/plain\r\n\r\nplain AT&amp;T\r\n" +
				"--B\r\nContent-Type: text/html\r\n\r\n<p>html AT&amp;amp;T</p>\r\n--B--\r\n",
			text:    []string{"plain AT&amp;T", "html AT&amp;T"},
			notText: []string{"AT&T"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := Parse(tc.raw)
			for _, s := range tc.text {
				if !strings.Contains(m.Text, s) {
					t.Errorf("text %q lacks %q", m.Text, s)
				}
			}
			for _, s := range tc.notText {
				if strings.Contains(m.Text, s) {
					t.Errorf("text %q contains %q: decoded twice", m.Text, s)
				}
			}
			if tc.hrefs != nil || tc.linkTexts != nil {
				var hrefs, texts []string
				for _, l := range m.Links {
					hrefs = append(hrefs, l.Href)
					texts = append(texts, l.Text)
				}
				if tc.hrefs != nil && strings.Join(hrefs, " ") != strings.Join(tc.hrefs, " ") {
					t.Errorf("hrefs %q, want %q", hrefs, tc.hrefs)
				}
				if tc.linkTexts != nil && strings.Join(texts, " ") != strings.Join(tc.linkTexts, " ") {
					t.Errorf("link texts %q, want %q", texts, tc.linkTexts)
				}
			}
		})
	}
}
