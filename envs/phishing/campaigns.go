package phishing

import (
	"fmt"
	"strings"
)

func (g *gen) credentialHarvest() (draft, string) {
	b := pick(g.rng, brandsByLang[g.lang])
	diff := g.difficulty()
	look, _ := g.lookalike(b.name)
	link := "https://" + look + "/" + pick(g.rng, []string{"signin", "login", "account/verify", "secure/update"}) + "?id=" + g.token(10)
	d := draft{subject: g.tr(
		pick(g.rng, []string{"Urgent: verify your account", "Action required: unusual sign-in activity", "Your account will be suspended"}),
		pick(g.rng, []string{"Urgente: verifique su cuenta", "Acción requerida: actividad sospechosa", "Su cuenta será suspendida"}),
		pick(g.rng, []string{"Dringend: Bestätigen Sie Ihr Konto", "Handlungsbedarf: ungewöhnliche Aktivität", "Ihr Konto wird gesperrt"}))}
	intro := g.tr(
		"We detected suspicious activity on your "+b.display+" account. To keep access, please verify your account within 24 hours, otherwise it will be suspended.",
		"Hemos detectado actividad sospechosa en su cuenta de "+b.display+". Para mantener el acceso, verifique su cuenta en las próximas 24 horas o será suspendida.",
		"Wir haben verdächtige Aktivitäten in Ihrem "+b.display+"-Konto festgestellt. Bitte bestätigen Sie Ihr Konto innerhalb von 24 Stunden, sonst wird es gesperrt.")
	cta := g.tr("Verify now", "Verificar ahora", "Jetzt bestätigen")
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
	shown := "https://www." + b.domain + "/"
	d.text = intro + "\n\n" + cta + ": " + link + "\n\n" + b.display
	d.html = htmlPage("<p>"+intro+"</p>", "<p>"+anchor(link, shown)+"</p>", "<p>"+b.display+"</p>")
	if diff == "easy" && g.rng.IntN(2) == 0 {
		d.html = htmlPage("<p>"+intro+"</p>",
			fmt.Sprintf(`<form action="%s" method="post"><input type="text" name="email"><input type="password" name="password"><button>%s</button></form>`, link, cta))
		d.text = ""
	}
	if diff == "hard" {
		d.html = htmlPage("<p>"+intro+"</p>", "<p>"+anchor(link, cta)+"</p>")
	}
	return d, diff
}

func (g *gen) invoiceBEC() (draft, string) {
	diff := g.difficulty()
	f, l := g.person()
	amount := fmt.Sprintf("%d.%02d", 1200+g.rng.IntN(48000), g.rng.IntN(100))
	inv := fmt.Sprintf("INV-%d", 10000+g.rng.IntN(89999))
	d := draft{subject: g.tr("Overdue invoice "+inv, "Factura vencida "+inv, "Offene Rechnung "+inv)}
	d.text = g.tr(
		fmt.Sprintf("Hello,\n\nPlease process the payment of EUR %s for the attached overdue invoice %s today. Note that our bank details have changed; please use the new bank account IBAN GB%02d NWBK 6016 1331 9268 19 for this and future payments.\n\nKind regards,\n%s %s\nAccounts Receivable", amount, inv, g.rng.IntN(99), f, l),
		fmt.Sprintf("Hola,\n\nLe rogamos realice el pago de %s EUR de la factura vencida %s adjunta hoy mismo. Hemos cambiado nuestros datos bancarios: utilice la nueva cuenta bancaria ES%02d 2100 0418 4502 0005 1332.\n\nSaludos,\n%s %s\nContabilidad", amount, inv, g.rng.IntN(99), f, l),
		fmt.Sprintf("Guten Tag,\n\nbitte begleichen Sie die offene Rechnung %s über %s EUR umgehend. Unsere Bankverbindung hat sich geändert, bitte verwenden Sie die neue IBAN DE%02d 3705 0198 0000 1234 56.\n\nMit freundlichen Grüßen\n%s %s\nBuchhaltung", inv, amount, g.rng.IntN(99), f, l))
	vendor := pick(g.rng, []string{"globex-supplies.com", "initech-services.net", "umbrella-logistics.com"})
	switch diff {
	case "easy":
		d.fromName = f + " " + l
		d.fromAddr = asciiName(f) + "@" + g.orgLookalike()
		d.replyTo = asciiName(f) + "." + asciiName(l) + "@" + pick(g.rng, freemails)
		d.auth = g.authAttacker(domainOf(d.fromAddr))
		d.attachments = []attachment{{inv + ".pdf.exe", "application/octet-stream", []byte("MZ\x90\x00\x03\x00\x00\x00fake-pe-header-for-svbench")}}
	case "medium":
		d.fromName = f + " " + l
		d.fromAddr = "billing@" + vendor
		d.replyTo = "billing." + strings.Split(vendor, ".")[0] + "@" + pick(g.rng, freemails)
		d.auth = g.authBad(vendor)
		d.attachments = []attachment{{inv + ".html", "text/html", []byte("<html><body>Invoice</body></html>")}}
	default:
		d.fromName = f + " " + l
		d.fromAddr = "billing@" + vendor
		d.auth = g.authPass(vendor)
		d.attachments = []attachment{{inv + ".pdf", "application/pdf", []byte("%PDF-1.4\n% svbench invoice\n")}}
	}
	return d, diff
}

func (g *gen) deliveryNotice() (draft, string) {
	c := pick(g.rng, carriers[g.lang])
	diff := g.difficulty()
	look, _ := g.lookalike(c.name)
	fee := fmt.Sprintf("%d.%02d", 1+g.rng.IntN(3), g.rng.IntN(100))
	track := fmt.Sprintf("%d%d", 1000+g.rng.IntN(8999), 100000+g.rng.IntN(899999))
	link := "https://" + look + "/track/" + track
	d := draft{subject: g.tr("Delivery attempt failed: parcel "+track, "Envío retenido: paquete "+track, "Zustellung fehlgeschlagen: Sendung "+track)}
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
	body := g.tr(
		fmt.Sprintf("Your parcel %s could not be delivered because of an unpaid customs fee of %s USD. Pay the fee within 48 hours to reschedule delivery, otherwise the parcel will be returned.", track, fee),
		fmt.Sprintf("Su paquete %s no pudo ser entregado por una tasa de aduana pendiente de %s EUR. Realice el pago en 24 horas para programar la entrega; de lo contrario el paquete será devuelto.", track, fee),
		fmt.Sprintf("Ihre Sendung %s konnte wegen einer offenen Zollgebühr von %s EUR nicht zugestellt werden. Bitte zahlen Sie innerhalb von 24 Stunden, sonst geht die Sendung zurück.", track, fee))
	cta := g.tr("Reschedule delivery", "Programar entrega", "Zustellung planen")
	d.text = body + "\n\n" + cta + ": " + link
	d.html = htmlPage("<p>"+body+"</p>", "<p>"+anchor(link, cta)+"</p>")
	if diff != "hard" && g.rng.IntN(3) == 0 {
		d.attachments = []attachment{{g.tr("label", "etiqueta", "Sendungsbeleg") + "_" + track + ".iso", "application/octet-stream", []byte("CD001 svbench")}}
	}
	return d, diff
}

func (g *gen) mfaFatigue() (draft, string) {
	diff := g.difficulty()
	d := draft{subject: g.tr("Approve the sign-in request to keep access", "Apruebe la solicitud de inicio de sesión", "Genehmigen Sie die Anmeldeanfrage")}
	body := g.tr(
		"We have sent several sign-in requests to your Microsoft Authenticator app. Approve the sign-in request on your phone immediately, or enter the code below, otherwise your account will be locked and you will lose access to email.",
		"Hemos enviado varias solicitudes a su aplicación Authenticator. Apruebe la solicitud en su teléfono de inmediato o introduzca el código de verificación; de lo contrario su cuenta será bloqueada.",
		"Wir haben mehrere Anmeldeanfragen an Ihre Authenticator-App gesendet. Genehmigen Sie die Anfrage sofort auf Ihrem Telefon oder geben Sie den Bestätigungscode ein, sonst wird Ihr Konto gesperrt.")
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
	d.text = body + "\n\n" + link
	if g.rng.IntN(2) == 0 {
		d.html = htmlPage("<p>"+body+"</p>", "<p>"+anchor(link, g.tr("Open Authenticator", "Abrir Authenticator", "Authenticator öffnen"))+"</p>")
	}
	return d, diff
}

func (g *gen) giftCard() (draft, string) {
	diff := g.difficulty()
	f, l := g.person()
	role := g.tr("CEO", "Director General", "Geschäftsführer")
	n := 3 + g.rng.IntN(6)
	d := draft{subject: g.tr("Quick favour", "Un favor rápido", "Kurze Bitte")}
	d.text = g.tr(
		fmt.Sprintf("Hi,\n\nAre you at your desk? I need you to buy %d Apple gift cards of 100 USD each for a client as soon as possible. Scratch the back and send me photos of the codes. I am in a meeting, so email only.\n\n%s %s\n%s", n, f, l, role),
		fmt.Sprintf("Hola,\n\n¿Estás en tu mesa? Necesito que compres %d tarjetas regalo de Google Play de 100 EUR para un cliente lo antes posible. Envíame los códigos por correo, estoy en una reunión.\n\n%s %s\n%s", n, f, l, role),
		fmt.Sprintf("Hallo,\n\nbist du am Platz? Ich brauche dringend %d Geschenkkarten (Amazon, je 100 EUR) für einen Kunden. Bitte schick mir die Codes per E-Mail, ich sitze im Meeting.\n\n%s %s\n%s", n, f, l, role))
	switch diff {
	case "easy", "medium":
		d.fromName = role + " " + f + " " + l
		d.fromAddr = asciiName(f) + "." + asciiName(l) + ".office@" + pick(g.rng, freemails)
		d.auth = g.authFreemail(domainOf(d.fromAddr))
		if diff == "medium" {
			d.fromName = f + " " + l
			d.fromAddr = asciiName(f) + "@" + g.orgLookalike()
			d.auth = g.authAttacker(domainOf(d.fromAddr))
		}
	default:
		d.fromName = f + " " + l
		d.fromAddr = asciiName(f) + asciiName(l) + "@" + pick(g.rng, freemails)
		d.auth = g.authFreemail(domainOf(d.fromAddr))
	}
	d.encoding = "8bit"
	return d, diff
}

func (g *gen) payrollChange() (draft, string) {
	diff := g.difficulty()
	f, l := g.person()
	d := draft{subject: g.tr("Direct deposit update", "Cambio de cuenta de nómina", "Änderung Gehaltskonto")}
	d.text = g.tr(
		"Hi,\n\nI have changed banks. Could you update my direct deposit to the new bank account below before the next payroll run? It is urgent as my old account will be closed.\n\nRouting: 021000021\nAccount: 483920175\n\nThanks,\n"+f+" "+l,
		"Hola,\n\nHe cambiado de banco. ¿Podéis actualizar mi cuenta de nómina con los nuevos datos bancarios antes del próximo pago? Es urgente porque la cuenta antigua será cancelada.\n\nIBAN: ES91 2100 0418 4502 0005 1332\n\nGracias,\n"+f+" "+l,
		"Hallo,\n\nich habe die Bank gewechselt. Bitte ändert mein Gehaltskonto vor der nächsten Abrechnung auf die neue IBAN DE89 3704 0044 0532 0130 00. Das ist dringend, das alte Konto wird gelöscht.\n\nDanke,\n"+f+" "+l)
	own := asciiName(f) + "." + asciiName(l)
	switch diff {
	case "easy":
		d.fromName = f + " " + l
		d.fromAddr = own + "@" + g.orgLookalike()
		d.replyTo = own + "@" + pick(g.rng, freemails)
		d.auth = g.authAttacker(domainOf(d.fromAddr))
	case "medium":
		d.fromName = f + " " + l + g.tr(" (Payroll)", " (Nómina)", " (Lohnbuchhaltung)")
		d.fromAddr = own + "@" + pick(g.rng, freemails)
		d.auth = g.authFreemail(domainOf(d.fromAddr))
	default:
		d.fromName = f + " " + l
		d.fromAddr = own + "@" + pick(g.rng, freemails)
		d.auth = g.authFreemail(domainOf(d.fromAddr))
	}
	d.encoding = "quoted-printable"
	return d, diff
}

// Legitimate mail.

func (g *gen) receipt() (draft, string) {
	b := pick(g.rng, brandsByLang[g.lang])
	order := fmt.Sprintf("%03d-%07d-%07d", g.rng.IntN(999), g.rng.IntN(9999999), g.rng.IntN(9999999))
	total := fmt.Sprintf("%d.%02d", 5+g.rng.IntN(300), g.rng.IntN(100))
	link := "https://www." + b.domain + "/orders/" + order
	d := draft{
		fromName: b.display, fromAddr: pick(g.rng, []string{"receipts@", "orders@", "no-reply@"}) + b.domain,
		auth:    g.authPass(b.domain),
		subject: g.tr("Your receipt for order "+order, "Su recibo del pedido "+order, "Ihre Quittung für Bestellung "+order),
	}
	body := g.tr(
		"Thank you for your purchase. Total charged: "+total+" USD. You can view your order details in your account at any time.",
		"Gracias por su compra. Importe cobrado: "+total+" EUR. Puede consultar el pedido en su cuenta cuando quiera.",
		"Vielen Dank für Ihren Einkauf. Belastet: "+total+" EUR. Die Bestelldetails finden Sie jederzeit in Ihrem Konto.")
	d.text = body + "\n\n" + link
	d.html = htmlPage("<p>"+body+"</p>", "<p>"+anchor(link, "www."+b.domain+"/orders")+"</p>")
	if g.rng.IntN(3) == 0 {
		d.attachments = []attachment{{g.tr("receipt", "recibo", "Quittung") + "-" + order + ".pdf", "application/pdf", []byte("%PDF-1.4\n% svbench receipt\n")}}
	}
	if g.rng.IntN(3) == 0 {
		g.viaESP(&d, -1)
	}
	return d, pick(g.rng, []string{"easy", "easy", "medium"})
}

func (g *gen) passwordReset() (draft, string) {
	svc := pick(g.rng, []brandInfo{{"github", "GitHub", "github.com"}, {"dropbox", "Dropbox", "dropbox.com"}, {"slack", "Slack", "slack.com"}, {"linkedin", "LinkedIn", "linkedin.com"}})
	link := "https://" + svc.domain + "/password_reset/" + g.token(20)
	d := draft{
		fromName: svc.display, fromAddr: "noreply@" + svc.domain, auth: g.authPass(svc.domain),
		subject: g.tr("Reset your "+svc.display+" password", "Restablecer tu contraseña de "+svc.display, "Passwort für "+svc.display+" zurücksetzen"),
	}
	body := g.tr(
		"We received a request to reset the password for your account. If you made this request, use the link below; it expires in 1 hour. If you did not, you can ignore this email and your password will not change.",
		"Hemos recibido una solicitud para restablecer la contraseña de tu cuenta. Si fuiste tú, usa el enlace siguiente. Si no, ignora este correo: tu contraseña no cambiará.",
		"Wir haben eine Anfrage zum Zurücksetzen Ihres Passworts erhalten. Wenn Sie das waren, nutzen Sie den folgenden Link. Wenn nicht, ignorieren Sie diese E-Mail; Ihr Passwort bleibt unverändert.")
	d.text = body + "\n\n" + link
	if g.rng.IntN(2) == 0 {
		d.html = htmlPage("<p>"+body+"</p>", "<p>"+anchor(link, g.tr("Reset password", "Restablecer contraseña", "Passwort zurücksetzen"))+"</p>")
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
	d := draft{fromName: s.display, fromAddr: "newsletter@" + reg, auth: g.authPass(reg), mailer: "Mailchimp Mailer"}
	d.subject = g.tr("This week: 5 stories on security and cloud", "Esta semana: lo más leído en tecnología", "Diese Woche: die meistgelesenen Artikel")
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
	var paras []string
	var text strings.Builder
	text.WriteString(g.tr("Here is what you missed this week:\n", "Esto es lo que te perdiste esta semana:\n", "Das haben Sie diese Woche verpasst:\n"))
	for i, l := range links {
		title := g.tr(fmt.Sprintf("Story %d: what changed in cloud security", i+1), fmt.Sprintf("Artículo %d: novedades en la nube", i+1), fmt.Sprintf("Artikel %d: Neues aus der Cloud", i+1))
		paras = append(paras, "<p>"+anchor(l, title)+"</p>")
		fmt.Fprintf(&text, "\n%s\n%s\n", title, l)
	}
	unsub := "https://www." + strings.TrimPrefix(reg, "digest.") + "/unsubscribe"
	paras = append(paras, `<p style="font-size:10px">`+anchor(unsub, g.tr("Unsubscribe", "Darse de baja", "Abmelden"))+`</p>`,
		`<img src="data:image/png;base64,`+strings.Repeat("iVBORw0KGgo", 40)+`">`)
	d.text = text.String()
	d.html = htmlPage(paras...)
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

func (g *gen) internalNotice(urgent bool) (draft, string) {
	dept := pick(g.rng, []string{"it", "facilities", "hr", "security"})
	d := draft{fromName: g.tr("IT Operations", "Operaciones TI", "IT-Betrieb"), fromAddr: dept + "@" + g.org}
	// Mail that never leaves the organisation's servers is not checked by
	// its inbound gateway: half the internal notices carry no results, a
	// quarter arrive through a cloud tenant that stamps an aligned pass, a
	// quarter through the all-staff list.
	route := g.rng.IntN(4)
	if route == 1 {
		d.auth = g.authPass(g.org)
	}
	routed := func(diff string) (draft, string) {
		if route == 2 {
			g.viaList(&d, g.tr("all-staff", "todos", "alle"))
		}
		return d, diff
	}
	intranet := "https://intranet." + g.org
	if !urgent {
		d.subject = g.tr("Office closed on Friday", "Oficina cerrada el viernes", "Büro am Freitag geschlossen")
		d.text = g.tr(
			"Hi all,\n\nA reminder that the office will be closed on Friday for maintenance. Please submit your timesheets by Thursday on "+intranet+"/timesheets.\n\nThanks,\nOperations",
			"Hola a todos,\n\nos recordamos que la oficina estará cerrada el viernes por mantenimiento. Enviad las hojas de horas antes del jueves en "+intranet+"/horas.\n\nGracias,\nOperaciones",
			"Hallo zusammen,\n\ndas Büro bleibt am Freitag wegen Wartung geschlossen. Bitte tragt eure Stunden bis Donnerstag unter "+intranet+"/zeiten ein.\n\nDanke\nBetrieb")
		return routed("easy")
	}
	d.subject = g.tr("URGENT: mandatory security update tonight", "URGENTE: actualización de seguridad obligatoria esta noche", "DRINGEND: verpflichtendes Sicherheitsupdate heute Nacht")
	login := intranet + "/login"
	d.text = g.tr(
		"Hi all,\n\nThis is urgent: a critical VPN update will be installed tonight. Please restart your laptop immediately after 6 pm and sign in to the intranet with your usual company account to confirm the update: "+login+"\n\nDo not reply to this email; questions go to the service desk on extension 4400.\n\nIT Operations",
		"Hola a todos,\n\nEs urgente: esta noche se instalará una actualización crítica de la VPN. Reiniciad el portátil inmediatamente después de las 18:00 y entrad en la intranet con vuestra cuenta habitual: "+login+"\n\nDudas a la extensión 4400.\n\nOperaciones TI",
		"Hallo zusammen,\n\ndringend: Heute Nacht wird ein kritisches VPN-Update installiert. Bitte startet euren Laptop nach 18 Uhr sofort neu und meldet euch wie gewohnt im Intranet an: "+login+"\n\nFragen an den Servicedesk, Durchwahl 4400.\n\nIT-Betrieb")
	return routed("hard")
}

func (g *gen) securityAlert() (draft, string) {
	svc := pick(g.rng, []brandInfo{{"google", "Google", "google.com"}, {"microsoft", "Microsoft account team", "microsoft.com"}, {"apple", "Apple", "apple.com"}})
	sender := map[string]string{"google.com": "no-reply@accounts.google.com", "microsoft.com": "account-security-noreply@accountprotection.microsoft.com", "apple.com": "noreply@id.apple.com"}[svc.domain]
	d := draft{fromName: svc.display, fromAddr: sender, auth: g.authPass(domainOf(sender))}
	d.subject = g.tr("New sign-in to your account", "Nuevo inicio de sesión en tu cuenta", "Neue Anmeldung bei Ihrem Konto")
	link := "https://myaccount." + svc.domain + "/notifications"
	if svc.domain != "google.com" {
		link = "https://account." + svc.domain + "/security"
	}
	body := g.tr(
		"We noticed a new sign-in to your account from Firefox on Windows. If this was you, you don't need to do anything. If not, review your recent activity and secure your account.",
		"Hemos detectado un nuevo inicio de sesión en tu cuenta desde Firefox en Windows. Si fuiste tú, no tienes que hacer nada. Si no, revisa la actividad reciente.",
		"Wir haben eine neue Anmeldung bei Ihrem Konto von Firefox unter Windows festgestellt. Wenn Sie das waren, müssen Sie nichts tun. Andernfalls prüfen Sie die letzten Aktivitäten.")
	d.text = body + "\n\n" + link
	d.html = htmlPage("<p>"+body+"</p>", "<p>"+anchor(link, g.tr("Check activity", "Revisar actividad", "Aktivität prüfen"))+"</p>")
	return d, "hard"
}
