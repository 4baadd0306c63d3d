package mail

import (
	"strconv"
	"strings"

	xhtml "golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// html renders an HTML body to visible text, keeping every anchor's href
// with its visible text and every form, and dropping script, style and
// inline data: images (which can be megabytes of base64). Character
// references are decoded exactly once, by the tokenizer.
func (p *parser) html(src string) {
	z := xhtml.NewTokenizer(strings.NewReader(src))
	var out strings.Builder
	skip := 0 // depth inside script/style/head-only elements
	var anchor *Link
	var anchorText strings.Builder
	var form *Form
	for {
		tt := z.Next()
		switch tt {
		case xhtml.ErrorToken:
			if anchor != nil {
				p.addLink(anchor.Href, collapse(anchorText.String()), true)
			}
			if form != nil {
				p.m.Forms = append(p.m.Forms, *form)
			}
			p.addText(out.String(), true)
			return
		case xhtml.TextToken:
			if skip > 0 {
				continue
			}
			// Text already decodes character references (as TagAttr
			// does for attribute values): decoding again would turn the
			// source "AT&amp;amp;T" into "AT&T" instead of "AT&amp;T".
			t := string(z.Text())
			out.WriteString(t)
			if anchor != nil && anchorText.Len() < 2048 {
				anchorText.WriteString(t)
			}
		case xhtml.StartTagToken, xhtml.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			a := atom.Lookup(name)
			switch a {
			case atom.Script, atom.Style, atom.Noscript, atom.Template:
				if tt == xhtml.StartTagToken {
					skip++
				}
				continue
			case atom.Br, atom.P, atom.Div, atom.Tr, atom.Li, atom.H1, atom.H2, atom.H3, atom.Table:
				out.WriteByte('\n')
			}
			attrs := readAttrs(z, hasAttr)
			switch a {
			case atom.A:
				if anchor != nil {
					p.addLink(anchor.Href, collapse(anchorText.String()), true)
				}
				anchor, anchorText = nil, strings.Builder{}
				if h := attrs["href"]; h != "" && !strings.HasPrefix(strings.ToLower(h), "mailto:") {
					anchor = &Link{Href: h}
				}
			case atom.Img:
				if n, _ := strconv.Atoi(attrs["src_len"]); n > 4096 && strings.HasPrefix(strings.ToLower(attrs["src"]), "data:") {
					p.note("inline data: image of %d bytes dropped", n)
				}
			case atom.Form:
				if form != nil {
					p.m.Forms = append(p.m.Forms, *form)
				}
				form = &Form{Action: attrs["action"]}
				if form.Action != "" {
					p.addLink(form.Action, "", true)
				}
			case atom.Input:
				if form == nil {
					form = &Form{}
				}
				if strings.EqualFold(attrs["type"], "password") {
					form.HasPassword = true
					form.Field = attrs["name"]
				} else if form.Field == "" {
					form.Field = attrs["name"]
				}
			}
		case xhtml.EndTagToken:
			name, _ := z.TagName()
			switch atom.Lookup(name) {
			case atom.Script, atom.Style, atom.Noscript, atom.Template:
				if skip > 0 {
					skip--
				}
			case atom.A:
				if anchor != nil {
					p.addLink(anchor.Href, collapse(anchorText.String()), true)
					anchor = nil
				}
			case atom.Form:
				if form != nil {
					p.m.Forms = append(p.m.Forms, *form)
					form = nil
				}
			case atom.P, atom.Div, atom.Tr, atom.Li, atom.Table:
				out.WriteByte('\n')
			}
		}
	}
}

// readAttrs keeps the attributes the renderer needs; values are capped so a
// megabyte data: URI is measured, not copied around.
func readAttrs(z *xhtml.Tokenizer, more bool) map[string]string {
	var m map[string]string
	for more {
		var k, v []byte
		k, v, more = z.TagAttr()
		vfull := v
		switch string(k) {
		case "href", "action", "type", "name":
			if m == nil {
				m = map[string]string{}
			}
			if len(v) > 4096 {
				v = v[:4096]
			}
			m[string(k)] = strings.TrimSpace(string(v))
		case "src":
			if m == nil {
				m = map[string]string{}
			}
			// Keep the scheme and the size, never the payload.
			if len(v) > 16 {
				v = v[:16]
			}
			m["src"] = string(v)
			m["src_len"] = strconv.Itoa(len(vfull))
		}
	}
	return m
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }
