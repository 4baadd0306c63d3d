package phishing

import (
	"fmt"
	"strings"
)

// Per-language material the templates are filled with.
var (
	weekdays = map[string][]string{
		"en": {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday"},
		"es": {"lunes", "martes", "miércoles", "jueves", "viernes"},
		"de": {"Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag"},
	}
	months = map[string][]string{
		"en": {"January", "February", "March", "April", "May", "June"},
		"es": {"enero", "febrero", "marzo", "abril", "mayo", "junio"},
		"de": {"Januar", "Februar", "März", "April", "Mai", "Juni"},
	}
	cities = map[string][]string{
		"en": {"London", "Manchester", "Boston", "Chicago"},
		"es": {"Madrid", "Sevilla", "Valencia", "Bilbao"},
		"de": {"Berlin", "Hamburg", "München", "Köln"},
	}
	browsers = map[string][]string{
		"en": {"Firefox on Windows", "Chrome on macOS", "Safari on iPhone", "Edge on Windows"},
		"es": {"Firefox en Windows", "Chrome en macOS", "Safari en iPhone", "Edge en Windows"},
		"de": {"Firefox unter Windows", "Chrome unter macOS", "Safari auf dem iPhone", "Edge unter Windows"},
	}
	phones  = []string{"iPhone 15", "Pixel 8", "Galaxy S23", "iPhone 13"}
	clients = []string{"Initech", "Globex", "Umbrella", "Hooli", "Vandelay"}
)

// currency is the row's currency: USD in English mail, EUR otherwise.
func (g *gen) currency() string { return g.tr("USD", "EUR", "EUR") }

// valueOf returns key's value among placeholder values (key, value, …).
func valueOf(vals []string, key string) string {
	for i := 0; i+1 < len(vals); i += 2 {
		if vals[i] == key {
			return vals[i+1]
		}
	}
	return ""
}

// accountFills are the placeholder values of account and password
// templates for brand.
func (g *gen) accountFills(brand string) []string {
	return []string{
		"brand", brand, "device", pick(g.rng, browsers[g.lang]), "city", pick(g.rng, cities[g.lang]),
		"phone", pick(g.rng, phones), "day", pick(g.rng, weekdays[g.lang]),
		"hours", fmt.Sprint(1 + g.rng.IntN(24)), "days", fmt.Sprint(3 + g.rng.IntN(12)), "mins", fmt.Sprint(10 + 5*g.rng.IntN(6)),
	}
}

// compose writes paragraphs as the text and HTML bodies with a call to
// action: "cta: link" in text, an anchor showing shown ("" = the cta
// text) in HTML, then the signature.
func (d *draft) compose(paras []string, cta, link, shown, sign string) {
	if shown == "" {
		shown = cta
	}
	text := strings.Join(paras, "\n\n")
	html := make([]string, 0, len(paras)+2)
	for _, p := range paras {
		html = append(html, "<p>"+strings.ReplaceAll(p, "\n", "<br>")+"</p>")
	}
	if link != "" {
		text += "\n\n" + cta + ": " + link
		html = append(html, "<p>"+anchor(link, shown)+"</p>")
	}
	if sign != "" {
		text += "\n\n" + sign
		html = append(html, "<p>"+strings.ReplaceAll(sign, "\n", "<br>")+"</p>")
	}
	d.text = text
	d.html = htmlPage(html...)
}

// paragraphs writes a family's body as a row writes it: with the real
// sender's note half the time, which clones copy alike, and, on phishing,
// the family's pressure line: always when hard (the content is its only
// tell), on half the medium and a quarter of the easy ones, whose
// technical signs give them away.
func (g *gen) paragraphs(f *family, vals []string, phishing bool, diff string) []string {
	paras := []string{fill(g.text(f.body), vals...)}
	if f.note.en != "" && g.rng.IntN(2) == 0 {
		paras = append(paras, fill(g.text(f.note), vals...))
	}
	if phishing && f.press.en != "" && (diff == "hard" || diff == "medium" && g.rng.IntN(2) == 0 || g.rng.IntN(4) == 0) {
		paras = append(paras, fill(g.text(f.press), vals...))
	}
	return paras
}

// itSign is how the organisation's IT notices are signed, and so their
// clones.
func (g *gen) itSign() string { return g.tr("IT Operations", "Operaciones TI", "IT-Betrieb") }

func (g *gen) credentialHarvest() (draft, string) {
	b := pick(g.rng, brandsByLang[g.lang])
	diff := g.difficulty()
	look, _ := g.lookalike(b.name)
	link := "https://" + look + "/" + pick(g.rng, []string{"signin", "login", "account/verify", "secure/update"}) + "?id=" + g.token(10)
	f := g.family(pick(g.rng, []string{themeAccount, themePassword, themeNewsletter}))
	vals := g.accountFills(b.display)
	d := draft{subject: fill(g.text(f.subject), vals...)}
	switch diff {
	case "easy":
		d.fromName = b.display + g.tr(" Security", " Seguridad", " Sicherheit")
		d.fromAddr = "security@" + look
		d.auth = g.authAttacker(look)
		if g.rng.IntN(2) == 0 {
			link = pick(g.rng, []string{"http://bit.ly/", "https://tinyurl.com/", "http://cutt.ly/"}) + g.token(7)
		}
	case "medium":
		d.fromName = b.display
		d.fromAddr = "no-reply@" + pick(g.rng, []string{"mail-notify.net", "service-mailer.com", "notice-center.info"})
		d.auth = g.authAttacker(domainOf(d.fromAddr))
	default: // hard: plausible sender, no brand in the name, auth passes on the attacker's domain
		own := pick(g.rng, []string{"account-services.com", "client-portal.net", "secure-docs.co"})
		d.fromName = g.tr("Account Services", "Servicio de clientes", "Kundenservice")
		d.fromAddr = "info@" + own
		d.auth = g.authPass(own)
		link = "https://" + own + "/session/" + g.token(8)
	}
	if themeOf(f) == themeNewsletter {
		// A promotional digest of the brand's whose every link leads to
		// the sign-in page.
		links := make([]string, 3)
		for i := range links {
			links[i] = link + "&a=" + g.token(4)
		}
		var extra []string
		if diff == "hard" || diff == "medium" && g.rng.IntN(2) == 0 || g.rng.IntN(4) == 0 {
			extra = append(extra, g.text(f.press))
		}
		g.digest(&d, f, links, link+"&u=1", extra)
		return d, diff
	}
	paras := g.paragraphs(f, vals, true, diff)
	cta := g.text(f.cta)
	shown := "https://www." + b.domain + "/"
	if diff == "hard" {
		shown = ""
	}
	d.compose(paras, cta, link, shown, b.display)
	if diff == "easy" && g.rng.IntN(2) == 0 {
		var ps []string
		for _, p := range paras {
			ps = append(ps, "<p>"+p+"</p>")
		}
		d.html = htmlPage(append(ps,
			fmt.Sprintf(`<form action="%s" method="post"><input type="text" name="email"><input type="password" name="password"><button>%s</button></form>`, link, cta))...)
		d.text = ""
	}
	return d, diff
}

// vendors are the invoice senders business email compromise imitates,
// with the company name they sign with.
var vendors = []struct{ domain, name string }{
	{"globex-supplies.com", "Globex Supplies"}, {"initech-services.net", "Initech Services"}, {"umbrella-logistics.com", "Umbrella Logistics"},
}

// billingFills are the placeholder values of billing templates.
func (g *gen) billingFills() []string {
	return []string{
		"inv", fmt.Sprintf("INV-%d", 10000+g.rng.IntN(89999)),
		"order", fmt.Sprintf("%03d-%07d", g.rng.IntN(999), g.rng.IntN(9999999)),
		"amount", fmt.Sprintf("%d.%02d", 20+g.rng.IntN(4800), g.rng.IntN(100)), "cur", g.currency(),
		"day", pick(g.rng, weekdays[g.lang]), "month", pick(g.rng, months[g.lang]),
		"iban", g.tr(fmt.Sprintf("GB%02d NWBK 6016 1331 9268 19", g.rng.IntN(99)),
			fmt.Sprintf("ES%02d 2100 0418 4502 0005 1332", g.rng.IntN(99)),
			fmt.Sprintf("DE%02d 3705 0198 0000 1234 56", g.rng.IntN(99))),
	}
}

// billingLetter is the envelope both a real invoice and its imitation use.
func (g *gen) billingLetter(body, signer string) (string, string) {
	return g.tr("Hello,", "Hola:", "Guten Tag,") + "\n\n" + body,
		g.tr("Kind regards,", "Saludos,", "Mit freundlichen Grüßen") + "\n" + signer
}

func (g *gen) invoiceBEC() (draft, string) {
	diff := g.difficulty()
	fn, ln := g.person()
	v := pick(g.rng, vendors)
	f := g.family(themeBilling)
	vals := g.billingFills()
	inv := valueOf(vals, "inv")
	d := draft{subject: fill(g.text(f.subject), vals...)}
	// The real invoice's note on payment is what the fraud replaces.
	body, sign := g.billingLetter(fill(g.text(f.body)+" "+g.text(f.ask[CampaignInvoiceBEC]), vals...), fn+" "+ln+"\n"+v.name)
	portal := v.domain
	switch diff {
	case "easy":
		d.fromName = fn + " " + ln
		d.fromAddr = asciiName(fn) + "@" + g.orgLookalike()
		d.replyTo = asciiName(fn) + "." + asciiName(ln) + "@" + pick(g.rng, freemails)
		d.auth = g.authAttacker(domainOf(d.fromAddr))
		portal = domainOf(d.fromAddr)
		d.attachments = []attachment{{inv + ".pdf.exe", "application/octet-stream", []byte("MZ\x90\x00\x03\x00\x00\x00fake-pe-header-for-svbench")}}
	case "medium":
		d.fromName = fn + " " + ln
		d.fromAddr = "billing@" + v.domain
		d.replyTo = "billing." + strings.Split(v.domain, ".")[0] + "@" + pick(g.rng, freemails)
		d.auth = g.authBad(v.domain)
		d.attachments = []attachment{{inv + ".html", "text/html", []byte("<html><body>Invoice</body></html>")}}
	default:
		d.fromName = fn + " " + ln
		d.fromAddr = "billing@" + v.domain
		d.auth = g.authPass(v.domain)
		d.attachments = []attachment{{inv + ".pdf", "application/pdf", []byte("%PDF-1.4\n% svbench invoice\n")}}
	}
	d.compose([]string{body}, g.text(f.cta), "https://portal."+portal+"/invoices/"+inv, "", sign)
	d.html = ""
	return d, diff
}

// parcelFills are the placeholder values of parcel templates.
func (g *gen) parcelFills(carrier string) []string {
	return []string{
		"carrier", carrier, "track", fmt.Sprintf("%d%d", 1000+g.rng.IntN(8999), 100000+g.rng.IntN(899999)),
		"fee", fmt.Sprintf("%d.%02d", 1+g.rng.IntN(30), g.rng.IntN(100)), "cur", g.currency(),
		"day", pick(g.rng, weekdays[g.lang]),
	}
}

func (g *gen) deliveryNotice() (draft, string) {
	c := pick(g.rng, carriers[g.lang])
	diff := g.difficulty()
	look, _ := g.lookalike(c.name)
	f := g.family(themeParcel)
	vals := g.parcelFills(c.display)
	track := valueOf(vals, "track")
	link := "https://" + look + "/track/" + track
	d := draft{subject: fill(g.text(f.subject), vals...)}
	switch diff {
	case "easy":
		d.fromName = c.display
		d.fromAddr = "noreply@" + look
		d.auth = g.authAttacker(look)
		link = "http://" + fmt.Sprintf("185.%d.%d.%d", 10+g.rng.IntN(200), g.rng.IntN(250), 1+g.rng.IntN(250)) + "/pay/" + track
	case "medium":
		d.fromName = c.display
		d.fromAddr = "notification@" + pick(g.rng, []string{"parcel-info.net", "tracking-mail.com"})
		d.auth = g.authAttacker(domainOf(d.fromAddr))
		link = pick(g.rng, []string{"https://bit.ly/", "https://rb.gy/", "https://t.ly/"}) + g.token(6)
	default:
		own := pick(g.rng, []string{"parcel-redelivery.com", "paket-zustellung.net", "envios-pendientes.com"})
		d.fromName = g.tr("Delivery Service", "Servicio de envíos", "Paketdienst")
		d.fromAddr = "service@" + own
		d.auth = g.authPass(own)
		link = "https://" + own + "/pay/" + track
	}
	d.compose(g.paragraphs(f, vals, true, diff), g.text(f.cta), link, "", c.display)
	if diff != "hard" && g.rng.IntN(3) == 0 {
		d.attachments = []attachment{{g.tr("label", "etiqueta", "Sendungsbeleg") + "_" + track + ".iso", "application/octet-stream", []byte("CD001 svbench")}}
	}
	return d, diff
}

// itFills are the placeholder values of IT templates.
func (g *gen) itFills() []string {
	return []string{"day", pick(g.rng, weekdays[g.lang]), "ext", fmt.Sprint(4000 + g.rng.IntN(900))}
}

func (g *gen) mfaFatigue() (draft, string) {
	diff := g.difficulty()
	// Half copy the organisation's IT notices, half Microsoft's own
	// sign-in alerts.
	f := g.family(pick(g.rng, []string{themeIT, themeAccount}))
	vals, sign := g.itFills(), g.itSign()
	if themeOf(f) == themeAccount {
		vals, sign = g.accountFills("Microsoft"), "Microsoft"
	}
	d := draft{subject: fill(g.text(f.subject), vals...)}
	look, _ := g.lookalike("microsoft")
	link := "https://" + look + "/mfa/approve?u=" + g.token(8)
	switch diff {
	case "easy":
		d.fromName = "Microsoft 365"
		d.fromAddr = "mfa@" + look
		d.auth = g.authAttacker(look)
	case "medium":
		d.fromName = g.tr("IT Helpdesk", "Soporte TI", "IT-Support")
		d.fromAddr = "helpdesk@" + g.orgLookalike()
		d.auth = g.authAttacker(domainOf(d.fromAddr))
		link = "https://" + domainOf(d.fromAddr) + "/mfa/verify"
	default:
		own := pick(g.rng, []string{"it-servicedesk.com", "auth-notify.net"})
		d.fromName = g.tr("Service Desk", "Mesa de ayuda", "Servicedesk")
		d.fromAddr = "desk@" + own
		d.auth = g.authPass(own)
		link = "https://" + own + "/approve"
	}
	d.compose(g.paragraphs(f, vals, true, diff), g.text(f.cta), link, "", sign)
	if g.rng.IntN(2) == 0 {
		d.html = ""
	}
	return d, diff
}

// requestFills are the placeholder values of request templates; the
// greeting names the recipient the row is addressed to.
func (g *gen) requestFills(sender string) []string {
	return []string{
		"first", g.rcptFirst, "name", sender, "n", fmt.Sprint(3 + g.rng.IntN(6)), "cur", g.currency(),
		"city", pick(g.rng, cities[g.lang]), "client", pick(g.rng, clients),
		"details", g.tr("Routing: 021000021\nAccount: 483920175", "IBAN: ES91 2100 0418 4502 0005 1332", "IBAN: DE89 3704 0044 0532 0130 00"),
	}
}

// request writes a colleague's message: the fraud of kind gift_card or
// payroll_change, or for a legitimate kind a real errand, gift-card or
// bank-details message in the same family's words.
func (g *gen) request(d *draft, kind, sender string, urgent bool) {
	f := g.family(themeRequest)
	vals := g.requestFills(sender)
	if strings.HasPrefix(kind, "legit_") {
		kind = pick(g.rng, []string{askLegitErrand, askLegitGift, askLegitPayroll})
	}
	ask := g.text(f.ask[kind])
	if urgent {
		ask += " " + g.text(f.urgent)
	}
	d.subject = fill(g.text(f.subject), vals...)
	d.text = fill(strings.Replace(g.text(f.body), "{ask}", ask, 1), vals...)
}

func (g *gen) giftCard() (draft, string) {
	diff := g.difficulty()
	fn, ln := g.person()
	role := g.tr("CEO", "Director General", "Geschäftsführer")
	var d draft
	g.request(&d, CampaignGiftCard, fn+" "+ln, false)
	switch diff {
	case "easy":
		d.fromName = role + " " + fn + " " + ln
		d.fromAddr = asciiName(fn) + "." + asciiName(ln) + ".office@" + pick(g.rng, freemails)
		d.auth = g.authFreemail(domainOf(d.fromAddr))
	case "medium":
		d.fromName = fn + " " + ln
		d.fromAddr = asciiName(fn) + "@" + g.orgLookalike()
		d.auth = g.authAttacker(domainOf(d.fromAddr))
	default:
		d.fromName = fn + " " + ln
		d.fromAddr = asciiName(fn) + asciiName(ln) + "@" + pick(g.rng, freemails)
		d.auth = g.authFreemail(domainOf(d.fromAddr))
	}
	d.encoding = "8bit"
	return d, diff
}

func (g *gen) payrollChange() (draft, string) {
	diff := g.difficulty()
	fn, ln := g.person()
	var d draft
	g.request(&d, CampaignPayrollChange, fn+" "+ln, false)
	own := asciiName(fn) + "." + asciiName(ln)
	switch diff {
	case "easy":
		d.fromName = fn + " " + ln
		d.fromAddr = own + "@" + g.orgLookalike()
		d.replyTo = own + "@" + pick(g.rng, freemails)
		d.auth = g.authAttacker(domainOf(d.fromAddr))
	case "medium":
		d.fromName = fn + " " + ln + g.tr(" (Payroll)", " (Nómina)", " (Lohnbuchhaltung)")
		d.fromAddr = own + "@" + pick(g.rng, freemails)
		d.auth = g.authFreemail(domainOf(d.fromAddr))
	default:
		d.fromName = fn + " " + ln
		d.fromAddr = own + "@" + pick(g.rng, freemails)
		d.auth = g.authFreemail(domainOf(d.fromAddr))
	}
	d.encoding = "quoted-printable"
	return d, diff
}

// Legitimate mail.

// receipt is a shop's invoice or payment mail, or a carrier's own parcel
// notice: the mail invoice_bec and delivery_notice imitate.
func (g *gen) receipt() (draft, string) {
	var d draft
	// A third invoices and payments, two thirds parcel notices: parcel
	// mail is what delivery_notice copies, and more often than not real.
	if g.rng.IntN(3) == 0 {
		b := pick(g.rng, brandsByLang[g.lang])
		f := g.family(themeBilling)
		vals := g.billingFills()
		d = draft{
			fromName: b.display, fromAddr: pick(g.rng, []string{"receipts@", "orders@", "billing@"}) + b.domain,
			auth: g.authPass(b.domain), subject: fill(g.text(f.subject), vals...),
		}
		link := "https://www." + b.domain + "/orders/" + valueOf(vals, "order")
		text := g.text(f.body)
		if g.rng.IntN(3) > 0 {
			text += " " + g.text(f.note)
		}
		fn, ln := g.person()
		body, sign := g.billingLetter(fill(text, vals...), fn+" "+ln+"\n"+b.display)
		d.compose([]string{body}, g.text(f.cta), link, "www."+b.domain+"/orders", sign)
		if g.rng.IntN(3) == 0 {
			d.attachments = []attachment{{valueOf(vals, "inv") + ".pdf", "application/pdf", []byte("%PDF-1.4\n% svbench receipt\n")}}
		}
	} else {
		c := pick(g.rng, carriers[g.lang])
		f := g.family(themeParcel)
		vals := g.parcelFills(c.display)
		d = draft{
			fromName: c.display, fromAddr: pick(g.rng, []string{"noreply@", "tracking@", "service@"}) + c.domain,
			auth: g.authPass(c.domain), subject: fill(g.text(f.subject), vals...),
		}
		link := "https://www." + c.domain + "/track/" + valueOf(vals, "track")
		d.compose(g.paragraphs(f, vals, false, ""), g.text(f.cta), link, "", c.display)
	}
	if g.rng.IntN(3) == 0 {
		g.viaESP(&d, -1)
	}
	return d, pick(g.rng, []string{"easy", "easy", "medium"})
}

func (g *gen) passwordReset() (draft, string) {
	svc := pick(g.rng, []brandInfo{{"github", "GitHub", "github.com"}, {"dropbox", "Dropbox", "dropbox.com"}, {"slack", "Slack", "slack.com"}, {"linkedin", "LinkedIn", "linkedin.com"}})
	link := "https://" + svc.domain + "/password_reset/" + g.token(20)
	f := g.family(themePassword)
	vals := g.accountFills(svc.display)
	d := draft{fromName: svc.display, fromAddr: "noreply@" + svc.domain, auth: g.authPass(svc.domain), subject: fill(g.text(f.subject), vals...)}
	d.compose(g.paragraphs(f, vals, false, ""), g.text(f.cta), link, "", svc.display)
	if g.rng.IntN(2) == 0 {
		d.html = ""
	}
	if g.rng.IntN(4) == 0 {
		g.viaESP(&d, -1)
	}
	return d, "medium"
}

func (g *gen) newsletter() (draft, string) {
	src := map[string][]brandInfo{
		"en": {{"", "The Weekly Digest", "digest.medium.com"}, {"", "GitHub", "github.com"}},
		"es": {{"", "Boletín El País", "elpais.com"}, {"", "Xataka", "xataka.com"}},
		"de": {{"", "heise online", "heise.de"}, {"", "t3n Newsletter", "t3n.de"}},
	}[g.lang]
	s := pick(g.rng, src)
	reg := s.domain
	f := g.family(themeNewsletter)
	d := draft{fromName: s.display, fromAddr: "newsletter@" + reg, auth: g.authPass(reg), mailer: "Mailchimp Mailer"}
	d.subject = g.text(f.subject)
	diff := "easy"
	var links []string
	for i := 0; i < 3; i++ {
		links = append(links, fmt.Sprintf("https://www.%s/article/%d-%s", strings.TrimPrefix(reg, "digest."), 1000+g.rng.IntN(9000), g.token(5)))
	}
	if g.rng.IntN(2) == 0 {
		// Hard negative: click-tracking links and a bounce Return-Path on the ESP.
		diff = "hard"
		d.returnPath = "bounce-" + g.token(6) + "@mail" + fmt.Sprint(g.rng.IntN(200)) + ".mcsv.net"
		if g.rng.IntN(2) == 0 {
			// Mailchimp's own signature: the sender never set up
			// aligned DKIM.
			g.viaESP(&d, len(esps)-1)
		}
		for i := range links {
			links[i] = "https://" + strings.Split(reg, ".")[0] + ".us" + fmt.Sprint(1+g.rng.IntN(20)) + ".list-manage.com/track/click?u=" + g.token(12)
		}
	}
	g.digest(&d, f, links, "https://www."+strings.TrimPrefix(reg, "digest.")+"/unsubscribe", nil)
	switch g.rng.IntN(4) {
	case 0:
		g.viaList(&d, g.tr("tech-news", "noticias", "fachpresse"))
	case 1:
		if diff != "hard" {
			g.viaESP(&d, -1)
		}
	}
	return d, diff
}

// digest writes a newsletter: the family's intro, one titled item per
// link, extra paragraphs, an unsubscribe link and a tracking image.
func (g *gen) digest(d *draft, f *family, links []string, unsub string, extra []string) {
	var paras []string
	var text strings.Builder
	text.WriteString(g.text(f.body) + "\n")
	for i, l := range links {
		title := fill(g.text(f.stories), "i", fmt.Sprint(i+1))
		paras = append(paras, "<p>"+anchor(l, title)+"</p>")
		fmt.Fprintf(&text, "\n%s\n%s\n", title, l)
	}
	for _, e := range extra {
		paras = append(paras, "<p>"+e+"</p>")
		fmt.Fprintf(&text, "\n%s\n", e)
	}
	paras = append(paras, `<p style="font-size:10px">`+anchor(unsub, g.tr("Unsubscribe", "Darse de baja", "Abmelden"))+`</p>`,
		`<img src="data:image/png;base64,`+strings.Repeat("iVBORw0KGgo", 40)+`">`)
	d.text = text.String()
	d.html = htmlPage(paras...)
}

// internalNotice is mail from inside the organisation: half IT notices to
// all staff (urgent ones say so), half a colleague's request (urgent or
// not), the hard negatives of MFA, gift-card and payroll fraud.
func (g *gen) internalNotice(urgent bool) (draft, string) {
	// Mail that never leaves the organisation's servers is not checked by
	// its inbound gateway: half of it carries no results; the other half
	// arrives through a cloud tenant that stamps an aligned pass, or, for
	// IT notices, through the all-staff list.
	route := g.rng.IntN(4)
	diff := "easy"
	if urgent {
		diff = "hard"
	}
	if g.rng.IntN(2) == 0 {
		fn, ln := g.person()
		d := draft{fromName: fn + " " + ln, fromAddr: asciiName(fn) + "." + asciiName(ln) + "@" + g.org}
		if route == 1 || route == 2 {
			d.auth = g.authPass(g.org)
		}
		g.request(&d, LegitUrgentInternal, fn+" "+ln, urgent)
		return d, diff
	}
	dept := pick(g.rng, []string{"it", "helpdesk", "it-ops", "security"})
	d := draft{fromName: g.itSign(), fromAddr: dept + "@" + g.org}
	if route == 1 {
		d.auth = g.authPass(g.org)
	}
	f := g.family(themeIT)
	vals := g.itFills()
	d.subject = fill(g.text(f.subject), vals...)
	paras := g.paragraphs(f, vals, false, diff)
	if urgent {
		d.subject = g.tr("URGENT: ", "URGENTE: ", "DRINGEND: ") + d.subject
		paras = append(paras, fill(g.text(f.urgent), vals...))
	}
	link := "https://intranet." + g.org + "/" + pick(g.rng, []string{"it", "help", "selfservice", "portal"}) + "/" + g.token(6)
	d.compose(paras, g.text(f.cta), link, "", g.itSign())
	if g.rng.IntN(2) == 0 {
		d.html = ""
	}
	if route == 2 {
		g.viaList(&d, g.tr("all-staff", "todos", "alle"))
	}
	return d, diff
}

func (g *gen) securityAlert() (draft, string) {
	svc := pick(g.rng, []brandInfo{{"google", "Google", "google.com"}, {"microsoft", "Microsoft", "microsoft.com"}, {"apple", "Apple", "apple.com"}})
	sender := map[string]string{"google.com": "no-reply@accounts.google.com", "microsoft.com": "account-security-noreply@accountprotection.microsoft.com", "apple.com": "noreply@id.apple.com"}[svc.domain]
	display := svc.display
	if svc.name == "microsoft" {
		display = "Microsoft account team"
	}
	f := g.family(themeAccount)
	vals := g.accountFills(svc.display)
	d := draft{fromName: display, fromAddr: sender, auth: g.authPass(domainOf(sender)), subject: fill(g.text(f.subject), vals...)}
	link := "https://myaccount." + svc.domain + "/notifications"
	if svc.domain != "google.com" {
		link = "https://account." + svc.domain + "/security"
	}
	d.compose(g.paragraphs(f, vals, false, ""), g.text(f.cta), link, "", display)
	return d, "hard"
}
