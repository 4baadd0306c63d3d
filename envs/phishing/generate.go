package phishing

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"golang.org/x/net/idna"
)

// Campaign types of generated rows.
const (
	CampaignCredentialHarvest = "credential_harvest"
	CampaignInvoiceBEC        = "invoice_bec"
	CampaignDeliveryNotice    = "delivery_notice"
	CampaignMFAFatigue        = "mfa_fatigue"
	CampaignGiftCard          = "gift_card"
	CampaignPayrollChange     = "payroll_change"
	LegitReceipt              = "legit_receipt"
	LegitPasswordReset        = "legit_password_reset"
	LegitNewsletter           = "legit_newsletter"
	LegitInternalNotice       = "legit_internal_notice"
	LegitUrgentInternal       = "legit_urgent_internal" // hard negative: urgent, real
	LegitSecurityAlert        = "legit_security_alert"  // hard negative: "sign in" on the real domain
)

// GeneratorVersion is recorded in every generated row's meta.source.
// e4-gen/3: prose comes from template families, each in one split
// (families.go), and meta.template names the row's family.
const GeneratorVersion = "e4-gen/3"

// slots alternate phishing and legitimate rows so any prefix is balanced.
var slots = []string{
	CampaignCredentialHarvest, LegitReceipt, CampaignInvoiceBEC, LegitPasswordReset,
	CampaignDeliveryNotice, LegitNewsletter, CampaignMFAFatigue, LegitInternalNotice,
	CampaignGiftCard, LegitUrgentInternal, CampaignPayrollChange, LegitSecurityAlert,
}

// Generate returns n rows from seed, drawing on the template families of
// every split: for tests of the generator itself. Data that a model is
// trained or scored on comes from GenerateSplit. The same (seed, n) gives
// the same rows on every machine: all randomness comes from one PCG stream.
func Generate(seed uint64, n int) []Row { return generate("", seed, n) }

// GenerateSplit returns n rows from seed whose prose comes only from
// split's template families (train, dev or test), so rows generated for
// different splits never share a template.
func GenerateSplit(split string, seed uint64, n int) ([]Row, error) {
	if err := checkGeneratorSplit(split); err != nil {
		return nil, err
	}
	return generate(split, seed, n), nil
}

func generate(split string, seed uint64, n int) []Row {
	g := &gen{rng: rand.New(rand.NewPCG(seed, seed^0x5ca1ab1e)), split: split}
	rows := make([]Row, 0, n)
	langs := []string{"en", "es", "de"}
	for i := 0; i < n; i++ {
		kind := slots[i%len(slots)]
		lang := langs[(i/len(slots)+i)%3]
		g.lang = lang
		g.org = orgs[lang]
		g.template = ""
		// The recipient is drawn first: a colleague's request greets them.
		g.rcptFirst, g.rcptLast = g.person()
		d, diff := g.build(kind)
		if kind != LegitInternalNotice && kind != LegitUrgentInternal {
			d.auth = g.unstamped(d.auth)
		}
		d.date = time.Date(2025, 3, 3, 8, 0, 0, 0, time.UTC).Add(time.Duration(g.rng.IntN(60*24*90)) * time.Minute)
		d.msgID = fmt.Sprintf("%08x.%04d@%s", g.rng.Uint32(), i, domainOf(d.fromAddr))
		d.to = fmt.Sprintf("%s %s <%s.%s@%s>", g.rcptFirst, g.rcptLast, asciiName(g.rcptFirst), asciiName(g.rcptLast), g.org)
		if d.charset == "" {
			d.charset = "utf-8"
			if lang != "en" && g.rng.IntN(3) == 0 {
				d.charset = "iso-8859-1"
			}
		}
		if d.encoding == "" {
			d.encoding = pick(g.rng, []string{"quoted-printable", "base64", "8bit", "quoted-printable"})
		}
		label := LabelLegitimate
		if !strings.HasPrefix(kind, "legit_") {
			label = LabelPhishing
		}
		rows = append(rows, Row{
			ID:     fmt.Sprintf("e4-gen-%05d", i),
			Email:  d.render(),
			Answer: label,
			Meta: RowMeta{Campaign: kind, Language: lang, Difficulty: diff, Template: g.template,
				Source: fmt.Sprintf("%s seed=%d", GeneratorVersion, seed)},
		})
	}
	return rows
}

type gen struct {
	rng   *rand.Rand
	split string // whose template families rows use; "" = every split
	lang  string
	org   string
	// template is the family the current row's prose came from.
	template string
	// rcptFirst and rcptLast name the current row's recipient.
	rcptFirst, rcptLast string
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func domainOf(a string) string {
	if i := strings.LastIndexByte(a, '@'); i >= 0 {
		return a[i+1:]
	}
	return "svbench.example"
}

// tr picks the text of the row's language.
func (g *gen) tr(en, es, de string) string {
	switch g.lang {
	case "es":
		return es
	case "de":
		return de
	}
	return en
}

var orgs = map[string]string{"en": "northwind.com", "es": "fabrikam.es", "de": "contoso.de"}

var firstNames = map[string][]string{
	"en": {"Emily", "James", "Olivia", "Michael", "Sarah", "David"},
	"es": {"Lucía", "Javier", "Carmen", "Alejandro", "Marta", "Pablo"},
	"de": {"Anna", "Lukas", "Julia", "Maximilian", "Sophie", "Jonas"},
}
var lastNames = map[string][]string{
	"en": {"Carter", "Hughes", "Bennett", "Foster", "Reed"},
	"es": {"García", "Martínez", "López", "Sánchez", "Romero"},
	"de": {"Müller", "Schmidt", "Fischer", "Weber", "Becker"},
}

func (g *gen) person() (string, string) {
	return pick(g.rng, firstNames[g.lang]), pick(g.rng, lastNames[g.lang])
}

func asciiName(s string) string {
	return strings.NewReplacer("á", "a", "é", "e", "í", "i", "ó", "o", "ú", "u", "ñ", "n", "ü", "ue", "ö", "oe", "ä", "ae", "ß", "ss").Replace(strings.ToLower(s))
}

type brandInfo struct{ name, display, domain string }

var brandsByLang = map[string][]brandInfo{
	"en": {{"paypal", "PayPal", "paypal.com"}, {"amazon", "Amazon", "amazon.com"}, {"microsoft", "Microsoft", "microsoft.com"}, {"netflix", "Netflix", "netflix.com"}, {"docusign", "DocuSign", "docusign.com"}, {"apple", "Apple", "apple.com"}},
	"es": {{"santander", "Banco Santander", "santander.es"}, {"paypal", "PayPal", "paypal.es"}, {"amazon", "Amazon", "amazon.es"}, {"microsoft", "Microsoft", "microsoft.com"}, {"bbva", "BBVA", "bbva.es"}},
	"de": {{"sparkasse", "Sparkasse", "sparkasse.de"}, {"paypal", "PayPal", "paypal.de"}, {"amazon", "Amazon", "amazon.de"}, {"microsoft", "Microsoft", "microsoft.com"}, {"netflix", "Netflix", "netflix.com"}},
}

var carriers = map[string][]brandInfo{
	"en": {{"fedex", "FedEx", "fedex.com"}, {"dhl", "DHL Express", "dhl.com"}, {"ups", "UPS", "ups.com"}},
	"es": {{"correos", "Correos", "correos.es"}, {"dhl", "DHL", "dhl.es"}},
	"de": {{"dhl", "DHL Paket", "dhl.de"}, {"dpd", "DPD", "dpd.de"}},
}

var phishTLDs = []string{"com", "net", "info", "online", "xyz", "top", "co"}

var domainWords = map[string][]string{
	"en": {"secure", "verify", "account", "support", "login", "service", "update"},
	"es": {"seguridad", "verificacion", "cuenta", "soporte", "acceso", "clientes"},
	"de": {"sicherheit", "konto", "kundenservice", "verifizierung", "support", "login"},
}

// lookalike builds a domain imitating brand name; how is one of the
// techniques the extractor knows.
func (g *gen) lookalike(name string) (domain, how string) {
	tld := pick(g.rng, phishTLDs)
	word := pick(g.rng, domainWords[g.lang])
	techniques := []string{"brand-in-domain", "brand-in-subdomain"}
	if len(name) >= 5 {
		techniques = append(techniques, "homoglyph", "typo", "punycode")
	}
	how = pick(g.rng, techniques)
	switch how {
	case "homoglyph":
		for _, sub := range [][2]string{{"o", "0"}, {"l", "1"}, {"i", "1"}, {"e", "3"}, {"s", "5"}} {
			if strings.Contains(name, sub[0]) {
				return strings.Replace(name, sub[0], sub[1], 1) + "-" + word + "." + tld, how
			}
		}
		return name + "-" + word + "." + tld, "brand-in-domain"
	case "typo":
		i := 1 + g.rng.IntN(len(name)-2)
		b := []byte(name)
		b[i], b[i+1] = b[i+1], b[i]
		if string(b) == name {
			return name[:i] + name[i:i+1] + name[i:] + "." + tld, how
		}
		return string(b) + "." + tld, how
	case "punycode":
		for _, sub := range [][2]string{{"a", "а"}, {"o", "о"}, {"e", "е"}, {"p", "р"}, {"c", "с"}} {
			if strings.Contains(name, sub[0]) {
				if d, err := idna.ToASCII(strings.Replace(name, sub[0], sub[1], 1) + ".com"); err == nil {
					return d, how
				}
			}
		}
		return name + "-" + word + "." + tld, "brand-in-domain"
	case "brand-in-subdomain":
		return name + ".com." + word + "-" + pick(g.rng, []string{"portal", "center", "review", "check"}) + "." + tld, how
	}
	return name + "-" + word + "." + tld, how
}

// orgLookalike imitates the recipient's own domain.
func (g *gen) orgLookalike() string {
	base, tld, _ := strings.Cut(g.org, ".")
	switch g.rng.IntN(3) {
	case 0:
		return base + "-" + pick(g.rng, []string{"corp", "group", "hr", "mail"}) + "." + tld
	case 1:
		// Digit or "rn" for "m" homoglyphs; never the real domain.
		for _, sub := range [][2]string{{"o", "0"}, {"m", "rn"}, {"l", "1"}, {"i", "1"}} {
			if strings.Contains(base, sub[0]) {
				return strings.Replace(base, sub[0], sub[1], 1) + "." + tld
			}
		}
		return base + "-group." + tld
	}
	b := []byte(base)
	b[2], b[3] = b[3], b[2]
	return string(b) + "." + pick(g.rng, []string{"com", "net", tld})
}

var freemails = []string{"gmail.com", "outlook.com", "yahoo.com", "gmx.de", "hotmail.es", "proton.me"}

// Authentication-Results. A verdict is evidence about a domain, not about
// the label: attackers pass SPF, DKIM and DMARC for domains they register,
// and legitimate mail arrives without results (internal relays), with a
// DKIM signature broken by a mailing list, or signed by its ESP's domain.
// The generator models each so that no verdict stands in for the label.

// authPass is a pass aligned with domain, the From domain.
func (g *gen) authPass(domain string) string {
	return fmt.Sprintf("spf=pass smtp.mailfrom=%s;\r\n\tdkim=pass header.d=%s;\r\n\tdmarc=pass header.from=%s", domain, domain, domain)
}

// authBad is a spoofed or unauthenticated sender: the message does not
// come from where its From says.
func (g *gen) authBad(domain string) string {
	return pick(g.rng, []string{
		fmt.Sprintf("spf=fail smtp.mailfrom=%s;\r\n\tdkim=none;\r\n\tdmarc=fail header.from=%s", domain, domain),
		fmt.Sprintf("spf=softfail smtp.mailfrom=%s;\r\n\tdkim=fail header.d=%s;\r\n\tdmarc=fail header.from=%s", domain, domain, domain),
		fmt.Sprintf("spf=none smtp.mailfrom=%s;\r\n\tdkim=none;\r\n\tdmarc=none header.from=%s", domain, domain),
	})
}

// authAttacker is mail from a domain the attacker registered (a look-alike
// or a throwaway): most such domains publish SPF and sign with DKIM, a
// young one often without a DMARC record; the rest send unauthenticated.
func (g *gen) authAttacker(domain string) string {
	switch g.rng.IntN(10) {
	case 0, 1, 2, 3, 4:
		return g.authPass(domain)
	case 5, 6:
		return fmt.Sprintf("spf=pass smtp.mailfrom=%s;\r\n\tdkim=pass header.d=%s;\r\n\tdmarc=none header.from=%s", domain, domain, domain)
	}
	return g.authBad(domain)
}

// authFreemail is a free-mail account's message: the provider signs it,
// so it passes for gmail.com whoever holds the account.
func (g *gen) authFreemail(domain string) string { return g.authPass(domain) }

// esps are bulk senders whose own DKIM signature and bounce domain a
// customer's mail carries when the customer has not set up aligned
// signing: the mail passes, but for the ESP's domain.
var esps = []struct{ dkim, bounce string }{
	{"sendgrid.net", "bounces.sendgrid.net"},
	{"mailgun.org", "mg.mailgun.org"},
	{"sparkpostmail.com", "bounce.sparkpostmail.com"},
	{"mcsv.net", "mail%d.mcsv.net"},
}

// viaESP sends d through an ESP without aligned signing: SPF and DKIM pass
// for the ESP, DMARC has nothing aligned to pass on, and the Return-Path
// is the ESP bounce address SPF checked. esp < 0 picks one.
func (g *gen) viaESP(d *draft, esp int) {
	if esp < 0 {
		esp = g.rng.IntN(len(esps))
	}
	e := esps[esp]
	bounce := e.bounce
	if strings.Contains(bounce, "%d") {
		bounce = fmt.Sprintf(bounce, g.rng.IntN(200))
	}
	d.returnPath = "bounce-" + g.token(6) + "@" + bounce
	d.auth = fmt.Sprintf("spf=pass smtp.mailfrom=%s;\r\n\tdkim=pass header.d=%s;\r\n\tdmarc=none header.from=%s", d.returnPath, e.dkim, domainOf(d.fromAddr))
}

// viaList redistributes d through the recipient organisation's list
// server: the footer it appends breaks the author's DKIM body hash, SPF
// passes for the list's envelope domain (the organisation's), and DMARC
// passes only when the author is the organisation itself. Call it after
// the body is written.
func (g *gen) viaList(d *draft, list string) {
	from := domainOf(d.fromAddr)
	dmarc := "fail"
	if from == g.org {
		dmarc = "pass"
	}
	d.auth = fmt.Sprintf("spf=pass smtp.mailfrom=%s-bounces@lists.%s;\r\n\tdkim=fail (body hash did not verify) header.d=%s;\r\n\tdmarc=%s header.from=%s", list, g.org, from, dmarc, from)
	d.listID = "<" + list + ".lists." + g.org + ">"
	// The list's envelope replaces an ESP bounce address of the earlier
	// hop; the generator leaves the list's own Return-Path out.
	d.returnPath = ""
	footer := g.tr("You receive this message through the "+list+" list.",
		"Recibe este mensaje a través de la lista "+list+".",
		"Sie erhalten diese Nachricht über die Liste "+list+".")
	if d.text != "" {
		d.text += "\n\n-- \n" + footer
	}
	if d.html != "" {
		d.html = strings.Replace(d.html, "\n</body>", "\n<p>"+footer+"</p>\n</body>", 1)
	}
}

// unstamped drops the header for a share of external mail: gateways that
// filter before the mailbox server often leave no Authentication-Results.
func (g *gen) unstamped(auth string) string {
	if g.rng.IntN(10) == 0 {
		return ""
	}
	return auth
}

func (g *gen) token(n int) string {
	const al = "abcdefghijkmnpqrstuvwxyz23456789"
	b := make([]byte, n)
	for i := range b {
		b[i] = al[g.rng.IntN(len(al))]
	}
	return string(b)
}

func htmlPage(paras ...string) string {
	return "<html><head><style>p{font-family:Arial}</style></head><body>\n" + strings.Join(paras, "\n") + "\n</body></html>"
}

func anchor(href, text string) string { return fmt.Sprintf(`<a href="%s">%s</a>`, href, text) }

// difficulty picks easy / medium / hard with a skew towards medium.
func (g *gen) difficulty() string {
	return pick(g.rng, []string{"easy", "medium", "medium", "hard"})
}

func (g *gen) build(kind string) (draft, string) {
	switch kind {
	case CampaignCredentialHarvest:
		return g.credentialHarvest()
	case CampaignInvoiceBEC:
		return g.invoiceBEC()
	case CampaignDeliveryNotice:
		return g.deliveryNotice()
	case CampaignMFAFatigue:
		return g.mfaFatigue()
	case CampaignGiftCard:
		return g.giftCard()
	case CampaignPayrollChange:
		return g.payrollChange()
	case LegitReceipt:
		return g.receipt()
	case LegitPasswordReset:
		return g.passwordReset()
	case LegitNewsletter:
		return g.newsletter()
	case LegitInternalNotice:
		return g.internalNotice(false)
	case LegitUrgentInternal:
		return g.internalNotice(true)
	case LegitSecurityAlert:
		return g.securityAlert()
	}
	panic("unknown kind " + kind)
}
