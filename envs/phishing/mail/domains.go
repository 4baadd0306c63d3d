package mail

import (
	"net"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
)

// Brand is an organisation phishers impersonate, with the registrable
// domains that really belong to it and the words that name it.
type Brand struct {
	Name    string
	Domains []string
	// Words name the brand in display names and text (lower case).
	Words []string
}

// Brands is the built-in list. Look-alike checks compare a domain's label
// with each Name; Words catch display names ("PayPal Service").
var Brands = []Brand{
	{"paypal", []string{"paypal.com", "paypal.de", "paypal.es", "paypal.me", "paypalobjects.com"}, []string{"paypal"}},
	{"amazon", []string{"amazon.com", "amazon.de", "amazon.es", "amazon.co.uk", "amazonses.com", "amazon.jobs"}, []string{"amazon"}},
	{"microsoft", []string{"microsoft.com", "office.com", "office365.com", "live.com", "outlook.com", "microsoftonline.com", "sharepoint.com", "onmicrosoft.com"}, []string{"microsoft", "office 365", "office365", "outlook", "onedrive", "sharepoint"}},
	{"apple", []string{"apple.com", "icloud.com"}, []string{"apple", "icloud"}},
	{"google", []string{"google.com", "gmail.com", "youtube.com", "google.de", "google.es"}, []string{"google", "gmail"}},
	{"netflix", []string{"netflix.com"}, []string{"netflix"}},
	{"dhl", []string{"dhl.com", "dhl.de", "dhl.es"}, []string{"dhl"}},
	{"fedex", []string{"fedex.com"}, []string{"fedex"}},
	{"ups", []string{"ups.com"}, []string{"ups"}},
	{"docusign", []string{"docusign.com", "docusign.net"}, []string{"docusign"}},
	{"dropbox", []string{"dropbox.com"}, []string{"dropbox"}},
	{"linkedin", []string{"linkedin.com"}, []string{"linkedin"}},
	{"chase", []string{"chase.com"}, []string{"chase bank", "jpmorgan chase"}},
	{"wellsfargo", []string{"wellsfargo.com"}, []string{"wells fargo", "wellsfargo"}},
	{"bankofamerica", []string{"bankofamerica.com", "bofa.com"}, []string{"bank of america", "bankofamerica"}},
	{"irs", []string{"irs.gov"}, []string{"irs", "internal revenue service"}},
	{"adobe", []string{"adobe.com"}, []string{"adobe"}},
	{"facebook", []string{"facebook.com", "facebookmail.com", "meta.com"}, []string{"facebook"}},
	{"instagram", []string{"instagram.com"}, []string{"instagram"}},
	{"sparkasse", []string{"sparkasse.de"}, []string{"sparkasse"}},
	{"deutschebank", []string{"deutsche-bank.de", "db.com"}, []string{"deutsche bank"}},
	{"santander", []string{"santander.com", "santander.es", "santander.de"}, []string{"santander"}},
	{"bbva", []string{"bbva.es", "bbva.com"}, []string{"bbva"}},
	{"correos", []string{"correos.es"}, []string{"correos"}},
	{"dpd", []string{"dpd.com", "dpd.de"}, []string{"dpd"}},
	{"github", []string{"github.com"}, []string{"github"}},
	{"slack", []string{"slack.com"}, []string{"slack"}},
	{"zoom", []string{"zoom.us"}, []string{"zoom"}},
	{"coinbase", []string{"coinbase.com"}, []string{"coinbase"}},
	{"agenciatributaria", []string{"agenciatributaria.gob.es", "agenciatributaria.es"}, []string{"agencia tributaria", "hacienda"}},
}

var brandByDomain = func() map[string]*Brand {
	m := map[string]*Brand{}
	for i := range Brands {
		for _, d := range Brands[i].Domains {
			m[d] = &Brands[i]
		}
	}
	return m
}()

var shorteners = map[string]bool{
	"bit.ly": true, "tinyurl.com": true, "t.co": true, "goo.gl": true, "ow.ly": true, "is.gd": true,
	"buff.ly": true, "rebrand.ly": true, "cutt.ly": true, "shorturl.at": true, "t.ly": true,
	"rb.gy": true, "tiny.cc": true, "s.id": true, "bl.ink": true, "short.io": true,
}

// tracking lists email service providers' click-tracking and bounce
// domains: newsletters route links through them, and their subdomains
// carry the customer's name ("github.us2.list-manage.com") legitimately.
var tracking = map[string]bool{
	"list-manage.com": true, "mcsv.net": true, "mailchi.mp": true, "sendgrid.net": true,
	"mandrillapp.com": true, "hubspotlinks.com": true, "exacttarget.com": true, "sparkpostmail.com": true,
	"mailgun.org": true, "amazonses.com": true, "rs6.net": true, "createsend.com": true,
}

var freemail = map[string]bool{
	"gmail.com": true, "googlemail.com": true, "yahoo.com": true, "yahoo.es": true, "yahoo.de": true,
	"outlook.com": true, "hotmail.com": true, "live.com": true, "aol.com": true, "gmx.de": true,
	"gmx.net": true, "web.de": true, "proton.me": true, "protonmail.com": true, "mail.com": true,
	"icloud.com": true, "hotmail.es": true, "t-online.de": true,
}

// Registrable returns the eTLD+1 of host ("login.paypal.com" → "paypal.com"),
// or host itself for IPs and unknown suffixes.
func Registrable(host string) string {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" || net.ParseIP(host) != nil {
		return host
	}
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return host
	}
	return d
}

// BrandOf returns the brand owning the registrable domain, if any.
func BrandOf(domain string) *Brand { return brandByDomain[Registrable(domain)] }

// IsShortener reports whether host is a URL shortener.
func IsShortener(host string) bool { return shorteners[Registrable(host)] || shorteners[host] }

// IsFreemail reports whether the domain is a free webmail provider.
func IsFreemail(domain string) bool { return freemail[Registrable(domain)] }

// Lookalike explains how host imitates a brand (or extra, a domain the
// message trusts such as the recipient's), or returns "".
type Lookalike struct {
	Brand string
	How   string // homoglyph, punycode, typo, brand-in-domain, brand-in-subdomain
}

// CheckLookalike tests host against the brands and any extra trusted
// registrable domains (the recipient's organisation).
func CheckLookalike(host string, extra ...string) (Lookalike, bool) {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if host == "" || net.ParseIP(host) != nil {
		return Lookalike{}, false
	}
	how := ""
	if strings.Contains(host, "xn--") {
		if u, err := idna.ToUnicode(host); err == nil {
			host = u
			how = "punycode"
		}
	}
	reg := Registrable(host)
	if brandByDomain[reg] != nil || tracking[reg] {
		return Lookalike{}, false
	}
	for _, e := range extra {
		if e != "" && Registrable(e) == reg {
			return Lookalike{}, false
		}
	}
	label := strings.TrimSuffix(reg, suffixOf(reg))
	label = strings.TrimSuffix(label, ".")
	sub := strings.TrimSuffix(strings.TrimSuffix(host, reg), ".")
	ascii := isASCII(label)
	skel := skeleton(label)
	if !ascii && how == "" {
		how = "homoglyph"
	}
	names := make([]string, 0, len(Brands)+len(extra))
	for _, b := range Brands {
		names = append(names, b.Name)
	}
	for _, e := range extra {
		if e == "" {
			continue
		}
		r := Registrable(e)
		if l := strings.TrimSuffix(strings.TrimSuffix(r, suffixOf(r)), "."); len(l) >= 4 {
			names = append(names, l)
		}
	}
	flat := strings.ReplaceAll(skel, "-", "")
	for _, name := range names {
		switch {
		case label == name:
			// The brand's own name under a TLD it does not own (paypal.tk).
			return Lookalike{name, or(how, "foreign-tld")}, true
		case skel == name || flat == name:
			return Lookalike{name, or(how, "homoglyph")}, true
		case hasToken(skel, name) && len(name) >= 3:
			return Lookalike{name, or(how, "brand-in-domain")}, true
		case len(name) >= 5 && len(label) >= 4 && editDistance(flat, name, 2) <= maxTypo(name):
			return Lookalike{name, or(how, "typo")}, true
		}
		if sub != "" && len(name) >= 4 {
			for _, l := range strings.Split(sub, ".") {
				if l == name || hasToken(skeleton(l), name) {
					return Lookalike{name, "brand-in-subdomain"}, true
				}
			}
		}
	}
	return Lookalike{}, false
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func maxTypo(name string) int {
	if len(name) >= 9 {
		return 2
	}
	return 1
}

func suffixOf(reg string) string {
	s, _ := publicsuffix.PublicSuffix(reg)
	return s
}

// hasToken reports whether name appears in s as a hyphen-delimited token or
// as a prefix/suffix joined by a hyphen ("paypal-secure", "secure-paypal").
func hasToken(s, name string) bool {
	for _, t := range strings.Split(s, "-") {
		if t == name {
			return true
		}
	}
	return false
}

var confusables = map[rune]string{
	'а': "a", 'е': "e", 'о': "o", 'р': "p", 'с': "c", 'х': "x", 'у': "y", 'і': "i", 'ј': "j", 'ѕ': "s",
	'ԁ': "d", 'ɡ': "g", 'ӏ': "l", 'ο': "o", 'α': "a", 'ν': "v", 'ι': "i", 'κ': "k", 'τ': "t", 'ρ': "p",
	'ł': "l", 'ı': "i", 'á': "a", 'à': "a", 'ä': "a", 'é': "e", 'è': "e", 'í': "i", 'ó': "o", 'ö': "o",
	'ú': "u", 'ü': "u", 'ñ': "n", 'ç': "c", 'ß': "ss",
	'0': "o", '1': "l", '3': "e", '5': "s", '@': "a", '$': "s", '4': "a", '7': "t",
}

// skeleton maps look-alike characters to the ASCII letters they imitate,
// so "pаypa1" (Cyrillic а, digit 1) reads "paypal".
func skeleton(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if m, ok := confusables[r]; ok {
			b.WriteString(m)
			continue
		}
		b.WriteRune(r)
	}
	out := b.String()
	if strings.Contains(out, "rn") || strings.Contains(out, "vv") {
		out = strings.NewReplacer("rn", "m", "vv", "w").Replace(out)
	}
	return out
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// editDistance is the optimal-string-alignment distance, abandoning early
// once it exceeds max (look-alike checks only care about small distances).
func editDistance(a, b string, max int) int {
	if d := len(a) - len(b); d > max || -d > max {
		return max + 1
	}
	if len(a) > 64 || len(b) > 64 {
		return max + 1
	}
	var prev2, prev, cur [65]int
	for j := 0; j <= len(b); j++ {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin > max {
			return max + 1
		}
		prev2, prev = prev, cur
	}
	return prev[len(b)]
}

// hostOf extracts the lower-cased host of an href ("www.x.com/a" works too).
func hostOf(href string) string {
	h := href
	lower := strings.ToLower(h)
	if !strings.Contains(lower, "://") {
		if strings.HasPrefix(lower, "mailto:") || strings.HasPrefix(lower, "tel:") || strings.HasPrefix(lower, "#") || strings.HasPrefix(lower, "javascript:") || strings.HasPrefix(lower, "data:") {
			return ""
		}
		h = "http://" + h
	}
	u, err := url.Parse(h)
	if err != nil || u.Host == "" {
		return ""
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	return host
}

// findURLs finds URLs in text: explicit http(s) schemes, www. hosts, and
// bare domain/path forms ("irs-refunds.website/claim"). It is a linear
// scanner rather than a regexp: it runs on every message.
func findURLs(text string) []string {
	var out []string
	covered := 0 // text before this offset is inside a URL already found
	emit := func(start int) int {
		end := start
		for end < len(text) && !urlStop(text[end]) {
			end++
		}
		u := trimURL(text[start:end])
		if len(u) > 2048 {
			u = u[:2048]
		}
		if len(out) < 1000 {
			out = append(out, u)
		}
		return end
	}
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case i < covered:
			continue
		case (c == 'h' || c == 'H') && (i == 0 || !isAlnum(text[i-1])) && hasPrefixFold(text[i:], "http"):
			rest := text[i+4:]
			if strings.HasPrefix(rest, "://") || (len(rest) > 0 && (rest[0] == 's' || rest[0] == 'S') && strings.HasPrefix(rest[1:], "://")) {
				covered = emit(i)
			}
		case (c == 'w' || c == 'W') && (i == 0 || !isAlnum(text[i-1]) && text[i-1] != '/' && text[i-1] != '.') && hasPrefixFold(text[i:], "www."):
			covered = emit(i)
		case c == '/' && i > 0 && isLetter(text[i-1]):
			// A bare domain ending right before '/': back up over it.
			s := i
			for s > 0 && (isHostByte(text[s-1])) {
				s--
			}
			if s < covered || (s > 0 && (text[s-1] == '/' || text[s-1] == '@')) {
				continue
			}
			host := text[s:i]
			dot := strings.LastIndexByte(host, '.')
			if dot <= 0 || len(host)-dot-1 < 2 || len(host)-dot-1 > 24 || !allLetters(host[dot+1:]) || !isAlnum(host[0]) {
				continue
			}
			covered = emit(s)
		}
	}
	return out
}

// trimURL drops trailing sentence punctuation and closing parentheses that
// the URL did not open ("(see http://x.example/a)").
func trimURL(u string) string {
	for len(u) > 0 {
		switch c := u[len(u)-1]; {
		case strings.IndexByte(".,;:!?", c) >= 0:
			u = u[:len(u)-1]
		case c == ')' && strings.Count(u, ")") > strings.Count(u, "("):
			u = u[:len(u)-1]
		default:
			return u
		}
	}
	return u
}

func urlStop(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '\v', '<', '>', '"', '\'', '[', ']', '{', '}':
		return true
	}
	return false
}

func hasPrefixFold(s, p string) bool { return len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) }

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func isHostByte(c byte) bool {
	return isLetter(c) || c >= '0' && c <= '9' || c == '.' || c == '-'
}

func allLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isLetter(s[i]) {
			return false
		}
	}
	return true
}

// domainRe finds domain-like tokens in link text ("www.paypal.com").
var domainRe = regexp.MustCompile(`(?i)\b(?:https?://)?((?:[a-z0-9-]+\.)+[a-z]{2,24})\b`)

// displayedDomain returns the domain a link's visible text shows, if it
// shows one with a real public suffix.
func displayedDomain(text string) string {
	if len(text) > 256 || !strings.Contains(text, ".") {
		return ""
	}
	m := domainRe.FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	d := strings.ToLower(m[1])
	if _, icann := publicsuffix.PublicSuffix(d); !icann {
		return ""
	}
	return d
}

// isIPHost reports whether host is an IP literal, including the decimal and
// hex integer forms browsers accept.
func isIPHost(host string) bool {
	h := strings.Trim(host, "[]")
	if net.ParseIP(h) != nil {
		return true
	}
	if h == "" {
		return false
	}
	if strings.HasPrefix(h, "0x") {
		h = h[2:]
		for _, c := range h {
			if !strings.ContainsRune("0123456789abcdef", c) {
				return false
			}
		}
		return h != ""
	}
	for _, c := range h {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(h) >= 8
}
