// Package mail turns a raw email (RFC 5322, MIME multipart, any charset)
// into a deterministic, bounded view — addresses, authentication results,
// visible text, links with their displayed text, forms and attachments — and
// extracts phishing indicators from it, each tied to the exact text it came
// from so a model's evidence can be checked against the message.
//
// Parsing never fails: hostile or broken input (bad boundaries, unknown
// charsets, huge attachments, deep nesting) yields a best-effort view plus
// Notes saying what was skipped, and the work done is bounded by Limits.
package mail

import (
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	netmail "net/mail"
	"net/textproto"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/htmlindex"

	"github.com/svbench/svbench/base/clip"
)

// Limits bound the work one message may cost.
type Limits struct {
	// MaxBytes is the most of the raw message read; the rest is dropped with a note.
	MaxBytes int
	// MaxParts bounds MIME parts visited across all levels.
	MaxParts int
	// MaxDepth bounds multipart / message/rfc822 nesting.
	MaxDepth int
	// MaxTextBytes bounds the decoded visible text kept for the whole message.
	MaxTextBytes int
	// MaxPartBytes is the largest text part decoded; larger ones are sized only.
	MaxPartBytes int64
	// MaxLinks bounds the links kept.
	MaxLinks int
}

// DefaultLimits suit mail as found in the wild: a 25 MB attachment is
// sized, never decoded.
func DefaultLimits() Limits {
	return Limits{
		MaxBytes:     32 << 20,
		MaxParts:     200,
		MaxDepth:     8,
		MaxTextBytes: 1 << 20,
		MaxPartBytes: 2 << 20,
		MaxLinks:     500,
	}
}

// Address is a parsed mailbox. Domain is lower-cased.
type Address struct {
	Name   string `json:"name,omitempty"`
	Addr   string `json:"addr"`
	Domain string `json:"domain"`
	// Raw is the header value as written (decoded from RFC 2047).
	Raw string `json:"raw,omitempty"`
}

// Link is one URL found in the message. Text is the anchor's visible text
// for HTML links ("" for URLs found in plain text).
type Link struct {
	Href     string `json:"href"`
	Text     string `json:"text,omitempty"`
	Host     string `json:"host"`
	FromHTML bool   `json:"from_html,omitempty"`
}

// Form is an HTML form; credential forms in mail are a phishing hallmark.
type Form struct {
	Action      string `json:"action"`
	HasPassword bool   `json:"has_password"`
	// Field is the name of the password (or first) input, for evidence.
	Field string `json:"field,omitempty"`
}

// Attachment is a non-text part. Size is the decoded size (estimated for
// base64 without decoding).
type Attachment struct {
	Filename    string `json:"filename"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
}

// AuthResults holds the verdicts of Authentication-Results headers:
// "pass", "fail", "softfail", "none", … or "" when absent.
type AuthResults struct {
	SPF   string `json:"spf,omitempty"`
	DKIM  string `json:"dkim,omitempty"`
	DMARC string `json:"dmarc,omitempty"`
	// Spans are the "method=result" texts as written, for evidence.
	Spans map[string]string `json:"-"`
	// Domains are the domains the kept verdicts speak for, lower case:
	// dkim header.d (or header.i's domain), spf smtp.mailfrom's domain,
	// dmarc header.from. A pass says only that this domain sent the mail,
	// so whether it is the From domain decides what the pass is worth.
	Domains map[string]string `json:"-"`
}

// Message is the parsed view of one email.
type Message struct {
	// HeaderOK is false when no RFC 5322 header block could be read and the
	// whole input was treated as body text.
	HeaderOK    bool         `json:"header_ok"`
	From        Address      `json:"from"`
	HasFrom     bool         `json:"has_from"`
	ReplyTo     []Address    `json:"reply_to,omitempty"`
	ReturnPath  string       `json:"return_path,omitempty"`
	To          []Address    `json:"to,omitempty"`
	Subject     string       `json:"subject,omitempty"`
	Auth        AuthResults  `json:"auth"`
	Text        string       `json:"text"`
	Links       []Link       `json:"links,omitempty"`
	Forms       []Form       `json:"forms,omitempty"`
	Attachments []Attachment `json:"attachments,omitempty"`
	Parts       int          `json:"parts"`
	Notes       []string     `json:"notes,omitempty"`
	// HeaderText is the decoded header block (name: value lines), searchable
	// for evidence.
	HeaderText string `json:"-"`
}

const maxNotes = 32

type parser struct {
	lim  Limits
	m    *Message
	text strings.Builder
	seen map[string]bool // link hrefs already kept
}

func (p *parser) note(format string, args ...any) {
	if len(p.m.Notes) < maxNotes {
		p.m.Notes = append(p.m.Notes, fmt.Sprintf(format, args...))
	}
}

// Parse reads one message with DefaultLimits.
func Parse(raw string) *Message { return ParseLimits(raw, DefaultLimits()) }

// ParseLimits reads one message. It never fails; problems become Notes.
func ParseLimits(raw string, lim Limits) *Message {
	p := &parser{lim: lim, m: &Message{}, seen: map[string]bool{}}
	if lim.MaxBytes > 0 && len(raw) > lim.MaxBytes {
		p.note("message is %d bytes; only the first %d were read", len(raw), lim.MaxBytes)
		raw = raw[:lim.MaxBytes]
	}
	msg, err := netmail.ReadMessage(strings.NewReader(raw))
	if err != nil || len(msg.Header) == 0 {
		if err != nil {
			p.note("no readable header block (%v); treated the input as body text", trimErr(err))
		}
		p.m.HeaderOK = false
		p.addText(raw, false)
		p.finish()
		return p.m
	}
	p.m.HeaderOK = true
	p.readHeaders(msg.Header)
	p.walk(textproto.MIMEHeader(msg.Header), msg.Body, 0)
	p.finish()
	return p.m
}

func trimErr(err error) string { return clip.Bytes(err.Error(), 120, clip.Ellipsis) }

func (p *parser) finish() {
	p.m.Text = p.text.String()
	// Plain-text URLs are found after all parts are read so HTML anchors
	// (which carry display text) win over the same URL seen as text.
	for _, u := range findURLs(p.m.Text) {
		p.addLink(u, "", false)
	}
}

var wordDecoder = &mime.WordDecoder{CharsetReader: charsetReader}

func charsetReader(charset string, input io.Reader) (io.Reader, error) {
	enc, err := htmlindex.Get(charset)
	if err != nil {
		return nil, err
	}
	return enc.NewDecoder().Reader(input), nil
}

func decodeHeader(v string) string {
	d, err := wordDecoder.DecodeHeader(v)
	if err != nil {
		d = v
	}
	return strings.ToValidUTF8(d, "\uFFFD")
}

func (p *parser) readHeaders(h netmail.Header) {
	var hb strings.Builder
	for _, k := range []string{"From", "Sender", "Reply-To", "Return-Path", "To", "Subject", "Authentication-Results"} {
		for _, v := range h[k] {
			fmt.Fprintf(&hb, "%s: %s\n", k, decodeHeader(v))
		}
	}
	p.m.HeaderText = hb.String()
	if v := h.Get("From"); v != "" {
		p.m.From, p.m.HasFrom = parseAddress(v), true
	} else {
		p.note("no From header")
	}
	for _, v := range h["Reply-To"] {
		for _, a := range parseAddressList(v) {
			p.m.ReplyTo = append(p.m.ReplyTo, a)
		}
	}
	if v := h.Get("Return-Path"); v != "" {
		rp := strings.Trim(strings.TrimSpace(v), "<>")
		p.m.ReturnPath = strings.ToLower(rp)
	}
	for _, v := range h["To"] {
		p.m.To = append(p.m.To, parseAddressList(v)...)
	}
	p.m.Subject = decodeHeader(h.Get("Subject"))
	p.m.Auth = parseAuthResults(h["Authentication-Results"])
}

func parseAddress(v string) Address {
	dec := decodeHeader(v)
	a, err := (&netmail.AddressParser{WordDecoder: wordDecoder}).Parse(v)
	if err != nil {
		return lenientAddress(dec)
	}
	return mkAddress(a.Name, a.Address, dec)
}

func parseAddressList(v string) []Address {
	dec := decodeHeader(v)
	list, err := (&netmail.AddressParser{WordDecoder: wordDecoder}).ParseList(v)
	if err != nil {
		return []Address{lenientAddress(dec)}
	}
	out := make([]Address, 0, len(list))
	for _, a := range list {
		out = append(out, mkAddress(a.Name, a.Address, dec))
	}
	return out
}

func mkAddress(name, addr, raw string) Address {
	addr = strings.TrimSpace(addr)
	dom := ""
	if i := strings.LastIndexByte(addr, '@'); i >= 0 {
		dom = strings.ToLower(strings.TrimSuffix(addr[i+1:], "."))
	}
	return Address{Name: strings.TrimSpace(name), Addr: addr, Domain: dom, Raw: raw}
}

// lenientAddress salvages "Name <addr>" or a bare token with '@' from a
// header net/mail rejects (unquoted specials, missing brackets).
func lenientAddress(v string) Address {
	if i, j := strings.LastIndexByte(v, '<'), strings.LastIndexByte(v, '>'); i >= 0 && j > i {
		name := strings.Trim(strings.TrimSpace(v[:i]), `"`)
		return mkAddress(name, v[i+1:j], v)
	}
	for _, f := range strings.Fields(v) {
		if strings.Contains(f, "@") {
			return mkAddress("", strings.Trim(f, "<>,;\"'"), v)
		}
	}
	return Address{Name: strings.TrimSpace(v), Raw: v}
}

func parseAuthResults(values []string) AuthResults {
	var ar AuthResults
	for _, v := range values {
		for _, clause := range strings.Split(v, ";") {
			// kept is the method whose verdict this clause set; its
			// properties (header.d=…) follow the verdict in the clause.
			kept := ""
			for _, field := range strings.Fields(clause) {
				k, val, ok := strings.Cut(field, "=")
				if !ok {
					continue
				}
				k = strings.ToLower(k)
				val = strings.ToLower(strings.Trim(val, "()"))
				if kept != "" && (k == authProperty[kept] || kept == "dkim" && k == "header.i") {
					if d := strings.Trim(val[strings.LastIndexByte(val, '@')+1:], "<>\"'"); d != "" {
						if _, set := ar.Domains[kept]; !set || k == authProperty[kept] {
							ar.Domains[kept] = d
						}
					}
					continue
				}
				var dst *string
				switch k {
				case "spf":
					dst = &ar.SPF
				case "dkim":
					dst = &ar.DKIM
				case "dmarc":
					dst = &ar.DMARC
				default:
					continue
				}
				// A failing verdict wins over a passing one from another hop.
				if *dst == "" || (*dst == "pass" && val != "pass") {
					*dst = val
					if ar.Spans == nil {
						ar.Spans = map[string]string{}
						ar.Domains = map[string]string{}
					}
					ar.Spans[k] = field
					delete(ar.Domains, k)
					kept = k
				}
			}
		}
	}
	return ar
}

// authProperty is the property naming the domain each method's verdict is
// for (RFC 8601 ptype.property).
var authProperty = map[string]string{"dkim": "header.d", "spf": "smtp.mailfrom", "dmarc": "header.from"}

func (p *parser) walk(h textproto.MIMEHeader, body io.Reader, depth int) {
	p.m.Parts++
	ctype := h.Get("Content-Type")
	media, params := "text/plain", map[string]string{}
	if ctype != "" {
		mt, ps, err := mime.ParseMediaType(ctype)
		switch {
		case err == nil:
			media, params = mt, ps
		case mt != "":
			// ParseMediaType returns the type with ErrInvalidMediaParameter.
			media, params = mt, ps
			p.note("content-type %q has invalid parameters", clip.Bytes(ctype, 80, clip.Ellipsis))
		default:
			p.note("unreadable content-type %q; treated as text/plain", clip.Bytes(ctype, 80, clip.Ellipsis))
		}
	}
	switch {
	case strings.HasPrefix(media, "multipart/"):
		p.walkMultipart(body, params["boundary"], depth)
	case media == "message/rfc822":
		if depth+1 > p.lim.MaxDepth {
			p.note("nested message beyond depth %d skipped", p.lim.MaxDepth)
			drain(body)
			return
		}
		inner, err := netmail.ReadMessage(io.LimitReader(body, int64(p.lim.MaxBytes)))
		if err != nil {
			p.note("attached message unreadable: %v", trimErr(err))
			return
		}
		p.walk(textproto.MIMEHeader(inner.Header), inner.Body, depth+1)
	default:
		p.leaf(h, media, params, body)
	}
}

func (p *parser) walkMultipart(body io.Reader, boundary string, depth int) {
	if depth+1 > p.lim.MaxDepth {
		p.note("multipart nesting beyond depth %d skipped", p.lim.MaxDepth)
		drain(body)
		return
	}
	if boundary == "" {
		p.note("multipart without boundary; body read as text")
		p.readText(body, "text/plain", nil, "")
		return
	}
	mr := multipart.NewReader(body, boundary)
	n := 0
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			p.note("malformed multipart (boundary %q): %v", clip.Bytes(boundary, 40, clip.Ellipsis), trimErr(err))
			break
		}
		if p.m.Parts >= p.lim.MaxParts {
			p.note("more than %d MIME parts; the rest were skipped", p.lim.MaxParts)
			break
		}
		n++
		p.walk(part.Header, part, depth+1)
	}
	if n == 0 {
		p.note("multipart body has no part delimited by boundary %q", clip.Bytes(boundary, 40, clip.Ellipsis))
	}
}

func (p *parser) leaf(h textproto.MIMEHeader, media string, params map[string]string, body io.Reader) {
	filename := ""
	disp, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	if dparams != nil {
		filename = dparams["filename"]
	}
	if filename == "" {
		filename = params["name"]
	}
	filename = decodeHeader(filename)
	cte := strings.ToLower(strings.TrimSpace(h.Get("Content-Transfer-Encoding")))
	isText := media == "text/plain" || media == "text/html"
	if disp == "attachment" || filename != "" || !isText {
		p.attachment(filename, media, cte, body)
		return
	}
	p.readText(body, media, params, cte)
}

// attachment sizes a part without keeping it: the bytes stream through a
// counter, so a 25 MB attachment costs one pass and no memory.
func (p *parser) attachment(filename, media, cte string, body io.Reader) {
	n, _ := io.Copy(io.Discard, body)
	size := n
	if cte == "base64" {
		size = n * 3 / 4
	}
	p.m.Attachments = append(p.m.Attachments, Attachment{Filename: filename, ContentType: media, Size: size})
}

func (p *parser) readText(body io.Reader, media string, params map[string]string, cte string) {
	switch cte {
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, &skipSpace{r: body})
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	}
	buf, err := io.ReadAll(io.LimitReader(body, p.lim.MaxPartBytes+1))
	if err != nil {
		p.note("%s part partly undecodable (%s): %v", media, cte, trimErr(err))
	}
	if int64(len(buf)) > p.lim.MaxPartBytes {
		p.note("%s part larger than %d bytes; only the start was read", media, p.lim.MaxPartBytes)
		buf = buf[:p.lim.MaxPartBytes]
		drain(body)
	}
	s := p.decodeCharset(buf, params["charset"])
	if media == "text/html" {
		p.html(s)
		return
	}
	p.addText(s, false)
}

func (p *parser) decodeCharset(buf []byte, charset string) string {
	cs := strings.ToLower(strings.TrimSpace(charset))
	switch cs {
	case "", "utf-8", "utf8", "us-ascii", "ascii":
		if !utf8.Valid(buf) {
			if cs != "" && cs != "utf-8" && cs != "utf8" {
				return strings.ToValidUTF8(string(buf), "\uFFFD")
			}
			// Undeclared 8-bit text is most often Latin-1 / Windows-1252.
			if enc, err := htmlindex.Get("windows-1252"); err == nil {
				if s, err := enc.NewDecoder().Bytes(buf); err == nil {
					p.note("text is not valid UTF-8; decoded as windows-1252")
					return string(s)
				}
			}
			return strings.ToValidUTF8(string(buf), "\uFFFD")
		}
		return string(buf)
	}
	enc, err := htmlindex.Get(cs)
	if err != nil {
		p.note("unknown charset %q; decoded as UTF-8 with replacement characters", clip.Bytes(charset, 40, clip.Ellipsis))
		return strings.ToValidUTF8(string(buf), "\uFFFD")
	}
	out, err := enc.NewDecoder().Bytes(buf)
	if err != nil {
		p.note("charset %q decoding failed; decoded as UTF-8 with replacement characters", clip.Bytes(charset, 40, clip.Ellipsis))
		return strings.ToValidUTF8(string(buf), "\uFFFD")
	}
	return strings.ToValidUTF8(string(out), "\uFFFD")
}

func (p *parser) addText(s string, _ bool) {
	room := p.lim.MaxTextBytes - p.text.Len()
	if room <= 0 {
		if s != "" {
			p.note("visible text beyond %d bytes dropped", p.lim.MaxTextBytes)
		}
		return
	}
	if len(s) > room {
		p.note("visible text beyond %d bytes dropped", p.lim.MaxTextBytes)
		s = strings.ToValidUTF8(s[:room], "")
	}
	if p.text.Len() > 0 {
		p.text.WriteByte('\n')
	}
	p.text.WriteString(s)
}

func (p *parser) addLink(href, text string, fromHTML bool) {
	href = strings.TrimSpace(href)
	if href == "" || p.seen[href] {
		return
	}
	if len(p.m.Links) >= p.lim.MaxLinks {
		if len(p.m.Links) == p.lim.MaxLinks {
			p.note("more than %d links; the rest were ignored", p.lim.MaxLinks)
			p.seen[""] = true
		}
		return
	}
	host := hostOf(href)
	if host == "" {
		return
	}
	p.seen[href] = true
	p.m.Links = append(p.m.Links, Link{Href: href, Text: text, Host: host, FromHTML: fromHTML})
}

type skipSpace struct{ r io.Reader }

func (s *skipSpace) Read(b []byte) (int, error) {
	for {
		n, err := s.r.Read(b)
		j := 0
		for _, c := range b[:n] {
			if c != '\r' && c != '\n' && c != ' ' && c != '\t' {
				b[j] = c
				j++
			}
		}
		if j > 0 || err != nil {
			return j, err
		}
	}
}

func drain(r io.Reader) { _, _ = io.Copy(io.Discard, r) }
