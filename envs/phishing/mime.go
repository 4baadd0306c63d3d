package phishing

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"strings"
	"time"

	"golang.org/x/text/encoding/charmap"
)

// draft is an email before rendering to RFC 5322.
type draft struct {
	fromName, fromAddr string
	to                 string
	replyTo            string
	returnPath         string
	subject            string
	auth               string // Authentication-Results value, "" = header absent
	date               time.Time
	msgID              string
	text, html         string
	attachments        []attachment
	charset            string // utf-8 or iso-8859-1
	encoding           string // quoted-printable, base64, 8bit
	mailer             string
	listID             string // List-Id of a mailing list that relayed it
}

type attachment struct {
	name, ctype string
	data        []byte
}

// render writes the message with CRLF line ends, as on the wire.
func (d draft) render() string {
	var b strings.Builder
	h := func(k, v string) { fmt.Fprintf(&b, "%s: %s\r\n", k, v) }
	if d.returnPath != "" {
		h("Return-Path", "<"+d.returnPath+">")
	}
	if d.auth != "" {
		h("Authentication-Results", fold("mx.svbench.example;\r\n\t"+d.auth))
	}
	h("Date", d.date.Format(time.RFC1123Z))
	h("From", addr(d.fromName, d.fromAddr))
	h("To", d.to)
	if d.replyTo != "" {
		h("Reply-To", d.replyTo)
	}
	h("Subject", encodeWord(d.subject))
	h("Message-ID", "<"+d.msgID+">")
	if d.mailer != "" {
		h("X-Mailer", d.mailer)
	}
	if d.listID != "" {
		h("List-Id", d.listID)
	}
	h("MIME-Version", "1.0")
	body := d.body()
	b.WriteString(body)
	return b.String()
}

func fold(s string) string { return s }

func addr(name, a string) string {
	if name == "" {
		return a
	}
	for _, r := range name {
		if r >= 0x80 {
			// In a phrase an encoded word may not carry "(", ")" or '"'
			// literally (RFC 2047 5(3)): a parser reads "(Nómina)" as a
			// comment and loses it. mime.QEncoding leaves them as they are.
			return phraseSafe.Replace(mime.QEncoding.Encode("utf-8", name)) + " <" + a + ">"
		}
	}
	if strings.ContainsAny(name, `,.;:@"()<>`) {
		return `"` + strings.ReplaceAll(name, `"`, `\"`) + `" <` + a + ">"
	}
	return name + " <" + a + ">"
}

var phraseSafe = strings.NewReplacer("(", "=28", ")", "=29", `"`, "=22", ",", "=2C")

func encodeWord(s string) string {
	for _, r := range s {
		if r >= 0x80 {
			return mime.QEncoding.Encode("utf-8", s)
		}
	}
	return s
}

// body renders the MIME structure: text, text+HTML alternative, and a
// mixed wrapper when there are attachments.
func (d draft) body() string {
	var content string // headers + body of the main (non-attachment) part
	switch {
	case d.html != "" && d.text != "":
		bd := boundary(d.msgID, "alt")
		var b strings.Builder
		fmt.Fprintf(&b, "Content-Type: multipart/alternative; boundary=\"%s\"\r\n\r\n", bd)
		fmt.Fprintf(&b, "--%s\r\n%s", bd, d.textPart("text/plain", d.text))
		fmt.Fprintf(&b, "--%s\r\n%s", bd, d.textPart("text/html", d.html))
		fmt.Fprintf(&b, "--%s--\r\n", bd)
		content = b.String()
	case d.html != "":
		content = d.textPart("text/html", d.html)
	default:
		content = d.textPart("text/plain", d.text)
	}
	if len(d.attachments) == 0 {
		return content
	}
	bd := boundary(d.msgID, "mix")
	var b strings.Builder
	fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=\"%s\"\r\n\r\nThis is a multi-part message in MIME format.\r\n", bd)
	fmt.Fprintf(&b, "--%s\r\n%s", bd, content)
	for _, a := range d.attachments {
		fmt.Fprintf(&b, "--%s\r\nContent-Type: %s; name=\"%s\"\r\nContent-Disposition: attachment; filename=\"%s\"\r\nContent-Transfer-Encoding: base64\r\n\r\n",
			bd, a.ctype, a.name, a.name)
		enc := base64.StdEncoding.EncodeToString(a.data)
		for len(enc) > 76 {
			b.WriteString(enc[:76] + "\r\n")
			enc = enc[76:]
		}
		b.WriteString(enc + "\r\n")
	}
	fmt.Fprintf(&b, "--%s--\r\n", bd)
	return b.String()
}

func boundary(id, kind string) string {
	return "=_" + kind + "_" + strings.NewReplacer("@", "_", ".", "_").Replace(id)
}

// textPart renders one text part with its headers, in the draft's charset
// and transfer encoding.
func (d draft) textPart(ctype, s string) string {
	s = strings.ReplaceAll(s, "\n", "\r\n")
	charset := "utf-8"
	raw := []byte(s)
	if d.charset == "iso-8859-1" {
		if enc, err := charmap.ISO8859_1.NewEncoder().String(s); err == nil {
			charset, raw = "iso-8859-1", []byte(enc)
		}
	}
	ascii := true
	for _, c := range raw {
		if c >= 0x80 {
			ascii = false
			break
		}
	}
	cte := d.encoding
	if ascii && cte == "8bit" {
		cte = "7bit"
	}
	var body string
	switch cte {
	case "base64":
		enc := base64.StdEncoding.EncodeToString(raw)
		var b strings.Builder
		for len(enc) > 76 {
			b.WriteString(enc[:76] + "\r\n")
			enc = enc[76:]
		}
		b.WriteString(enc + "\r\n")
		body = b.String()
	case "quoted-printable":
		var buf bytes.Buffer
		w := quotedprintable.NewWriter(&buf)
		_, _ = w.Write(raw)
		_ = w.Close()
		body = buf.String() + "\r\n"
	default:
		body = string(raw) + "\r\n"
	}
	return fmt.Sprintf("Content-Type: %s; charset=%s\r\nContent-Transfer-Encoding: %s\r\n\r\n%s", ctype, charset, cte, body)
}
