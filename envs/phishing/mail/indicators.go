package mail

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
)

// Indicator types. Evidence in a model's answer names one of these.
const (
	TypeDisplayNameSpoof   = "display_name_spoof"
	TypeSenderLookalike    = "sender_lookalike"
	TypeReplyToMismatch    = "reply_to_mismatch"
	TypeReturnPathMismatch = "return_path_mismatch"
	TypeAuthFailure        = "auth_failure"
	TypeLookalikeDomain    = "lookalike_domain"
	TypeIPURL              = "ip_url"
	TypeShortener          = "url_shortener"
	TypeLinkMismatch       = "link_text_mismatch"
	TypeCredentialURL      = "credential_url"
	TypeCredentialForm     = "credential_form"
	TypeRiskyAttachment    = "risky_attachment"
	TypeDoubleExtension    = "double_extension"
	TypeCredentialRequest  = "credential_request"
	TypePaymentRequest     = "payment_request"
	TypeGiftCard           = "gift_card"
	TypeUrgency            = "urgency"
	TypeThreat             = "threat"
)

// Types lists every indicator type, sorted.
var Types = func() []string {
	t := []string{TypeDisplayNameSpoof, TypeSenderLookalike, TypeReplyToMismatch, TypeReturnPathMismatch,
		TypeAuthFailure, TypeLookalikeDomain, TypeIPURL, TypeShortener, TypeLinkMismatch, TypeCredentialURL,
		TypeCredentialForm, TypeRiskyAttachment, TypeDoubleExtension, TypeCredentialRequest,
		TypePaymentRequest, TypeGiftCard, TypeUrgency, TypeThreat}
	slices.Sort(t)
	return t
}()

// IsType reports whether t is a known indicator type.
func IsType(t string) bool {
	i := sort.SearchStrings(Types, t)
	return i < len(Types) && Types[i] == t
}

// Indicator is one red flag with the exact text it came from.
type Indicator struct {
	Type   string `json:"type"`
	Value  string `json:"value"`
	Detail string `json:"detail,omitempty"`
}

// Signals are facts that speak for legitimacy, used by the baseline.
type Signals struct {
	AuthPass    bool // SPF, DKIM and DMARC all pass, for whatever domains
	AuthPresent bool
	// AuthAligned: a verdict passes for the From domain itself (relaxed
	// alignment): DMARC pass, or an SPF or DKIM pass whose domain has the
	// From domain's registrable domain. An ESP's own signature (d=
	// sendgrid.net on a brand's From) is a pass, but not for the sender.
	AuthAligned bool
	// AuthTrusted is AuthAligned for a From domain that is neither a
	// look-alike nor free mail: attackers pass authentication for domains
	// they register, so only a pass for a sender worth trusting counts.
	AuthTrusted  bool
	LinksAligned bool // every link stays on the sender's (or its brand's) domains
	Links        int
	Attachments  int
}

// Analysis is a message with its indicators.
type Analysis struct {
	Msg        *Message
	Indicators []Indicator
	Signals    Signals
}

// Analyze parses raw and extracts its indicators.
func Analyze(raw string) *Analysis { return Extract(Parse(raw)) }

// Extract finds the indicators of a parsed message. It is deterministic:
// the same message always yields the same indicators in the same order.
func Extract(m *Message) *Analysis {
	x := &extractor{m: m, seen: map[string]bool{}}
	x.sender()
	x.auth()
	x.links()
	x.attachments()
	x.content()
	return &Analysis{Msg: m, Indicators: x.out, Signals: x.signals()}
}

type extractor struct {
	m    *Message
	out  []Indicator
	seen map[string]bool
	// senderSuspect marks a From domain that is itself a look-alike or free
	// mail, so links to it are not "aligned".
	senderSuspect bool
}

func (x *extractor) add(typ, value, detail string) {
	value = strings.TrimSpace(value)
	if value == "" {
		return
	}
	k := typ + "\x00" + strings.ToLower(value)
	if x.seen[k] {
		return
	}
	x.seen[k] = true
	x.out = append(x.out, Indicator{Type: typ, Value: value, Detail: detail})
}

func (x *extractor) recipientDomains() []string {
	var ds []string
	for _, a := range x.m.To {
		if a.Domain != "" && !IsFreemail(a.Domain) && BrandOf(a.Domain) == nil {
			ds = append(ds, a.Domain)
		}
	}
	return ds
}

func (x *extractor) sender() {
	m := x.m
	if !m.HasFrom {
		return
	}
	from := m.From
	fromReg := Registrable(from.Domain)
	if from.Domain != "" {
		if la, ok := CheckLookalike(from.Domain, x.recipientDomains()...); ok {
			x.add(TypeSenderLookalike, from.Addr, fmt.Sprintf("%s imitates %s (%s)", from.Domain, la.Brand, la.How))
			x.senderSuspect = true
		}
	}
	if IsFreemail(from.Domain) {
		x.senderSuspect = true
	}
	name := strings.ToLower(from.Name)
	if name != "" {
		// A display name that is itself an address on another domain.
		if i := strings.IndexByte(name, '@'); i > 0 {
			nd := strings.Trim(name[i+1:], " >\"'")
			if nd != "" && Registrable(nd) != fromReg {
				x.add(TypeDisplayNameSpoof, from.Name, "display name shows address on "+nd)
			}
		}
		owner := BrandOf(from.Domain)
		for i := range Brands {
			b := &Brands[i]
			if owner == b {
				continue
			}
			for _, w := range b.Words {
				if containsWord(name, w) {
					x.add(TypeDisplayNameSpoof, from.Name, fmt.Sprintf("display name names %s, address is on %s", b.Name, from.Domain))
				}
			}
		}
		if IsFreemail(from.Domain) {
			for _, w := range roleWords {
				if containsWord(name, w) {
					x.add(TypeDisplayNameSpoof, from.Name, fmt.Sprintf("display name claims role %q from free mail %s", w, from.Domain))
					break
				}
			}
		}
	}
	for _, rt := range m.ReplyTo {
		if rt.Domain != "" && fromReg != "" && Registrable(rt.Domain) != fromReg && !sameBrand(rt.Domain, from.Domain) {
			x.add(TypeReplyToMismatch, rt.Addr, "Reply-To domain differs from From ("+from.Domain+")")
		}
	}
	if rp := m.ReturnPath; rp != "" && fromReg != "" {
		if i := strings.LastIndexByte(rp, '@'); i >= 0 {
			d := rp[i+1:]
			if Registrable(d) != fromReg && !sameBrand(d, from.Domain) && !bounceService(d) {
				x.add(TypeReturnPathMismatch, rp, "Return-Path domain differs from From ("+from.Domain+")")
			}
		}
	}
}

// bounceService lists mail providers whose bounce domains legitimately
// differ from From.
func bounceService(d string) bool {
	return tracking[Registrable(d)]
}

func sameBrand(a, b string) bool {
	ba := BrandOf(a)
	return ba != nil && ba == BrandOf(b)
}

func containsWord(s, w string) bool {
	i := 0
	for {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		st, en := i+j, i+j+len(w)
		if (st == 0 || !isAlnum(s[st-1])) && (en == len(s) || !isAlnum(s[en])) {
			return true
		}
		i = st + 1
	}
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

func (x *extractor) auth() {
	a := x.m.Auth
	for _, k := range []struct{ name, v string }{{"spf", a.SPF}, {"dkim", a.DKIM}, {"dmarc", a.DMARC}} {
		switch k.v {
		case "fail", "softfail", "permerror", "temperror":
			x.add(TypeAuthFailure, a.Spans[k.name], k.name+" "+k.v)
		}
	}
}

func (x *extractor) trustedHost(host string) bool {
	reg := Registrable(host)
	if BrandOf(host) != nil {
		return true
	}
	if x.m.HasFrom && !x.senderSuspect && reg == Registrable(x.m.From.Domain) {
		return true
	}
	return false
}

func (x *extractor) links() {
	for _, l := range x.m.Links {
		host := l.Host
		switch {
		case isIPHost(host):
			x.add(TypeIPURL, l.Href, "link host is an IP address")
		default:
			if la, ok := CheckLookalike(host, x.recipientDomains()...); ok {
				x.add(TypeLookalikeDomain, l.Href, fmt.Sprintf("%s imitates %s (%s)", host, la.Brand, la.How))
			}
			if IsShortener(host) {
				x.add(TypeShortener, l.Href, "URL shortener hides the destination")
			}
		}
		if l.FromHTML && l.Text != "" {
			if shown := displayedDomain(l.Text); shown != "" && Registrable(shown) != Registrable(host) {
				x.add(TypeLinkMismatch, l.Href, fmt.Sprintf("text shows %s, link goes to %s", shown, host))
			}
		}
		if !x.trustedHost(host) && hasLoginPath(l.Href) {
			x.add(TypeCredentialURL, l.Href, "login/verification path on an untrusted host")
		}
	}
	for _, f := range x.m.Forms {
		if f.HasPassword {
			v := f.Action
			if v == "" {
				v = f.Field
			}
			x.add(TypeCredentialForm, v, "HTML form asks for a password")
		}
	}
}

func hasLoginPath(href string) bool {
	h := strings.ToLower(href)
	if i := strings.Index(h, "://"); i >= 0 {
		h = h[i+3:]
	}
	i := strings.IndexByte(h, '/')
	if i < 0 {
		return false
	}
	p := h[i:]
	for _, lp := range loginPaths {
		if strings.Contains(p, lp) {
			return true
		}
	}
	return strings.Contains(p, "login") && strings.Contains(p, ".php")
}

func (x *extractor) attachments() {
	for _, a := range x.m.Attachments {
		name := strings.ToLower(strings.TrimSpace(a.Filename))
		if name == "" {
			continue
		}
		ext := strings.TrimPrefix(path.Ext(name), ".")
		inner := strings.TrimPrefix(path.Ext(strings.TrimSuffix(name, "."+ext)), ".")
		switch {
		case riskyExt[ext] && docExt[strings.TrimSpace(inner)]:
			x.add(TypeDoubleExtension, a.Filename, fmt.Sprintf("looks like .%s but is .%s", inner, ext))
		case riskyExt[ext]:
			x.add(TypeRiskyAttachment, a.Filename, "risky attachment type ."+ext)
		case strings.Contains(name, "      "):
			x.add(TypeDoubleExtension, a.Filename, "padding hides the real extension")
		}
	}
}

func (x *extractor) content() {
	text := collapse(x.m.Subject + "\n" + x.m.Text)
	lower := strings.ToLower(text)
	sameLen := len(lower) == len(text)
	// One pass over the words of the text: each word start is looked up
	// among the phrases' first words, so the cost does not grow with the
	// number of phrases. The first occurrence of each phrase is kept.
	hits := map[string]int{}
	for i := 0; i < len(lower); {
		if !isAlnum(lower[i]) {
			i++
			continue
		}
		j := i
		for j < len(lower) && isAlnum(lower[j]) {
			j++
		}
		for _, ph := range phraseIndex[lower[i:j]] {
			if _, ok := hits[ph.text]; !ok && strings.HasPrefix(lower[i:], ph.text) {
				hits[ph.text] = i
			}
		}
		i = j
	}
	for _, ph := range phraseList {
		i, ok := hits[ph.text]
		if !ok {
			continue
		}
		v := ph.text
		if sameLen {
			v = text[i : i+len(ph.text)]
		}
		x.add(ph.typ, v, "")
	}
}

type phrase struct{ typ, text string }

// phraseList holds every phrase in a fixed order (type order, then list
// order) so indicators come out deterministically; phraseIndex maps a
// phrase's first word to the phrases starting with it.
var phraseList, phraseIndex = func() ([]phrase, map[string][]phrase) {
	var list []phrase
	idx := map[string][]phrase{}
	for _, typ := range []string{TypeCredentialRequest, TypePaymentRequest, TypeGiftCard, TypeUrgency, TypeThreat} {
		for _, t := range phrases[typ] {
			p := phrase{typ, t}
			list = append(list, p)
			j := 0
			for j < len(t) && isAlnum(t[j]) {
				j++
			}
			idx[t[:j]] = append(idx[t[:j]], p)
		}
	}
	return list, idx
}()

func (x *extractor) signals() Signals {
	m := x.m
	s := Signals{Links: len(m.Links), Attachments: len(m.Attachments)}
	s.AuthPresent = m.Auth.SPF != "" || m.Auth.DKIM != "" || m.Auth.DMARC != ""
	s.AuthPass = m.Auth.SPF == "pass" && m.Auth.DKIM == "pass" && m.Auth.DMARC == "pass"
	s.AuthAligned = m.HasFrom && authAligned(m.Auth, m.From.Domain)
	s.AuthTrusted = s.AuthAligned && !x.senderSuspect
	if len(m.Links) > 0 && m.HasFrom && !x.senderSuspect {
		s.LinksAligned = true
		for _, l := range m.Links {
			if !x.trustedHost(l.Host) {
				s.LinksAligned = false
				break
			}
		}
	}
	return s
}

// authAligned reports whether a passing verdict speaks for from. DMARC
// passes only on alignment, so its pass counts unless it names another
// header.from, and its fail overrides SPF or DKIM passes from another hop;
// SPF and DKIM count only for a domain that is shown.
func authAligned(a AuthResults, from string) bool {
	reg := Registrable(from)
	if reg == "" || a.DMARC == "fail" {
		return false
	}
	aligned := func(method, verdict string) bool {
		d, ok := a.Domains[method]
		return verdict == "pass" && ok && Registrable(d) == reg
	}
	if a.DMARC == "pass" {
		if _, named := a.Domains["dmarc"]; !named || aligned("dmarc", a.DMARC) {
			return true
		}
	}
	return aligned("dkim", a.DKIM) || aligned("spf", a.SPF)
}
